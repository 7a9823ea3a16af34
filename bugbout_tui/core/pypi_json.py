"""What an index's JSON API (PyPI's `/pypi/<name>/json` and `/pypi/<name>/<version>/json`)
says of a project and a release, read into records, and what the dependency audit reads
from them: the newest version at a date, whether a release is gone, its advisories, and
whether installing it builds an sdist.

Only the fields the audit reads are kept, so a cached answer stays small (a popular
project's full answer runs to megabytes). The answers come from the network: anything
else in them is ignored, and a missing field the audit needs fails validation, which the
audit reports as a package it could not check.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field

from bugbout_tui.core.env_models import Advisory


class _Answer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class PypiFile(_Answer):
    filename: str
    packagetype: str
    """`bdist_wheel` or `sdist` (other kinds, eggs among them, are never installed)."""
    upload_time_iso_8601: datetime | None = None
    yanked: bool = False
    requires_python: str | None = None


class PypiVulnerability(_Answer):
    id: str
    aliases: list[str] = Field(default_factory=list)
    summary: str | None = None
    fixed_in: list[str] = Field(default_factory=list)
    withdrawn: str | None = None
    """When its authors took it back; a withdrawn advisory no longer applies."""


class ProjectInfo(_Answer):
    name: str
    version: str | None = None


class ProjectAnswer(_Answer):
    """`/pypi/<name>/json`: every release's files, and the advisories of the release
    `info.version` names."""

    info: ProjectInfo
    releases: dict[str, list[PypiFile]] = Field(default_factory=dict)
    vulnerabilities: list[PypiVulnerability] = Field(default_factory=list)


class ReleaseInfo(_Answer):
    name: str
    version: str
    yanked: bool = False
    yanked_reason: str | None = None


class ReleaseAnswer(_Answer):
    """`/pypi/<name>/<version>/json`: one release's files and its advisories."""

    info: ReleaseInfo
    urls: list[PypiFile] = Field(default_factory=list)
    vulnerabilities: list[PypiVulnerability] = Field(default_factory=list)


def live_advisories(answer: ReleaseAnswer | ProjectAnswer) -> list[Advisory]:
    """The advisories of a release (of a project's newest, for a project's answer),
    those withdrawn left out."""
    return [
        Advisory(id=v.id, aliases=v.aliases, fixed_in=v.fixed_in, summary=v.summary)
        for v in answer.vulnerabilities
        if v.withdrawn is None
    ]


def release_key(project: ProjectAnswer, version: str) -> str | None:
    """How the index spells `version` among the project's releases (`==2.31` pins
    2.31.0), None when it has no such release."""
    if version in project.releases:
        return version
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    for text in project.releases:
        try:
            if Version(text) == wanted:
                return text
        except InvalidVersion:
            continue
    return None


def files_yanked(files: Sequence[PypiFile]) -> bool:
    """A release yanked: every one of its files is (PyPI yanks whole releases)."""
    return bool(files) and all(f.yanked for f in files)


def published_by(files: Sequence[PypiFile], date: datetime | None) -> list[PypiFile]:
    """The files uploaded before `date` (all of them when None, or when the index gives
    no upload time: a date cannot hold those back)."""
    if date is None:
        return list(files)
    return [f for f in files if f.upload_time_iso_8601 is None or f.upload_time_iso_8601 < date]


def newest_version(project: ProjectAnswer, date: datetime | None) -> str | None:
    """The newest release with a file not yanked, uploaded before `date` (None: today);
    final releases first, a pre-release only when there is nothing else, as installers
    choose."""
    standing: dict[Version, str] = {}
    for text, files in project.releases.items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if any(not f.yanked for f in published_by(files, date)):
            standing[version] = text
    finals = [v for v in standing if not v.is_prerelease]
    chosen = max(finals or standing, default=None)
    return None if chosen is None else standing[chosen]


def every_version_gone(project: ProjectAnswer) -> bool:
    """No release has a file left that is not yanked."""
    return not any(not f.yanked for files in project.releases.values() for f in files)


def runs_code_at_install(files: Sequence[PypiFile], python: str) -> bool | None:
    """Whether installing a release on Python `python` (`3.11`) builds its sdist, which
    runs the package's own code: no wheel fits and there is an sdist. None when the
    release has no file at all."""
    if not files:
        return None
    if any(f.packagetype == "bdist_wheel" and wheel_fits(f, python) for f in files):
        return False
    return any(f.packagetype == "sdist" for f in files)


def wheel_fits(file: PypiFile, python: str) -> bool:
    """A wheel this machine can install on Python `python`: one of its tags is the
    interpreter's, and its `Requires-Python` admits it."""
    try:
        _, _, _, tags = parse_wheel_filename(file.filename)
    except InvalidWheelFilename:
        return False
    if file.requires_python:
        try:
            if not SpecifierSet(file.requires_python).contains(python, prereleases=True):
                return False
        except InvalidSpecifier:
            pass
    return not tags.isdisjoint(target_tags(python))


@cache
def target_tags(python: str) -> frozenset[Tag]:
    """The wheel tags CPython `python` accepts on this machine's platform."""
    major, minor = (int(part) for part in python.split(".")[:2])
    return frozenset(
        [*cpython_tags(python_version=(major, minor)), *compatible_tags((major, minor))]
    )
