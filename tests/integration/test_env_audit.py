"""The dependency audit against a real index on 127.0.0.1: yanked and removed releases,
advisories (one withdrawn), an sdist-only version, a typo of a popular name, answers
cached so a second audit asks nothing, and an index that cannot be reached."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bugbout_tui.core.env_models import Advisory, Declared, Newest
from bugbout_tui.infra.env_audit import audit
from bugbout_tui.infra.package_index import PackageIndex, build_sdist, build_wheel
from bugbout_tui.rules.env_audit import merge_blockers, safe_share

DATE = datetime(2023, 1, 1, tzinfo=UTC)
CODE = {"pkg/__init__.py": ""}


def when(year: int) -> datetime:
    return datetime(year, 6, 1, tzinfo=UTC)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[PackageIndex]:
    files = tmp_path / "dist"
    with PackageIndex() as served:
        for version, year in (("1.0", 2020), ("2.0", 2022), ("2.1", 2024)):
            served.publish(build_wheel(files, "good", version, CODE), uploaded=when(year))
        served.advise("good", "1.0", id="PYSEC-2020-9", withdrawn=when(2021))
        served.advise("good", "2.1", id="GHSA-new", summary="a regression")
        served.publish(build_wheel(files, "yanky", "1.0", CODE), uploaded=when(2020))
        served.publish(
            build_wheel(files, "yanky", "1.1", CODE), uploaded=when(2021), yanked="broken"
        )
        served.publish(build_wheel(files, "vuln", "1.0", CODE), uploaded=when(2020))
        served.advise("vuln", "1.0", id="PYSEC-2022-1", aliases=["CVE-2022-1"], fixed_in=["1.1"])
        served.advise("vuln", "1.0", id="GHSA-gone", withdrawn=when(2022))
        served.publish(build_sdist(files, "built", "1.0", CODE), uploaded=when(2020))
        served.publish(
            build_wheel(files, "built", "1.0", CODE, tag="cp27-cp27mu-manylinux1_x86_64"),
            uploaded=when(2020),
        )
        served.publish(build_wheel(files, "built", "2.0", CODE), uploaded=when(2024))
        served.publish(build_wheel(files, "takendown", "1.0", CODE), uploaded=when(2020))
        served.remove("takendown")
        served.publish(build_wheel(files, "reqeusts", "1.0", CODE), uploaded=when(2020))
        yield served


def declared(requirement: str, name: str, pinned: str | None = None) -> Declared:
    return Declared(name=name, requirement=requirement, pinned=pinned, source="requirements.txt")


DECLARED = [
    declared("good==1.0", "good", "1.0"),
    declared("yanky==1.1", "yanky", "1.1"),
    declared("vuln==1.0", "vuln", "1.0"),
    declared("built==1.0", "built", "1.0"),
    declared("built", "built"),
    declared("takendown==1.0", "takendown", "1.0"),
    declared("reqeusts==1.0", "reqeusts", "1.0"),
    declared("good==9.9", "good", "9.9"),
    declared("thing @ https://example.invalid/thing-1.0.tar.gz", "thing"),
]


async def test_the_audit_of_each_kind_of_declared_package(
    index: PackageIndex, tmp_path: Path
) -> None:
    findings, newest = await audit(
        DECLARED, api=index.api_url, date=DATE, python="3.11", cache=tmp_path / "cache"
    )
    good, yanky, vuln, built, loose, takendown, typo, missing, direct = findings
    assert good.safe and good.advisories == [], "a withdrawn advisory does not count"
    assert good.install_code is False and good.typo_of is None
    assert (yanky.exists, yanky.yanked, yanky.removed) == (True, True, True)
    assert vuln.advisories == [
        Advisory(id="PYSEC-2022-1", aliases=["CVE-2022-1"], fixed_in=["1.1"], summary=None)
    ]
    assert not vuln.safe and vuln.blocks_merge
    assert built.install_code is True, "only an sdist and a wheel for Python 2.7"
    assert built.safe, "building at install is reported, not counted against safety"
    assert loose.install_code is True, "unpinned: the newest before the date is 1.0"
    assert not loose.safe, "unpinned"
    assert loose.typo_of == "build" and loose.blocks_merge, "one edit from the popular build"
    assert (takendown.exists, takendown.removed) == (False, True)
    assert (typo.exists, typo.typo_of) == (True, "requests")
    assert typo.blocks_merge, "a squat that installs is what the merge gate stops"
    assert (missing.exists, missing.removed, missing.yanked) == (True, True, False)
    assert direct.unchecked is not None and direct.install_code is True
    assert direct.exists is None
    assert safe_share(findings) == pytest.approx(3 / 9)
    assert merge_blockers(findings)[0] == "yanky==1.1 was yanked"

    by_name = {(row.name, row.declared): row for row in newest}
    assert len(newest) == 7, "one row per pinned package"
    assert by_name["good", "1.0"] == Newest(
        name="good",
        declared="1.0",
        newest_today="2.1",
        newest_at_date="2.0",
        advisories={"2.1": ["GHSA-new"]},
    )
    assert by_name["vuln", "1.0"].advisories == {"1.0": ["PYSEC-2022-1"]}
    assert by_name["yanky", "1.1"].newest_today == "1.0"
    assert by_name["takendown", "1.0"] == Newest(name="takendown", declared="1.0")


async def test_a_second_audit_asks_the_index_nothing(index: PackageIndex, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = await audit(DECLARED, api=index.api_url, date=DATE, python="3.11", cache=cache)
    asked = len(index.requests)
    assert asked > 0
    again = await audit(DECLARED, api=index.api_url, date=DATE, python="3.11", cache=cache)
    assert len(index.requests) == asked
    assert again == first
    await audit(DECLARED[:1], api=index.api_url, date=when(2024), python="3.11", cache=cache)
    assert len(index.requests) > asked, "another date is another question"


@pytest.fixture
def unreachable() -> str:
    """The JSON API's address on a port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/pypi"


