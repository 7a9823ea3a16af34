"""Reading pytest's JUnit report, checked against reports real pytest writes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from bugbout_tui.infra import junit
from bugbout_tui.infra.junit import JUnitError, TestResult, node_id_of, parse_junit

PYTHON = sys.executable

SHAPES = """
import pytest

@pytest.mark.parametrize("v", ["a.b", "x[1]", "a::b", "sl/ash", "sp ace", 1.5])
def test_param(v):
    pass

class TestOuter:
    def test_method(self):
        pass

    class TestInner:
        @pytest.mark.parametrize("n", [1, 2])
        def test_nested(self, n):
            pass

def test_fails():
    x = 1
    assert x == 2, "x is wrong"

def test_big_diff():
    assert list(range(500)) == list(range(1, 501))

def test_deep_failure():
    helper()

def helper():
    raise ValueError("from the helper")

@pytest.fixture
def breaks_at_teardown():
    yield
    raise RuntimeError("teardown broke")

@pytest.fixture
def breaks_at_setup():
    raise RuntimeError("setup broke")

def test_fails_then_teardown_breaks(breaks_at_teardown):
    assert False

def test_passes_then_teardown_breaks(breaks_at_teardown):
    pass

def test_setup_breaks(breaks_at_setup):
    pass

def test_skipped():
    pytest.skip("not on this machine")

@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False

def test_imperative_xfail():
    pytest.xfail("gave up")

@pytest.mark.xfail(reason="maybe fixed")
def test_xpass():
    pass

@pytest.mark.xfail(reason="must fail", strict=True)
def test_xpass_strict():
    pass
