"""The audit's pure parts: names one typo away, the safe-install share, the merge gate's
reasons, the popular list shipped, and what is read from the index's JSON answers."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from bugbout_tui.core.env_models import Advisory, AuditFinding
from bugbout_tui.core.popular import popular_packages
from bugbout_tui.core.pypi_json import (
    ProjectAnswer,
    PypiFile,
    ReleaseAnswer,
    every_version_gone,
    live_advisories,
    newest_version,
    runs_code_at_install,
    wheel_fits,
)
from bugbout_tui.rules.env_audit import merge_blockers, one_edit_away, safe_share

POPULAR = ["requests", "numpy", "python-dateutil", "six", "sip"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("reqests", "requests"),  # a letter left out
        ("requestss", "requests"),  # one added
        ("requezts", "requests"),  # one changed
        ("reqeusts", "requests"),  # two neighbours swapped
        ("Python_Dateutl", "python-dateutil"),  # compared as PEP 503 names
        ("nmupy", "numpy"),
        ("requests", None),  # popular itself
        ("Requests", None),
        ("six", None),  # popular, though one edit from another popular name
        ("rqeusts", None),  # two edits
        ("flask", None),
        ("", None),
    ],
)
def test_one_edit_away(name: str, expected: str | None) -> None:
    assert one_edit_away(name, POPULAR) == expected


def finding(**fields: object) -> AuditFinding:
    base: dict[str, object] = {
        "name": "pkg",
        "requirement": "pkg==1.0",
        "pinned": "1.0",
        "exists": True,
        "removed": False,
        "yanked": False,
    }
    return AuditFinding.model_validate(base | fields)


ADVISED = Advisory(id="PYSEC-2023-1", aliases=["CVE-2023-9"], fixed_in=["1.1"])


def test_safe_share_counts_only_checked_existing_pinned_clean_packages() -> None:
    findings = [
        finding(),
        finding(name="loose", pinned=None, requirement="loose>=1"),
        finding(name="bad", advisories=[ADVISED]),
        finding(name="gone", removed=True, yanked=True),
        finding(name="dark", exists=None, removed=None, unchecked="unreachable"),
    ]
    assert safe_share(findings) == pytest.approx(1 / 5)
    assert safe_share([finding()]) == 1.0
    assert safe_share([]) is None


def test_merge_blockers_say_why_in_words() -> None:
    findings = [
        finding(),
        finding(name="loose", pinned=None, requirement="loose"),
        finding(name="bad", advisories=[ADVISED]),
        finding(name="yank", removed=True, yanked=True),
        finding(name="gone", removed=True),
        finding(name="nowhere", pinned=None, exists=False, removed=True),
        finding(name="dark", exists=None, removed=None, unchecked="the index answered 503"),
    ]
    assert merge_blockers(findings) == [
        "bad==1.0 has published advisories: PYSEC-2023-1 (CVE-2023-9), fixed in 1.1",
        "yank==1.0 was yanked",
        "gone==1.0 is no longer on the index",
        "nowhere is not on the index (taken down, or never published)",
        "dark==1.0 could not be checked: the index answered 503",
    ]
    assert merge_blockers([finding()]) == []


def test_the_popular_list_ships_with_where_and_when_it_was_taken() -> None:
    shipped = popular_packages()
    assert shipped.source and isinstance(shipped.taken, date)
    assert len(shipped.names) >= 300
    assert len(set(shipped.names)) == len(shipped.names)
    assert {"requests", "numpy", "typing-extensions"} <= set(shipped.names)
    assert one_edit_away("reqeusts", shipped.names) == "requests"


def when(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def file(name: str, year: int, *, yanked: bool = False, python: str | None = None) -> PypiFile:
    kind = "bdist_wheel" if name.endswith(".whl") else "sdist"
    return PypiFile(
        filename=name,
        packagetype=kind,
        upload_time_iso_8601=when(year),
        yanked=yanked,
        requires_python=python,
    )


PROJECT = ProjectAnswer.model_validate(
    {
        "info": {"name": "pkg", "version": "2.0"},
        "releases": {
            "1.0": [file("pkg-1.0.tar.gz", 2019).model_dump()],
            "1.5": [file("pkg-1.5-py3-none-any.whl", 2020, yanked=True).model_dump()],
            "2.0": [file("pkg-2.0-py3-none-any.whl", 2022).model_dump()],
            "3.0rc1": [file("pkg-3.0rc1-py3-none-any.whl", 2023).model_dump()],
            "not a version": [file("pkg-x.tar.gz", 2018).model_dump()],
        },
    }
)


def test_newest_version_before_a_date_skips_yanked_and_pre_releases() -> None:
    assert newest_version(PROJECT, None) == "2.0"
    assert newest_version(PROJECT, when(2021)) == "1.0", "1.5 is yanked"
    assert newest_version(PROJECT, when(2019)) is None
    only_pre = PROJECT.model_copy(update={"releases": {"3.0rc1": PROJECT.releases["3.0rc1"]}})
    assert newest_version(only_pre, None) == "3.0rc1"
    assert not every_version_gone(PROJECT)
    yanked = PROJECT.model_copy(update={"releases": {"1.5": PROJECT.releases["1.5"]}})
    assert every_version_gone(yanked)


def test_install_runs_code_when_no_wheel_fits_the_target() -> None:
    sdist = file("pkg-1.0.tar.gz", 2019)
    pure = file("pkg-1.0-py3-none-any.whl", 2019)
    old = file("pkg-1.0-cp27-cp27mu-manylinux1_x86_64.whl", 2019)
    assert runs_code_at_install([sdist, old], "3.11") is True
    assert runs_code_at_install([sdist, pure], "3.11") is False
    assert runs_code_at_install([old], "3.11") is False, "nothing to build: it cannot install"
    assert runs_code_at_install([], "3.11") is None
    assert wheel_fits(pure, "3.11")
    assert not wheel_fits(file("pkg-1.0-py3-none-any.whl", 2019, python=">=3.12"), "3.11")
    assert not wheel_fits(file("pkg-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", 2019), "3.11")


def test_withdrawn_advisories_no_longer_apply() -> None:
    release = ReleaseAnswer.model_validate(
        {
            "info": {"name": "pkg", "version": "1.0", "yanked": False, "extra": "ignored"},
            "urls": [],
            "vulnerabilities": [
                {"id": "PYSEC-1", "aliases": ["CVE-1"], "fixed_in": ["1.1"], "withdrawn": None},
                {"id": "GHSA-2", "withdrawn": "2024-01-01T00:00:00Z"},
            ],
        }
    )
    assert live_advisories(release) == [
        Advisory(id="PYSEC-1", aliases=["CVE-1"], fixed_in=["1.1"], summary=None)
    ]
