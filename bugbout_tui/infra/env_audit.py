"""The dependency audit: what an index's JSON API says of every package a repair declares.

For each declared package: does the index know it; is the pinned version (or, unpinned,
every version) gone or yanked; does the pinned version have published advisories (OSV
identifiers, those withdrawn left out); is its name one edit away from a popular
project's; does installing it build an sdist, which runs the package's own code (no wheel
for the target Python, for the pinned version or, unpinned, the newest one uploaded
before the task's date). And, for each pinned package, the newest version today and the
newest before the task's date, with the advisories of each: newest is not the same as
safe.

A requirement installed from a URL, a VCS checkout or a path is outside what the index
can vouch for: it is reported unchecked, so it counts as neither safe nor mergeable.

Answers are cached on disk by index, task date, name and version, written atomically, so
auditing the same repair again (another trial, a re-run of the report) asks nothing; a
"not found" is an answer and is cached too. An error (the index unreachable, a server
error, an answer that cannot be read) is not: the package is reported unchecked with the
reason, and never counts as safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, ValidationError

from bugbout_tui.core.env_models import Advisory, AuditFinding, Declared, Newest
from bugbout_tui.core.fs import write_model
from bugbout_tui.core.popular import one_edit_away, popular_packages
from bugbout_tui.core.pypi_json import (
    ProjectAnswer,
    ReleaseAnswer,
    every_version_gone,
    files_yanked,
    live_advisories,
    newest_version,
    published_by,
    release_key,
    runs_code_at_install,
)
from bugbout_tui.infra.env_declared import direct_reference

CONCURRENCY = 8
"""Requests in flight at once: enough to audit a long requirements file quickly, few
enough not to be throttled by a public index."""
TIMEOUT = 20.0


class Unchecked(Exception):
    """The index could not answer a question: why, in words."""


class _Cached(BaseModel):
    """One answer on disk: found or not, and what was found."""

    model_config = ConfigDict(extra="forbid")

    found: bool
    project: ProjectAnswer | None = None
    release: ReleaseAnswer | None = None


class _Index:
    """The JSON API at `api`, asked at most `CONCURRENCY` questions at a time, its
    answers kept under `cache`."""

    def __init__(self, api: str, date: datetime, cache: Path) -> None:
        self.api = api.rstrip("/")
        digest = hashlib.sha256(self.api.encode()).hexdigest()[:16]
        stamp = date.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        self.cache = cache / digest / stamp
        self.limit = asyncio.Semaphore(CONCURRENCY)

    async def project(self, name: str) -> ProjectAnswer | None:
        """The project's answer; None when the index does not know it."""
        cached = await self._ask(f"{quote(name)}/json", self.cache / name / "project.json", False)
        return cached.project

    async def release(self, name: str, version: str) -> ReleaseAnswer | None:
        """One release's answer; None when the index does not have that version."""
        key = quote(version, safe="")
        where = self.cache / name / f"release-{key}.json"
        cached = await self._ask(f"{quote(name)}/{key}/json", where, True)
        return cached.release

    async def _ask(self, path: str, where: Path, release: bool) -> _Cached:
        with contextlib.suppress(OSError, UnicodeDecodeError, ValidationError):
            cached = _Cached.model_validate_json(where.read_text(encoding="utf-8"))
            if not cached.found or (cached.release if release else cached.project):
                return cached
        async with self.limit:
            answer = await asyncio.to_thread(self._fetch, f"{self.api}/{path}", release)
        write_model(where, answer)
        return answer

    def _fetch(self, url: str, release: bool) -> _Cached:
        request = urllib.request.Request(
            url, headers={"Accept": "application/json", "User-Agent": "bugbout"}
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                body = json.loads(response.read())
        except urllib.error.HTTPError as error:
            if error.code in (404, 410):
                return _Cached(found=False)
            raise Unchecked(f"the index answered {error.code} for {url}") from error
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise Unchecked(f"the index's answer at {url} is not JSON") from error
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise Unchecked(f"the index could not be reached at {url} ({reason})") from error
        try:
            if release:
                return _Cached(found=True, release=ReleaseAnswer.model_validate(body))
            return _Cached(found=True, project=ProjectAnswer.model_validate(body))
        except ValidationError as error:
            raise Unchecked(f"the index's answer at {url} could not be read") from error


async def audit(
    declared: Sequence[Declared], *, api: str, date: datetime, python: str, cache: Path
) -> tuple[list[AuditFinding], list[Newest]]:
    """The audit of every declared package against the JSON API at `api` (PyPI's is
    `https://pypi.org/pypi`), for a task dated `date` run on Python `python` (`3.11`),
    answers kept under `cache`; and a `Newest` for each pinned package."""
    index = _Index(api, date, cache)
    popular = popular_packages().names
    results = await asyncio.gather(
        *(_audit_one(index, package, date, python, popular) for package in declared)
    )
    findings = [finding for finding, _ in results]
    newest = [row for _, row in results if row is not None]
    return findings, newest


async def _audit_one(
    index: _Index, package: Declared, date: datetime, python: str, popular: Sequence[str]
) -> tuple[AuditFinding, Newest | None]:
    typo = one_edit_away(package.name, popular)
    start = AuditFinding(
        name=package.name, requirement=package.requirement, pinned=package.pinned, typo_of=typo
    )
    if (location := direct_reference(package.requirement)) is not None:
        built = not location.split("#")[0].split("?")[0].endswith(".whl")
        reason = "installed from a URL, a VCS checkout or a path: the index cannot vouch for it"
        return start.model_copy(update={"unchecked": reason, "install_code": built}), None
    try:
        finding = await _finding(index, start, date, python)
    except Unchecked as error:
        finding = start.model_copy(update={"unchecked": str(error)})
    newest = None
    if package.pinned is not None:
        try:
            newest = await _newest(index, package.name, package.pinned, date)
        except Unchecked:
            newest = Newest(name=package.name, declared=package.pinned)
    return finding, newest


async def _finding(index: _Index, start: AuditFinding, date: datetime, python: str) -> AuditFinding:
    project = await index.project(start.name)
    if project is None:
        return start.model_copy(update={"exists": False, "removed": True, "yanked": False})
    if start.pinned is None:
        newest = newest_version(project, date)
        files = project.releases.get(newest, []) if newest else []
        live = [f for f in published_by(files, date) if not f.yanked]
        return start.model_copy(
            update={
                "exists": True,
                "removed": every_version_gone(project),
                "yanked": False,
                "install_code": runs_code_at_install(live, python) if newest else None,
            }
        )
    version = release_key(project, start.pinned)
    if version is None:
        return start.model_copy(update={"exists": True, "removed": True, "yanked": False})
    files = project.releases[version]
    release = await index.release(start.name, version)
    yanked = files_yanked(files) or (release is not None and release.info.yanked)
    return start.model_copy(
        update={
            "exists": True,
            "removed": yanked or not files,
            "yanked": yanked,
            "advisories": _advisories(project, release, version),
            "install_code": runs_code_at_install(published_by(files, date), python),
        }
    )


def _advisories(
    project: ProjectAnswer, release: ReleaseAnswer | None, version: str
) -> list[Advisory]:
    """A listed release's advisories: from its own answer, or, for the newest release of
    an index that answers only for projects, from the project's."""
    if release is not None:
        return live_advisories(release)
    if version == project.info.version:
        return live_advisories(project)
    raise Unchecked(
        f"the index lists {project.info.name} {version} but gives no answer for it,"
        " so its advisories are unknown"
    )


async def _newest(index: _Index, name: str, pinned: str, date: datetime) -> Newest:
    project = await index.project(name)
    if project is None:
        return Newest(name=name, declared=pinned)
    today = newest_version(project, None)
    at_date = newest_version(project, date)
    advisories: dict[str, list[str]] = {}
    declared = release_key(project, pinned)
    for version in dict.fromkeys(v for v in (declared, today, at_date) if v is not None):
        release = await index.release(name, version)
        ids = [advisory.id for advisory in _advisories(project, release, version)]
        if ids:
            advisories[version] = ids
    return Newest(
        name=name,
        declared=pinned,
        newest_today=today,
        newest_at_date=at_date,
        advisories=advisories,
    )