"""

TREE = {
    "test_root.py": "def test_at_root():\n    pass\n",
    "mod_with_doc.py": (
        'def add(a, b):\n    """\n    >>> add(1, 2)\n    3\n    """\n    return a + b\n'
    ),
    "tests/test_shapes.py": SHAPES,
    "tests/sub/test_deeper.py": "class TestDeep:\n    def test_it(self):\n        pass\n",
    "tests/v1.0/test_dotted_dir.py": "def test_in_dotted_dir():\n    pass\n",
    "tests/base_mixin.py": "class Base:\n    def test_inherited(self):\n        pass\n",
    "tests/test_child.py": "from base_mixin import Base\n\nclass TestChild(Base):\n    pass\n",
    "tests/test_modskip.py": (
        "import pytest\npytest.skip('whole module', allow_module_level=True)\n"
        "def test_never():\n    pass\n"
    ),
    "tests/test_broken.py": "import not_a_module_anywhere\n\ndef test_never():\n    pass\n",
}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def pytest_cmd(tree: Path, *args: str) -> list[str]:
    return [
        PYTHON,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        f"--rootdir={tree}",
        "--continue-on-collection-errors",
        "--doctest-modules",
        *args,
    ]


@pytest.fixture(scope="module")
def real_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[str]]:
    """A report and pytest's own list of node ids for the same tree."""
    tree = tmp_path_factory.mktemp("tree")
    write_tree(tree, TREE)
    report = tree.parent / "report.xml"
    env = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(
        pytest_cmd(tree, "-o", "junit_family=xunit1", f"--junitxml={report}", "-q"),
        cwd=tree,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    listed = subprocess.run(
        pytest_cmd(tree, "--collect-only", "-q"),
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    ids = [line for line in listed.stdout.splitlines() if "::" in line]
    assert len(ids) > 20, listed.stdout
    return tree, report, ids


def test_node_ids_match_what_pytest_collects(real_report: tuple[Path, Path, list[str]]) -> None:
    tree, report, ids = real_report
    outcomes = parse_junit(report, rootdir=tree)
    assert sorted(k for k in outcomes if "::" in k) == sorted(ids)
    # Shapes that a naive rebuild gets wrong, spelled out.
    for node_id in [
        "tests/test_shapes.py::test_param[a.b]",
        "tests/test_shapes.py::test_param[x[1]]",
        "tests/test_shapes.py::test_param[a::b]",
        "tests/test_shapes.py::test_param[sl/ash]",
        "tests/test_shapes.py::test_param[sp ace]",
        "tests/test_shapes.py::TestOuter::TestInner::test_nested[2]",
        "tests/sub/test_deeper.py::TestDeep::test_it",
        "tests/v1.0/test_dotted_dir.py::test_in_dotted_dir",
        "tests/test_child.py::TestChild::test_inherited",
        "test_root.py::test_at_root",
        "mod_with_doc.py::mod_with_doc.add",
    ]:
        assert node_id in outcomes


def test_outcomes(real_report: tuple[Path, Path, list[str]]) -> None:
    tree, report, _ = real_report
    outcomes = parse_junit(report, rootdir=tree)
    shapes = {
        k.split("::", 1)[1]: v.outcome
        for k, v in outcomes.items()
        if k.startswith("tests/test_shapes.py::")
    }
    assert shapes["test_param[1.5]"] == "passed"
    assert shapes["test_fails"] == "failed"
    assert shapes["test_fails_then_teardown_breaks"] == "failed"
    assert shapes["test_passes_then_teardown_breaks"] == "error"
    assert shapes["test_setup_breaks"] == "error"
    assert shapes["test_skipped"] == "skipped"
    assert shapes["test_xfail"] == "xfailed"
    assert shapes["test_imperative_xfail"] == "xfailed"
    assert shapes["test_xpass"] == "passed"  # the report cannot tell a non-strict XPASS
    assert shapes["test_xpass_strict"] == "failed"
    assert outcomes["mod_with_doc.py::mod_with_doc.add"].outcome == "passed"
    assert outcomes["tests/test_broken.py"].outcome == "error"
    assert outcomes["tests/test_modskip.py"] == TestResult(
        outcome="skipped", message="collection skipped"
    )


def test_failure_text_is_short_and_points_at_the_failure(
    real_report: tuple[Path, Path, list[str]],
) -> None:
    tree, report, _ = real_report
    outcomes = parse_junit(report, rootdir=tree)

    def message(name: str) -> str:
        text = outcomes[f"tests/test_shapes.py::{name}"].message
        assert text is not None
        return text

    assert message("test_fails") == (
        "AssertionError: x is wrong\nassert 1 == 2\ntests/test_shapes.py:19: AssertionError"
    )
    assert message("test_deep_failure") == (
        "ValueError: from the helper\ntests/test_shapes.py:28: ValueError"
    )
    assert message("test_setup_breaks").startswith("RuntimeError: setup broke\n")
    big = message("test_big_diff")
    assert len(big) <= junit.MESSAGE_LIMIT
    assert big.startswith("assert [0, 1, 2, 3, 4, 5, ...] == [1, 2, 3, 4, 5, 6, ...]")
    assert big.endswith("\ntests/test_shapes.py:22: AssertionError")
    assert message("test_xpass_strict") == "[XPASS(strict)] must fail"
    assert message("test_skipped") == "not on this machine"
    assert message("test_xfail") == "known bug"
    assert outcomes["tests/test_shapes.py::test_param[a.b]"].message is None
    broken = outcomes["tests/test_broken.py"].message
    assert broken is not None
    assert "ModuleNotFoundError: No module named 'not_a_module_anywhere'" in broken


def test_broken_conftest_in_a_directory_is_keyed_by_the_directory(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write_tree(
        tree,
        {
            "tests/sub/conftest.py": "import not_a_module_anywhere\n",
            "tests/sub/test_a.py": "def test_a():\n    pass\n",
            "tests/test_b.py": "def test_b():\n    pass\n",
        },
    )
    report = tmp_path / "r.xml"
    subprocess.run(
        pytest_cmd(tree, "-o", "junit_family=xunit1", f"--junitxml={report}"),
        cwd=tree,
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=120,
        check=False,
    )
    outcomes = parse_junit(report, rootdir=tree)
    assert set(outcomes) == {"tests/sub", "tests/test_b.py::test_b"}
    assert outcomes["tests/sub"].outcome == "error"


def test_node_id_without_a_module_on_disk(tmp_path: Path) -> None:
    # A test inherited from a file outside the tree, in a module that is gone by now.
    assert node_id_of("tests.test_gone.TestX", "test_y[1.5]", "../lib/base.py", tmp_path) == (
        "tests/test_gone.py::TestX::test_y[1.5]"
    )
    assert node_id_of("", "tests.test_gone", None, tmp_path) == "tests/test_gone"


def test_malformed_report_is_an_error(tmp_path: Path) -> None:
    report = tmp_path / "r.xml"
    report.write_text('<testsuites><testsuite><testcase classname="a" name="b">')
    with pytest.raises(JUnitError, match="not well-formed"):
        parse_junit(report, rootdir=tmp_path)


def test_other_xml_is_not_a_report(tmp_path: Path) -> None:
    report = tmp_path / "r.xml"
    report.write_text("<html><body>hello</body></html>")
    with pytest.raises(JUnitError, match="no <testsuite>"):
        parse_junit(report, rootdir=tmp_path)


def test_oversized_report_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = tmp_path / "r.xml"
    suite = ET.Element("testsuite")
    for i in range(100):
        ET.SubElement(suite, "testcase", classname="t", name=f"test_{i}", file="t.py")
    ET.ElementTree(suite).write(report)
    assert len(parse_junit(report, rootdir=tmp_path)) == 100
    monkeypatch.setattr(junit, "MAX_REPORT_BYTES", 1000)
    with pytest.raises(JUnitError, match="more than the 1000 accepted"):
        parse_junit(report, rootdir=tmp_path)
