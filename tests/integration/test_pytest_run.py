"""run_pytest on small trees, with real pytest, in real bubblewrap and unconfined."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from racekit import alive, eventually

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.infra.junit import TestResult
from bugbout_tui.infra.pytest_run import (
    PytestCommand,
    TestRun,
    expand_collection_errors,
    run_pytest,
)
from bugbout_tui.infra.sandbox import Sandbox, select_sandbox

PYTHON = Path(sys.executable)


@pytest.fixture(params=["bubblewrap", "none"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    return select_sandbox(request.param)


@pytest.fixture
def bwrap() -> Sandbox:
    return select_sandbox("bubblewrap")


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def run(
    tree: Path,
    sandbox: Sandbox,
    *,
    paths: tuple[str, ...] = (),
    log_path: Path | None = None,
    **options: object,
) -> TestRun:
    cmd = PytestCommand(
        python=PYTHON,
        tree=tree,
        paths=paths,
        pythonpath=[tree],
        **options,  # type: ignore[arg-type]
    )
    return asyncio.run(
        run_pytest(
            cmd, sandbox, workdir=tree.parent / f"work-{uuid.uuid4().hex[:8]}", log_path=log_path
        )
    )


def all_gone(token: str) -> bool:
    return eventually(lambda: not alive(token), timeout=3.0, step=0.02)


OUTCOMES = {
    "tests/test_kinds.py": """
        import pytest

        def test_pass():
            pass

        def test_fail():
            assert 1 + 1 == 3

        @pytest.fixture
        def broken():
            raise RuntimeError("fixture broke")

        def test_error(broken):
            pass

        def test_skip():
            pytest.skip("not here")

        @pytest.mark.xfail(reason="known")
        def test_xfail():
            assert False

        @pytest.mark.xfail(reason="strict", strict=True)
        def test_xpass_strict():
            pass

        @pytest.mark.parametrize("value", ["a.b", "x[1]"])
        def test_param(value):
            pass

        class TestGroup:
            def test_in_class(self):
                print("printed PASSED lines do not count")
    """,
    "tests/unit/test_sub.py": "def test_in_subdir():\n    pass\n",
}


def test_outcomes_and_log(tmp_path: Path, sandbox: Sandbox) -> None:
    tree = write_tree(tmp_path / "tree", OUTCOMES)
    log = tmp_path / "logs" / "pytest.log"
    result = run(tree, sandbox, log_path=log)
    assert result.error is None
    assert result.exit_code == 1
    assert result.collected == 10
    assert {k: v.outcome for k, v in result.outcomes.items()} == {
        "tests/test_kinds.py::test_pass": "passed",
        "tests/test_kinds.py::test_fail": "failed",
        "tests/test_kinds.py::test_error": "error",
        "tests/test_kinds.py::test_skip": "skipped",
        "tests/test_kinds.py::test_xfail": "xfailed",
        "tests/test_kinds.py::test_xpass_strict": "failed",
        "tests/test_kinds.py::test_param[a.b]": "passed",
        "tests/test_kinds.py::test_param[x[1]]": "passed",
        "tests/test_kinds.py::TestGroup::test_in_class": "passed",
        "tests/unit/test_sub.py::test_in_subdir": "passed",
    }
    assert result.outcomes["tests/test_kinds.py::test_fail"].message == (
        "assert (1 + 1) == 3\ntests/test_kinds.py:8: AssertionError"
    )
    assert "2 failed, 5 passed, 1 skipped, 1 xfailed, 1 error" in log.read_text()
    # Nothing left in the tree: no cache, no bytecode, no report.
    assert sorted(p.name for p in tree.rglob("*")) == sorted(
        ["tests", "test_kinds.py", "unit", "test_sub.py"]
    )


def test_only_the_given_paths_run(tmp_path: Path, bwrap: Sandbox) -> None:
    tree = write_tree(tmp_path / "tree", OUTCOMES)
    result = run(tree, bwrap, paths=("tests/unit/test_sub.py", "tests/test_kinds.py::test_pass"))
    assert result.error is None
    assert result.exit_code == 0
    assert set(result.outcomes) == {
        "tests/unit/test_sub.py::test_in_subdir",
        "tests/test_kinds.py::test_pass",
    }


def test_a_pytest_section_in_setup_cfg_is_read_as_pytest_once_did(
    tmp_path: Path, bwrap: Sandbox
) -> None:
    """Projects of 2016 configured pytest in setup.cfg's `[pytest]`, which today's pytest
    refuses outright; the section's settings still apply, as they did then."""
    tree = write_tree(
        tmp_path / "tree",
        {
            "setup.cfg": """
                [metadata]
                name = old

                [pytest]
                python_files = check_*.py
                markers =
                    slow: a slow one
            """,
            "tests/check_things.py": """
                import pytest

                @pytest.mark.slow
                def test_found():
                    pass
            """,
        },
    )
    result = run(tree, bwrap, paths=("tests",), pytest_args=["--strict-markers"])
    assert result.error is None, result.error
    assert set(result.outcomes) == {"tests/check_things.py::test_found"}


