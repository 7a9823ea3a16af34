"""What a dated environment builds, it builds with the build tools of the task's date.

The index holds a build backend, `oldback`, at 1.0 ("uploaded" in 2020) and 2.0 (2023).
Every build it makes leaves its version behind twice: in the metadata, as a requirement
on `stamp-<project>==<its version>` (so a resolution's pins show which backend gave the
dependencies), and in the wheel, as `Generator: oldback <its version>` (so an installed
package shows which backend built it). `legacy` 1.0 (2020) is an sdist built with
`oldback`, and the project `geom` is built with it too, to learn its dynamic
dependencies. A task of 2021 must see oldback 1.0 everywhere. `brittle` 1.0 (2020), an
sdist that asks for an `oldback` that never existed, cannot be built at all: the ladder
lifts it to 1.1, a wheel of 2022.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from gitrepo import GitRepo
from projects import write_issues

from bugbout_tui.core.models import OracleSet
from bugbout_tui.engine.bout import Bout
from bugbout_tui.infra.package_index import LONG_AGO, PackageIndex, build_sdist, build_wheel

pytestmark = pytest.mark.usefixtures("home")

BACKEND = '''"""A build backend that says which version of it made each build."""

import base64
import csv
import hashlib
import io
import tomllib
import zipfile
from pathlib import Path

VERSION = "{version}"
SKIP = {{"PKG-INFO", "pyproject.toml", "deps.txt"}}


def _project():
    if Path("PKG-INFO").exists():
        lines = Path("PKG-INFO").read_text().splitlines()
        fields = dict(line.split(": ", 1) for line in lines if ": " in line)
        return fields["Name"], fields["Version"]
    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    return project["name"], project["version"]


def _metadata():
    name, version = _project()
    deps = Path("deps.txt").read_text().split() if Path("deps.txt").exists() else []
    deps.append(f"stamp-{{name}}=={{VERSION}}")
    lines = ["Metadata-Version: 2.1", f"Name: {{name}}", f"Version: {{version}}"]
    return "\\n".join(lines + [f"Requires-Dist: {{dep}}" for dep in deps]) + "\\n"


def _wheel_file():
    return (
        f"Wheel-Version: 1.0\\nGenerator: oldback {{VERSION}}\\n"
        "Root-Is-Purelib: true\\nTag: py3-none-any\\n"
    )


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    name, version = _project()
    info = f"{{name}}-{{version}}.dist-info"
    folder = Path(metadata_directory) / info
    folder.mkdir()
    (folder / "METADATA").write_text(_metadata())
    (folder / "WHEEL").write_text(_wheel_file())
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = _project()
    info = f"{{name}}-{{version}}.dist-info"
    contents = {{
        path.as_posix(): path.read_bytes()
        for path in sorted(Path(".").rglob("*.py"))
        if path.as_posix() not in SKIP and "__pycache__" not in path.parts
    }}
    contents[info + "/METADATA"] = _metadata().encode()
    contents[info + "/WHEEL"] = _wheel_file().encode()
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\\n")
    for path, data in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        writer.writerow([path, "sha256=" + digest, len(data)])
    writer.writerow([info + "/RECORD", "", ""])
    contents[info + "/RECORD"] = record.getvalue().encode()
    filename = f"{{name}}-{{version}}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w") as archive:
        for path, data in contents.items():
            archive.writestr(path, data)
    return filename
'''


def when(year: int, month: int = 1) -> datetime:
    return datetime(year, month, 1, 12, tzinfo=UTC)


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PackageIndex]:
    wheels = tmp_path / "wheels"
    with PackageIndex() as served:
        served.publish_runner(wheels)
        for version, year in (("1.0", 2020), ("2.0", 2023)):
            backend = {"oldback/__init__.py": BACKEND.format(version=version)}
            served.publish(
                build_wheel(wheels / version, "oldback", version, backend), uploaded=when(year)
            )
            for stamped in ("geom", "legacy"):
                served.publish(
                    build_wheel(wheels / version, f"stamp-{stamped}", version, {}),
                    uploaded=LONG_AGO,
                )
        brittle = {"brittle/__init__.py": ""}
        served.publish(
            build_sdist(wheels, "brittle", "1.0", brittle, build_system=(["oldback<1"], "oldback")),
            uploaded=when(2020),
        )
        served.publish(build_wheel(wheels, "brittle", "1.1", brittle), uploaded=when(2022))
        legacy = {"legacy/__init__.py": "OLD = True\n"}
        served.publish(
            build_sdist(wheels, "legacy", "1.0", legacy, build_system=(["oldback"], "oldback")),
            uploaded=when(2020),
        )
        monkeypatch.setenv("UV_DEFAULT_INDEX", served.url)
        monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
        monkeypatch.setenv("UV_PYTHON_DOWNLOADS", "never")
        monkeypatch.delenv("UV_INDEX_URL", raising=False)
        monkeypatch.delenv("UV_EXTRA_INDEX_URL", raising=False)
        yield served


def history(root: Path) -> GitRepo:
    """A project of 2021 that depends on `legacy`, declared where only a build tells it."""
    repo = GitRepo(root, start=when(2021))
    repo.commit(
        "Initial version",
        files={
            "pyproject.toml": '[build-system]\nrequires = ["oldback"]\nbuild-backend = "oldback"\n'
            '\n[project]\nname = "geom"\nversion = "0.1"\ndynamic = ["dependencies"]\n',
            "deps.txt": "legacy\nbrittle\n",
            "geom/__init__.py": "import legacy\n\n\ndef box(w, h):\n    return w * h\n",
            "tests/test_geom.py": "from geom import box\n\n\ndef test_box():\n"
            "    assert box(2, 3) == 6\n",
        },
        date=when(2021),
    )
    repo.commit(
        "Fix negative sides (#1)",
        files={
            "geom/__init__.py": "import legacy\n\n\ndef box(w, h):\n    return abs(w * h)\n",
            "tests/test_negative.py": "from geom import box\n\n\ndef test_negative():\n"
            "    assert box(-2, 3) == 6\n",
        },
        date=when(2021, 2),
    )
    write_issues(repo.root, {1: ("negative sides", "it breaks")})
    (repo.root / "bugbout.toml").write_text(
        '[project]\nsource = "geom"\ntests = "tests"\nissues-file = "issues.json"\n'
        "\n[run]\ntest-timeout = 120\n"
    )
    return repo


def generator(environment: Path, distribution: str) -> str:
    """The `Generator` of an installed distribution's wheel: the backend that built it."""
    (wheel,) = environment.glob(f"lib/python*/site-packages/{distribution}-*.dist-info/WHEEL")
    return next(
        line.split(": ", 1)[1]
        for line in wheel.read_text().splitlines()
        if line.startswith("Generator: ")
    )


def test_a_dated_environment_builds_with_the_build_backend_of_its_date(
    tmp_path: Path, home: Path, index: PackageIndex
) -> None:
    repo = history(tmp_path / "geom")
    Bout.load(repo.root).run(until="ground-truth")
    oracles = OracleSet.model_validate_json(
        (repo.root / ".bugbout" / "oracles.json").read_text()
    ).oracles
    environment = oracles["geom-1"].environment
    assert environment is not None and environment.rung == "relaxed", oracles["geom-1"].reason
    assert oracles["geom-1"].scored, oracles["geom-1"].reason
    # The resolution's builds (the project's copy, legacy's metadata) were dated ...
    assert "stamp-geom==1.0" in environment.packages
    assert "stamp-legacy==1.0" in environment.packages
    assert "legacy==1.0" in environment.packages
    # ... and so was the build that made legacy's wheel for the environment.
    assert generator(home / "envs" / environment.key, "legacy") == "oldback 1.0"
    # An sdist that no build tools of its day can build is lifted by the ladder, named,
    # and installed past the date while the rest stays dated.
    assert environment.relaxed == ["brittle"]
    assert "brittle==1.1" in environment.packages
