"""What an agent can read: never bugbout's own data, and in the minimal view only its own.

One bout, `[run] agent-view = "minimal"`, races two copies of one `command` agent
(`tests/agents/hostile.py`, mode `look`): one in the bout's minimal view, one switched
back to the host view by its own `view` key. Each tries to read every place bugbout
keeps something (the configured home's demo store, the default home in the user's cache
directory, which `BUGBOUT_HOME` does not make go away, the project's store, the
repository and its history), a directory beside the project, and a directory of the
real user's (the host view's private `/tmp` hides the first already); then it runs the
prompt's test command and edits the source, as any agent does. The user's cache
directory and that directory are the real user's, outside `/tmp`, as they would be.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from racekit import attempt, contestant, copy_project, report, script, template
from terminals import bugbout

TASK = "calc-1"
SECRET = "tests/test_f1.py::test_f1"

pytestmark = pytest.mark.slow


@dataclass
class ViewRun:
    project: Path
    secrets: dict[str, Path]
    sibling: Path
    elsewhere: Path


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ViewRun]:
    project_template = template(tmp_path_factory)
    root = tmp_path_factory.mktemp("views")
    home = root / "bugbout-home"
    user = root / "user"
    # Outside /tmp, which the host view makes private anyway: the user's own files, and
    # the user's cache directory, where the default home is.
    mine = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / f"bugbout-views-{uuid.uuid4().hex}"
    default = mine / "cache" / "bugbout"
    project = root / "proj"
    secrets = {
        "default home's demo store": default / "demo" / ".bugbout" / "oracles.json",
        "default home's trees": default / "trees" / "proj-1" / "f1x" / "src" / "calc" / "ops.py",
        "configured home's demo store": home / "demo" / ".bugbout" / "oracles.json",
        "store": project / ".bugbout" / "oracles.json",
        "repository": project / "src" / "calc" / "ops.py",
        "history": project / ".git" / "HEAD",
    }
    sibling = root / "sibling" / "notes.txt"
    elsewhere = mine / "notes.txt"
    look = [str(path) for path in [*secrets.values(), sibling, elsewhere]]

    def looker(name: str, view: str | None) -> str:
        command = script("hostile", "look", "{workdir}", "{prompt_file}")
        return contestant(name, command, quota=name, env={"LOOK": json.dumps(look)}, view=view)

    copy_project(
        project_template,
        project,
        tasks=[TASK],
        run='agent-view = "minimal"\n',
        extra=looker("minimal", None) + looker("host", "host"),
    )
    for path in [*secrets.values(), sibling, elsewhere]:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(SECRET)
    try:
        result = bugbout(
            "run", "--until", "race",
            cwd=project, home=home, HOME=str(user), XDG_CACHE_HOME=str(mine / "cache"),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        yield ViewRun(project=project, secrets=secrets, sibling=sibling, elsewhere=elsewhere)
    finally:
        shutil.rmtree(mine, ignore_errors=True)


def _seen(bout: ViewRun, name: str) -> dict[str, Any]:
    return report(attempt(bout.project, TASK, name))


@pytest.mark.parametrize("view", ["minimal", "host"])
def test_no_agent_reads_any_bugbout_home_the_store_or_the_repository(
    bout: ViewRun, view: str
) -> None:
    seen = _seen(bout, view)
    # control: each is there, outside the sandbox; the stores name the hidden test
    assert all(path.is_file() for path in bout.secrets.values())
    assert SECRET in bout.secrets["default home's demo store"].read_text()
    assert SECRET in bout.secrets["store"].read_text()
    assert {name: seen[str(path)] for name, path in bout.secrets.items()} == {
        name: "FileNotFoundError" for name in bout.secrets
    }


def test_the_host_view_shows_the_rest_of_the_machine(bout: ViewRun) -> None:
    assert _seen(bout, "host")[str(bout.elsewhere)] == SECRET


def test_the_minimal_view_shows_nothing_beside_the_agents_own(bout: ViewRun) -> None:
    seen = _seen(bout, "minimal")
    assert seen[str(bout.sibling)] == "FileNotFoundError"
    assert seen[str(bout.elsewhere)] == "FileNotFoundError"


@pytest.mark.parametrize("view", ["minimal", "host"])
def test_an_agent_in_either_view_runs_the_tests_and_leaves_its_patch(
    bout: ViewRun, view: str
) -> None:
    seen = _seen(bout, view)
    assert seen["tests"]["returncode"] == 0, seen["tests"]
    assert "passed" in seen["tests"]["tail"]
    record = attempt(bout.project, TASK, view)
    assert record.status == "finished"
    assert [change.path for change in record.patch.files] == ["src/calc/ops.py"]
