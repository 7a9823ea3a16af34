"""What a commit's packaging files declare, and which Python its tests run on."""

from __future__ import annotations

from pathlib import Path

from bugbout_tui.core.models import Oracle, TaskEnvironment
from bugbout_tui.infra.manifests import read_manifests, requirement_name
from bugbout_tui.infra.pythons import Python, choose, satisfies
from bugbout_tui.rules.ground_truth import on_newer_python


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_pyproject_declares_runtime_and_test_requirements(tmp_path: Path) -> None:
    found = read_manifests(
        write(
            tmp_path,
            {
                "pyproject.toml": '[project]\nname = "p"\nrequires-python = ">=3.8"\n'
                'dependencies = ["six>=1.9"]\n'
                'classifiers = ["Programming Language :: Python :: 3.9",'
                ' "Programming Language :: Python :: 3.10"]\n'
                '[project.optional-dependencies]\ntest = ["pytest-asyncio"]\ndocs = ["sphinx"]\n'
                '[dependency-groups]\ndev = ["hypothesis", {include-group = "lint"}]\n'
                'lint = ["ruff"]\n',
                "requirements-docs.txt": "sphinx-rtd-theme\n",
                "test-requirements.txt": "-r requirements.txt\nmock\n"
                "lib @ https://example.invalid/lib.whl\n-e ../sibling\n",
                "requirements.txt": "-e .\nattrs\n",
            },
        )
    )
    assert found.requirements == [
        "hypothesis",
        "ruff",
        "six>=1.9",
        "pytest-asyncio",
        "attrs",
        "mock",
        "lib @ https://example.invalid/lib.whl",
    ]
    assert found.unenforced == [
        "lib @ https://example.invalid/lib.whl (a direct URL, not limited by date)",
        "-e ../sibling (a local path, left out)",
    ]
    assert found.build is None
    assert found.requires_python == ">=3.8"
    assert found.classifiers == ["3.9", "3.10"]


def test_setup_py_is_built_unless_declared_elsewhere_or_read_by_pbr(tmp_path: Path) -> None:
    plain = read_manifests(write(tmp_path / "a", {"setup.py": "setup(python_requires='>=3.6')"}))
    assert plain.build == "setup.py" and plain.requires_python == ">=3.6"
    cfg = write(
        tmp_path / "b",
        {
            "setup.py": "setup()",
            "setup.cfg": "[options]\ninstall_requires =\n    six\ntests_require = nose\n"
            "[options.extras_require]\ntesting =\n    pytest\n",
        },
    )
    declared = read_manifests(cfg)
    assert declared.build is None and declared.requirements == ["six", "nose", "pytest"]
    pbr = write(
        tmp_path / "c",
        {
            "setup.py": "setuptools.setup(setup_requires=['pbr'], pbr=True)",
            "requirements.txt": "six\n",
        },
    )
    assert read_manifests(pbr).build is None and read_manifests(pbr).requirements == ["six"]


def test_requires_python_is_met_as_written() -> None:
    assert satisfies((3, 11, 7), ">=3.8, !=3.9.*, <4")
    assert not satisfies((3, 9, 1), ">=3.8, !=3.9.*")
    assert not satisfies((3, 11, 2), "~=3.6.0")
    assert satisfies((3, 11, 2), "~=3.6")
    assert satisfies((3, 12, 0), "==3.12.*") and not satisfies((3, 11, 0), "==3.12.*")


def test_an_installed_python_the_classifiers_name_wins_and_none_names_the_version() -> None:
    pythons = [
        Python((3, 13, 1), None),
        Python((3, 11, 7), Path("/py311")),
        Python((3, 12, 4), Path("/py312")),
    ]
    assert choose(pythons, None, ["3.12"]).python == pythons[2]
    newer = choose(pythons, None, ["3.7", "3.8"])
    assert newer.python == pythons[1] and newer.older == "3.8"  # the next newer, said
    assert choose(pythons, None, ["3.12"]).older is None
    assert choose(pythons, ">=3.13", []).python == pythons[0]  # a download
    none = choose(pythons, "<3.8", ["3.6"])
    assert none.python is None and "Python <3.8" in none.why


def test_a_task_unscored_on_a_newer_python_than_its_commit_names_says_which_to_install() -> None:
    record = TaskEnvironment(rung="dated", key="k", python="3.11.7", older_python="3.6")
    failed = Oracle(scored=False, reason="the fix's tests cannot be collected: SyntaxError")
    assert on_newer_python(failed, record) == (
        "the fix's tests cannot be collected: SyntaxError (it ran on Python 3.11.7; the "
        "commit names Python 3.6 at the newest, and none of those is installed here: "
        "`uv python install 3.6` lets the next run use it)"
    )
    same = record.model_copy(update={"older_python": None})
    assert on_newer_python(failed, same) == failed.reason
    scored = Oracle(fail_to_pass=["t::a"], scored=True)
    assert on_newer_python(scored, record) is None
    answered = Oracle(pass_to_pass=["t::a"], scored=False, reason="no test fails before")
    assert on_newer_python(answered, record) == "no test fails before"  # they ran


def test_a_requirement_is_named_by_its_project_however_it_is_written() -> None:
    assert requirement_name("six>=1.9.0") == "six"
    assert requirement_name("Six==1.11.0") == "six"
    assert requirement_name("futures>=3.0;python_version=='2.7'") == "futures"
    assert requirement_name("backports.functools_lru_cache[extra] @ https://x") == (
        "backports-functools-lru-cache"
    )
