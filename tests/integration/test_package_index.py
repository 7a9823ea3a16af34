"""The local package index: what uv installs from it (a yanked release passed over, an
sdist built with its own backend, a wheel for another interpreter ignored) and what its
stand-in for PyPI's JSON API answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bugbout_tui.infra.package_index import PackageIndex, build_sdist, build_wheel

OLD = datetime(2020, 1, 1, tzinfo=UTC)
NEW = datetime(2021, 6, 1, tzinfo=UTC)


def get(url: str) -> Any:
    with urllib.request.urlopen(url) as answer:
        return json.load(answer)


@pytest.fixture
def index(tmp_path: Path) -> PackageIndex:
    files = tmp_path / "dist"
    served = PackageIndex()
    served.publish(
        build_sdist(files, "Tiny.Thing", "1.0", {"tiny_thing/__init__.py": "X = 1\n"}), uploaded=OLD
    )
    served.publish(
        build_wheel(
            files,
            "tiny-thing",
            "1.0",
            {"tiny_thing/__init__.py": "X = 1\n"},
            tag="cp27-cp27mu-manylinux1_x86_64",
        ),
        uploaded=OLD,
    )
    served.publish(
        build_wheel(files, "tiny-thing", "2.0", {"tiny_thing/__init__.py": "X = 2\n"}),
        uploaded=NEW,
        yanked="broke the build",
    )
    served.advise(
        "tiny_thing",
        "1.0",
        id="PYSEC-2020-1",
        aliases=["CVE-2020-1"],
        fixed_in=["1.1"],
        summary="reads files it should not",
    )
    return served


def test_uv_passes_over_the_yanked_release_and_builds_the_sdist(
    index: PackageIndex, tmp_path: Path
) -> None:
    with index:
        env = dict(
            os.environ,
            UV_DEFAULT_INDEX=index.url,
            UV_CACHE_DIR=str(tmp_path / "cache"),
            UV_PYTHON_DOWNLOADS="never",
        )
        env.pop("UV_INDEX_URL", None)
        env.pop("UV_EXTRA_INDEX_URL", None)
        venv = tmp_path / "venv"
        subprocess.run(
            ["uv", "venv", "-q", str(venv), "--python", sys.executable], env=env, check=True
        )
        install = subprocess.run(
            ["uv", "pip", "install", "--python", str(venv / "bin" / "python"), "tiny-thing"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    assert install.returncode == 0, install.stderr
    assert "Building tiny-thing==1.0" in install.stderr
    ran = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import tiny_thing; print(tiny_thing.X)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout.strip() == "1"


def test_the_json_api_has_pypis_shape(index: PackageIndex) -> None:
    with index:
        project = get(f"{index.api_url}/Tiny.Thing/json")
        release = get(f"{index.api_url}/tiny-thing/2.0/json")
        advised = get(f"{index.api_url}/tiny-thing/1.0/json")
        simple = get(f"{index.url}/tiny-thing")
    assert project["info"] == {"name": "tiny-thing", "version": "1.0"}
    assert list(project["releases"]) == ["1.0", "2.0"]
    [sdist, wheel] = project["releases"]["1.0"]
    assert (sdist["packagetype"], wheel["packagetype"]) == ("sdist", "bdist_wheel")
    assert sdist["upload_time_iso_8601"] == "2020-01-01T00:00:00.000000Z"
    assert release["info"]["yanked"] is True
    assert release["info"]["yanked_reason"] == "broke the build"
    assert release["vulnerabilities"] == []
    [vulnerability] = advised["vulnerabilities"]
    assert vulnerability["id"] == "PYSEC-2020-1"
    assert vulnerability["aliases"] == ["CVE-2020-1"]
    assert vulnerability["fixed_in"] == ["1.1"]
    assert vulnerability["withdrawn"] is None
    assert project["vulnerabilities"] == advised["vulnerabilities"]
    assert [f.get("yanked") for f in simple["files"]] == [None, None, "broke the build"]


def test_a_removed_project_and_an_unknown_version_are_not_found(index: PackageIndex) -> None:
    with index:
        with pytest.raises(urllib.error.HTTPError) as unknown:
            get(f"{index.api_url}/tiny-thing/9.9/json")
        assert unknown.value.code == 404
        index.remove("Tiny_Thing")
        for url in (
            f"{index.api_url}/tiny-thing/json",
            f"{index.api_url}/tiny-thing/1.0/json",
            f"{index.url}/tiny-thing",
            f"{index.api_url}/other/json",
        ):
            with pytest.raises(urllib.error.HTTPError) as raised:
                get(url)
            assert raised.value.code == 404