def test_import_error_marks_that_modules_tests(tmp_path: Path, bwrap: Sandbox) -> None:
    fixed = {
        "tests/test_good.py": "def test_good():\n    pass\n",
        "tests/test_feature.py": (
            "import helper\n\ndef test_one():\n    pass\n\n"
            "class TestMore:\n    def test_two(self):\n        pass\n"
        ),
        "helper.py": "",
    }
    fixed_run = run(write_tree(tmp_path / "fixed", fixed), bwrap)
    assert fixed_run.error is None and fixed_run.collected == 3

    broken = run(
        write_tree(
            tmp_path / "base", {**fixed, "helper.py": "raise ImportError('no helper yet')\n"}
        ),
        bwrap,
    )
    assert broken.error is None
    assert broken.exit_code == 1
    assert broken.outcomes["tests/test_good.py::test_good"].outcome == "passed"
    entry = broken.outcomes["tests/test_feature.py"]
    assert entry.outcome == "error"
    assert entry.message is not None and "ImportError: no helper yet" in entry.message
    assert broken.collected == 1

    expanded = expand_collection_errors(broken, fixed_run.outcomes)
    assert expanded.outcomes == {
        "tests/test_good.py::test_good": TestResult(outcome="passed"),
        "tests/test_feature.py::test_one": entry,
        "tests/test_feature.py::TestMore::test_two": entry,
    }


def test_broken_conftest_in_a_directory_spreads_over_it(tmp_path: Path, bwrap: Sandbox) -> None:
    tree = write_tree(
        tmp_path / "tree",
        {
            "tests/api/conftest.py": "import missing_dependency\n",
            "tests/api/test_a.py": "def test_a():\n    pass\n",
            "tests/api/deep/test_b.py": "def test_b():\n    pass\n",
            "tests/test_c.py": "def test_c():\n    pass\n",
        },
    )
    result = run(tree, bwrap)
    assert set(result.outcomes) == {"tests/api", "tests/test_c.py::test_c"}
    known = [
        "tests/api/test_a.py::test_a",
        "tests/api/deep/test_b.py::test_b",
        "tests/test_c.py::test_c",
    ]
    expanded = expand_collection_errors(result, known)
    assert {k: v.outcome for k, v in expanded.outcomes.items()} == {
        "tests/api/test_a.py::test_a": "error",
        "tests/api/deep/test_b.py::test_b": "error",
        "tests/test_c.py::test_c": "passed",
    }


def test_expansion_prefers_the_closest_entry_and_keeps_unmatched_ones() -> None:
    err = TestResult(outcome="error", message="dir broke")
    skip = TestResult(outcome="skipped", message="collection skipped")
    run_ = TestRun(
        outcomes={"tests": err, "tests/test_x.py": skip, "other/test_y.py": err},
        collected=0,
        exit_code=1,
        duration=0.1,
        error=None,
    )
    expanded = expand_collection_errors(run_, ["tests/test_x.py::test_a", "tests/z/test_q.py::t"])
    assert expanded.outcomes == {
        "tests/test_x.py::test_a": skip,
        "tests/z/test_q.py::t": err,
        "other/test_y.py": err,
    }