async def test_an_unreachable_index_leaves_every_package_unchecked(
    unreachable: str, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    findings, newest = await audit(
        DECLARED[:3], api=unreachable, date=DATE, python="3.11", cache=cache
    )
    assert all(f.unchecked and "could not be reached" in f.unchecked for f in findings)
    assert all(not f.safe and f.blocks_merge and f.exists is None for f in findings)
    assert safe_share(findings) == 0.0
    assert newest == [Newest(name=d.name, declared=d.pinned or "") for d in DECLARED[:3]]
    assert not [path for path in cache.rglob("*") if path.is_file()], "errors are not cached"


PROJECT_ONLY = {
    "info": {"name": "terse", "version": "2.0"},
    "releases": {
        version: [{"filename": f"terse-{version}-py3-none-any.whl", "packagetype": "bdist_wheel"}]
        for version in ("1.0", "2.0")
    },
    "vulnerabilities": [{"id": "PYSEC-2.0", "withdrawn": None}],
}


class Failing(BaseHTTPRequestHandler):
    """An index in trouble: a server error for one project, garbage for another, and one
    project answered for as a whole but not release by release."""

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        if "/broken/" in self.path:
            self.send_error(503)
            return
        if self.path.startswith("/pypi/terse/") and self.path != "/pypi/terse/json":
            self.send_error(404)
            return
        if "/garbled/" in self.path:
            body = b"<html>not json</html>"
        elif "/odd/" in self.path:
            body = b'{"info": 1}'
        else:
            body = json.dumps(PROJECT_ONLY).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


async def test_server_errors_and_unreadable_answers_leave_a_package_unchecked(
    tmp_path: Path,
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Failing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api = f"http://127.0.0.1:{server.server_address[1]}/pypi"
        packages = [declared(f"{name}==1.0", name, "1.0") for name in ("broken", "garbled", "odd")]
        packages += [declared("Terse==2", "terse", "2"), declared("terse==1.0", "terse", "1.0")]
        findings, _ = await audit(
            packages, api=api, date=DATE, python="3.11", cache=tmp_path / "cache"
        )
    finally:
        server.shutdown()
        server.server_close()
    broken, garbled, odd, newest, older = findings
    assert "answered 503" in (broken.unchecked or "")
    assert "not JSON" in (garbled.unchecked or "")
    assert "could not be read" in (odd.unchecked or "")
    assert newest.unchecked is None, "the project's answer gives its newest's advisories"
    assert [advisory.id for advisory in newest.advisories] == ["PYSEC-2.0"]
    assert (newest.exists, newest.removed) == (True, False), "`==2` pins the listed 2.0"
    assert "advisories are unknown" in (older.unchecked or "")
    assert safe_share(findings) == 0.0
