"""What a tree declares for its tests' run: the one reading the clean install and D¹
share, so neither names a package the other never had."""

from __future__ import annotations

from pathlib import Path

from bugbout_tui.infra.env_declared import declared_packages
from bugbout_tui.infra.run_declaration import run_declaration


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_project_with_test_extras_groups_and_requirement_files(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\ndependencies = ["attrs"]\n'
            "[project.optional-dependencies]\n"
            'test = ["pytest"]\ndocs = ["sphinx"]\nDev = ["ruff"]\n'
            '[dependency-groups]\ntesting = ["hypothesis", {include-group = "more"}]\n'
            'more = ["mock"]\nlint = ["flake8"]\n"test\\n" = ["sneaky"]\n',
            "requirements-dev.txt": "coverage\n",
            "requirements/test.txt": "-c ../constraints.txt\nfreezegun\n",
            "constraints.txt": "freezegun==1.2\n",
            "requirements-docs.txt": "furo\n",
            "docs/requirements.txt": "furo\n",
        },
    )

    declared = run_declaration(root)

    assert declared.project
    assert declared.extras == ("test", "Dev")
    assert declared.groups == ("testing",)
    assert [p.relative_to(root).as_posix() for p in declared.files] == [
        "requirements/test.txt",
        "requirements-dev.txt",
    ]
    assert declared.tests_require == ()
    assert [(line.text, line.constraint) for line in declared.requirements] == [
        ("attrs", False),
        ("pytest", False),
        ("ruff", False),
        ("hypothesis", False),
        ("mock", False),
        ("freezegun==1.2", True),
        ("freezegun", False),
        ("coverage", False),
    ]
    assert {line.source.name for line in declared.requirements} == {
        "pyproject.toml",
        "requirements-dev.txt",
        "constraints.txt",
        "test.txt",
    }


def test_setuptools_tests_require_is_installed_on_its_own(tmp_path: Path) -> None:
    """No install of the project takes it; what is no requirement is left out of both."""
    root = tree(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\n"
            "setup(tests_require=['pytest>=7', '--index-url=http://x', './local'],\n"
            "      extras_require={'testing': ['mock'], 'yaml': ['pyyaml']})\n",
            "setup.cfg": "[metadata]\nname = p\n[options]\ninstall_requires = six\n"
            "tests_require =\n    nose  # old\n    -e ../x\n",
        },
    )

    declared = run_declaration(root)

    assert declared.project and declared.extras == ("testing",)
    assert declared.tests_require == ("nose", "pytest>=7")
    assert [d.name for d in declared_packages(root)] == ["six", "nose", "pytest", "mock"]


def test_a_tree_that_is_no_project_declares_only_its_groups_and_files(tmp_path: Path) -> None:
    """uv cannot install a setup.cfg alone, so what it names is never installed."""
    root = tree(
        tmp_path,
        {
            "setup.cfg": "[metadata]\nname = p\n[options]\ninstall_requires = six\n"
            "tests_require = nose\n",
            "requirements.txt": "attrs\n",
        },
    )

    alone = run_declaration(root)
    (root / "pyproject.toml").write_text('[tool.black]\n[dependency-groups]\ntest = ["pytest"]\n')
    (root / "setup.cfg").write_text("[flake8]\nmax-line-length = 99\n")
    tooled = run_declaration(root)

    assert not alone.project and alone.tests_require == ()
    assert [line.text for line in alone.requirements] == ["attrs"]
    assert not tooled.project and tooled.groups == ("test",)
    assert [line.text for line in tooled.requirements] == ["pytest", "attrs"]


def test_a_tool_only_pyproject_beside_a_named_setup_cfg_is_a_project(tmp_path: Path) -> None:
    """setuptools builds it, as pip and uv do."""
    root = tree(
        tmp_path,
        {
            "pyproject.toml": "[tool.black]\nline-length = 99\n",
            "setup.cfg": "[metadata]\nname = p\n[options]\ninstall_requires = six\n"
            "[options.extras_require]\ntest = pytest\n",
        },
    )

    declared = run_declaration(root)

    assert declared.project and declared.extras == ("test",)
    assert [line.text for line in declared.requirements] == ["six", "pytest"]