def test_missing_plugin_is_a_clear_error(tmp_path: Path, bwrap: Sandbox) -> None:
    tree = write_tree(
        tmp_path / "tree",
        {
            "conftest.py": 'pytest_plugins = ["not_installed_plugin"]\n',
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    result = run(tree, bwrap)
    assert result.outcomes == {}
    assert result.error is not None
    assert "without writing a JUnit report" in result.error
    assert "not_installed_plugin" in result.error


def test_usage_error_in_pytest_args(tmp_path: Path, bwrap: Sandbox) -> None:
    tree = write_tree(tmp_path / "tree", {"tests/test_a.py": "def test_a():\n    pass\n"})
    result = run(tree, bwrap, pytest_args=("--no-such-option",))
    assert result.exit_code == 4
    assert result.error is not None
    assert "rejected its command line (an unknown option" in result.error
    assert "--no-such-option" in result.error


def test_crash_without_report_keeps_the_output(tmp_path: Path, sandbox: Sandbox) -> None:
    tree = write_tree(
        tmp_path / "tree",
        {
            "tests/test_a.py": "import ctypes\n\ndef test_segfault():\n    ctypes.string_at(0)\n",
        },
    )
    workdir = tmp_path / "work"
    workdir.mkdir()
    # A report from an earlier run in the same scratch directory must not be read.
    (workdir / "junit.xml").write_text(
        '<testsuite><testcase classname="tests.test_a" name="test_segfault" '
        'file="tests/test_a.py"/></testsuite>'
    )
    cmd = PytestCommand(python=PYTHON, tree=tree, paths=(), pythonpath=[tree])
    result = asyncio.run(run_pytest(cmd, sandbox, workdir=workdir))
    assert result.outcomes == {}
    assert result.error is not None
    # Unconfined, the signal shows directly; bwrap reports it as status 128 + 11.
    assert result.exit_code in (-11, 139)
    assert "killed by SIGSEGV" in result.error
    assert "without writing a JUnit report" in result.error
    assert 'tests/test_a.py", line 4 in test_segfault' in result.error


def test_hard_exit_in_conftest(tmp_path: Path, bwrap: Sandbox) -> None:
    tree = write_tree(
        tmp_path / "tree",
        {
            "conftest.py": "import os\nos._exit(3)\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
        },
    )
    result = run(tree, bwrap)
    assert result.exit_code == 3
    assert result.error == (
        "pytest hit an internal error (exit status 3) without writing a JUnit report.\n"
        "(pytest printed nothing)"
    )


def test_exit_status_that_contradicts_the_report(tmp_path: Path, bwrap: Sandbox) -> None:
    tree = write_tree(
        tmp_path / "tree",
        {
            "conftest.py": (
                "import pytest\n\n@pytest.hookimpl(trylast=True)\n"
                "def pytest_sessionfinish(session):\n    session.exitstatus = 0\n"
            ),
            "tests/test_a.py": "def test_a():\n    assert False\n",
        },
    )
    result = run(tree, bwrap)
    assert result.exit_code == 0
    assert result.outcomes["tests/test_a.py::test_a"].outcome == "failed"
    assert result.error is not None and "status 0, but its report has 1 failed" in result.error


def test_no_tests_is_not_an_error(tmp_path: Path, bwrap: Sandbox) -> None:
    tree = write_tree(tmp_path / "tree", {"tests/test_a.py": "X = 1\n"})
    result = run(tree, bwrap)
    assert result.exit_code == 5
    assert result.outcomes == {}
    assert result.collected == 0
    assert result.error is None


SPAWNS_STUBBORN_CHILD = """
    import subprocess, sys, time

    TOKEN = {token!r}
    CHILD = (
        "import signal, sys, time\\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
        "open('child-started', 'w').close()\\n"
        "print('ready', flush=True)\\n"
        "time.sleep(600)\\n"
    )

    def test_spawns():
        child = subprocess.Popen([sys.executable, "-c", CHILD, TOKEN], stdout=subprocess.PIPE)
        assert child.stdout.readline() == b"ready\\n"
        if {hang!r}:
            time.sleep(600)
"""


@pytest.mark.slow
def test_hanging_test_times_out_and_leaves_nothing(tmp_path: Path, sandbox: Sandbox) -> None:
    token = f"bugbout-hang-{uuid.uuid4().hex}"
    tree = write_tree(
        tmp_path / "tree",
        {
            "tests/test_hang.py": SPAWNS_STUBBORN_CHILD.format(token=token, hang=True),
        },
    )
    started = time.monotonic()
    result = run(tree, sandbox, timeout=8)
    assert result.timed_out
    assert result.exit_code is None
    assert result.outcomes == {}
    assert result.error is not None and "did not finish within 8 seconds" in result.error
    assert (tree / "child-started").exists()  # the stubborn child really ran
    assert all_gone(token)
    assert time.monotonic() - started < 30


def test_child_left_by_a_passing_test_is_ended(tmp_path: Path, sandbox: Sandbox) -> None:
    token = f"bugbout-stray-{uuid.uuid4().hex}"
    tree = write_tree(
        tmp_path / "tree",
        {
            "tests/test_stray.py": SPAWNS_STUBBORN_CHILD.format(token=token, hang=False),
        },
    )
    result = run(tree, sandbox)
    assert result.error is None
    assert result.outcomes["tests/test_stray.py::test_spawns"].outcome == "passed"
    assert (tree / "child-started").exists()
    assert all_gone(token)


@pytest.fixture
def noisy_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A developer's shell: a credential, pytest options and an import path of its own."""
    ambient = tmp_path / "ambient"
    write_tree(ambient, {"shadow.py": "WHERE = 'ambient'\n"})
    monkeypatch.setenv("PYTHONPATH", str(ambient))
    monkeypatch.setenv("PYTEST_ADDOPTS", "--no-such-option")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "a" * 36)
    monkeypatch.setenv("BUGBOUT_DEMO_SETTING", "from the shell")
    yield ambient


def test_environment_of_the_tests(tmp_path: Path, sandbox: Sandbox, noisy_shell: Path) -> None:
    tree = write_tree(
        tmp_path / "tree",
        {
            "shadow.py": "WHERE = 'tree'\n",
            "tests/test_env.py": """
            import os, shutil, sys

            def test_project_env():
                assert os.environ["DATABASE_URL"] == "sqlite:///test.db"

            def test_tree_is_first_on_the_path():
                import shadow
                assert shadow.WHERE == "tree"
                assert os.environ["PYTHONPATH"].split(os.pathsep) == [os.getcwd(), EXTRA]

            def test_shell_is_kept_out():
                assert "GITHUB_TOKEN" not in os.environ
                assert "PYTEST_ADDOPTS" not in os.environ
                assert os.environ["BUGBOUT_DEMO_SETTING"] == "from the shell"
                assert os.environ["PYTHONHASHSEED"] == "0"

            def test_environment_python_comes_first_on_path():
                assert os.path.dirname(shutil.which("python")) == os.path.dirname(sys.executable)
        """.replace("EXTRA", repr(str(noisy_shell.parent / "extra"))),
        },
    )
    (noisy_shell.parent / "extra").mkdir()
    cmd = PytestCommand(
        python=PYTHON,
        tree=tree,
        paths=(),
        pythonpath=[tree, noisy_shell.parent / "extra"],
        env={"DATABASE_URL": "sqlite:///test.db"},
    )
    result = asyncio.run(run_pytest(cmd, sandbox, workdir=tmp_path / "work"))
    assert result.error is None, result.error
    assert {k: v.outcome for k, v in result.outcomes.items()} == {
        "tests/test_env.py::test_project_env": "passed",
        "tests/test_env.py::test_tree_is_first_on_the_path": "passed",
        "tests/test_env.py::test_shell_is_kept_out": "passed",
        "tests/test_env.py::test_environment_python_comes_first_on_path": "passed",
    }, result.outcomes


def test_tests_write_only_in_their_tree_and_have_no_network(tmp_path: Path, bwrap: Sandbox) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    probe = f"bugbout-probe-{uuid.uuid4().hex}"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    tree = write_tree(
        tmp_path / "tree",
        {
            "tests/test_confined.py": f"""
            import os, socket, sys
            import pytest

            def test_writes_in_the_tree():
                with open("written-by-test.txt", "w") as f:
                    f.write("ok")

            def test_cannot_write_next_to_the_tree():
                with pytest.raises(OSError):
                    open(os.path.join({str(outside)!r}, "escaped.txt"), "w")

            def test_cannot_write_into_the_environment():
                with pytest.raises(OSError):
                    open(os.path.join(sys.prefix, {probe!r}), "w")

            def test_no_network():
                with pytest.raises(OSError):
                    socket.create_connection(("127.0.0.1", {port}), timeout=5)

            def test_temp_dir_is_writable(tmp_path):
                (tmp_path / "scratch").write_text("fine")
        """,
        },
    )
    try:
        result = run(tree, bwrap)
    finally:
        listener.close()
        leaked = Path(sys.prefix) / probe
        escaped = leaked.exists()
        leaked.unlink(missing_ok=True)
    assert not escaped
    assert result.error is None, result.error
    assert all(r.outcome == "passed" for r in result.outcomes.values()), result.outcomes
    assert len(result.outcomes) == 5
    assert (tree / "written-by-test.txt").read_text() == "ok"
    assert list(outside.iterdir()) == []


def test_missing_interpreter_is_a_user_error(tmp_path: Path, bwrap: Sandbox) -> None:
    cmd = PytestCommand(
        python=tmp_path / "nope" / "python", tree=tmp_path, paths=(), pythonpath=[tmp_path]
    )
    with pytest.raises(BugboutError, match="does not exist"):
        asyncio.run(run_pytest(cmd, bwrap, workdir=tmp_path / "work"))


async def test_runs_share_nothing(tmp_path: Path, bwrap: Sandbox) -> None:
    """Concurrent runs of different trees (as in a cross-examination) stay apart."""
    trees = [
        write_tree(
            tmp_path / f"tree{i}", {"tests/test_n.py": f"def test_n():\n    assert {i} < 2\n"}
        )
        for i in range(3)
    ]

    results = await asyncio.gather(
        *(
            run_pytest(
                PytestCommand(python=PYTHON, tree=t, paths=(), pythonpath=[t]),
                bwrap,
                workdir=tmp_path / f"work{i}",
            )
            for i, t in enumerate(trees)
        )
    )
    assert [r.outcomes["tests/test_n.py::test_n"].outcome for r in results] == [
        "passed",
        "passed",
        "failed",
    ]
    assert os.path.exists(tmp_path / "work0" / "junit.xml")


def test_a_test_sees_its_tree_its_interpreter_and_the_system_and_nothing_else(
    tmp_path: Path, bwrap: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deny by default: nothing of any bugbout home but the tree under test, no other
    tree, no store, no repository, no home directory; its own loopback works, the host's
    does not answer."""
    home = tmp_path / "bugbout-home"
    user = tmp_path / "user"
    answer = home / "trees" / "proj-1" / "f1x" / "src" / "calc" / "ops.py"
    default_oracles = user / ".cache" / "bugbout" / "demo" / ".bugbout" / "oracles.json"
    default_tree = user / ".cache" / "bugbout" / "trees" / "proj-1" / "f1x" / "ops.py"
    project = tmp_path / "proj"
    secrets = {
        "configured home": answer,
        "default home": default_oracles,
        "default tree": default_tree,
        "other tree": home / "work" / "proj-1" / "score" / "calc-1" / "other" / "tree" / "a.py",
        "store": project / ".bugbout" / "oracles.json",
        "repository": project / "src" / "calc" / "ops.py",
        "history": project / ".git" / "HEAD",
        "user's home": user / "notes.txt",
    }
    for path in secrets.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("tests/test_f1.py::test_f1 return 1")
    monkeypatch.setenv("BUGBOUT_HOME", str(home))
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    workspace = home / "work" / "proj-1" / "score" / "calc-1" / "mine"
    tree = write_tree(
        workspace / "tree",
        {
            "tests/test_view.py": f"""
            import os, socket, sys

            SECRETS = {json.dumps({k: str(v) for k, v in secrets.items()})}

            def test_nothing_of_bugbout_or_the_user_is_in_view():
                seen = {{name: os.path.exists(path) for name, path in SECRETS.items()}}
                assert seen == {{name: False for name in SECRETS}}
                assert os.environ["HOME"] != {str(user)!r}
                assert not os.path.exists({str(home / "trees")!r})

            def test_its_tree_interpreter_and_system_are():
                assert os.path.exists("tests/test_view.py")
                assert os.path.isdir(os.path.join(sys.prefix, "bin"))
                assert os.path.isfile("/usr/bin/env") and os.path.isdir("/etc")
                for gone in ("/home", "/opt", "/srv", "/mnt", "/run"):
                    assert not os.path.exists(gone), gone
                assert os.listdir("/var") == ["tmp"]

            def test_its_own_loopback_works():
                with socket.create_server(("127.0.0.1", 0)) as server:
                    with socket.create_connection(server.getsockname(), timeout=5):
                        pass

            def test_the_hosts_loopback_is_out_of_reach():
                try:
                    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
                except OSError:
                    return
                raise AssertionError("reached a server on the host's loopback")
            """,
        },
    )
    cmd = PytestCommand(python=PYTHON, tree=tree, paths=(), pythonpath=[tree], hidden=(project,))
    try:
        result = asyncio.run(run_pytest(cmd, bwrap, workdir=workspace / "run"))
    finally:
        listener.close()
    assert result.error is None, result.error
    assert {k: v.outcome for k, v in result.outcomes.items()} == {
        "tests/test_view.py::test_nothing_of_bugbout_or_the_user_is_in_view": "passed",
        "tests/test_view.py::test_its_tree_interpreter_and_system_are": "passed",
        "tests/test_view.py::test_its_own_loopback_works": "passed",
        "tests/test_view.py::test_the_hosts_loopback_is_out_of_reach": "passed",
    }, result.outcomes
    # control: unconfined, the same test finds what it looks for
    control = asyncio.run(run_pytest(cmd, select_sandbox("none"), workdir=workspace / "run2"))
    assert (
        control.outcomes[
            "tests/test_view.py::test_nothing_of_bugbout_or_the_user_is_in_view"
        ].outcome
        == "failed"
    )
