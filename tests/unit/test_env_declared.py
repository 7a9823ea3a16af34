"""D¹: what a tree's environment files declare, read from every kind of file."""

from __future__ import annotations

from pathlib import Path

from bugbout_tui.core.env_models import Declared
from bugbout_tui.infra.env_declared import declared_packages, direct_reference


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def by_name(found: list[Declared]) -> dict[str, Declared]:
    return {declared.name: declared for declared in found}


def test_requirements_files_with_includes_comments_markers_extras_and_hashes(
    tmp_path: Path,
) -> None:
    found = declared_packages(
        tree(
            tmp_path,
            {
                "requirements.txt": "# runtime\n-r requirements/base.txt\n-c constraints.txt\n"
                "Requests[socks]==2.31.0 --hash=sha256:abc \\\n    --hash=sha256:def\n"
                "Typing_Extensions>=4 ; python_version < '3.11'  # backport\n"
                "--index-url https://example.invalid/simple\n"
                "urllib3\nzope.interface===5.4.0\nnumpy==1.*\n",
                "requirements/base.txt": "six==1.16.0\n",
                "constraints.txt": "urllib3==1.26.18\nnot-declared==1.0\n",
                "requirements-test.txt": "pytest>=7\n",
            },
        )
    )
    assert [d.name for d in found] == [
        "six",
        "pytest",
        "requests",
        "typing-extensions",
        "urllib3",
        "zope-interface",
        "numpy",
    ], "the files in path order, each with what it includes where it includes it"
    named = by_name(found)
    assert named["requests"] == Declared(
        name="requests",
        requirement="Requests[socks]==2.31.0",
        pinned="2.31.0",
        source="requirements.txt",
    )
    assert named["typing-extensions"].requirement == (
        "Typing_Extensions>=4 ; python_version < '3.11'"
    )
    assert named["typing-extensions"].pinned is None
    assert named["six"].source == "requirements/base.txt"
    assert named["urllib3"].pinned == "1.26.18", "a constraints file pins what is declared"
    assert named["urllib3"].requirement == "urllib3"
    assert named["zope-interface"].pinned == "5.4.0"
    assert named["numpy"].pinned is None, "a wildcard is not a pin"
    assert named["pytest"].source == "requirements-test.txt"


def test_pyproject_dependencies_test_extras_and_groups(tmp_path: Path) -> None:
    found = declared_packages(
        tree(
            tmp_path,
            {
                "pyproject.toml": '[project]\nname = "My_Proj"\n'
                'dependencies = ["attrs==23.1.0", "click[colour]>=8; sys_platform != \'win32\'"]\n'
                "[project.optional-dependencies]\n"
                'test = ["hypothesis", "my-proj[yaml]"]\ndocs = ["sphinx"]\n'
                "[dependency-groups]\n"
                'dev = ["coverage==7.0", {include-group = "typing"}]\ntyping = ["mypy"]\n',
            },
        )
    )
    assert [(d.name, d.pinned) for d in found] == [
        ("attrs", "23.1.0"),
        ("click", None),
        ("hypothesis", None),
        ("coverage", "7.0"),
        ("mypy", None),
    ]
    assert found[1].requirement == "click[colour]>=8; sys_platform != 'win32'"
    assert {d.source for d in found} == {"pyproject.toml"}


def test_setup_cfg_and_setup_py_literals_read_never_run(tmp_path: Path) -> None:
    found = declared_packages(
        tree(
            tmp_path,
            {
                "setup.cfg": "[metadata]\nname = proj\n[options]\ninstall_requires =\n"
                "    jinja2==3.1.2  # templates\n    markupsafe\n"
                "tests_require = pytest-mock\n"
                "[options.extras_require]\ntesting = freezegun==1.2\nyaml = pyyaml\n",
                "setup.py": "import sys\nfrom setuptools import setup\n"
                "REQUIRES = ['idna>=3', 'certifi==2023.7.22']\n"
                "sys.exit('never run')\n"
                "setuptools.setup(install_requires=REQUIRES,\n"
                "    tests_require=['mock'] + computed(),\n"
                "    extras_require={'test': ['responses==0.23'], 'docs': ['furo']})\n",
            },
        )
    )
    assert [(d.name, d.pinned, d.source) for d in found] == [
        ("jinja2", "3.1.2", "setup.cfg"),
        ("markupsafe", None, "setup.cfg"),
        ("pytest-mock", None, "setup.cfg"),
        ("freezegun", "1.2", "setup.cfg"),
        ("idna", None, "setup.py"),
        ("certifi", "2023.7.22", "setup.py"),
        ("responses", "0.23", "setup.py"),
    ]


def test_a_name_declared_twice_is_kept_once_where_it_is_pinned(tmp_path: Path) -> None:
    found = declared_packages(
        tree(
            tmp_path,
            {
                "pyproject.toml": '[project]\nname = "p"\ndependencies = ["requests>=2"]\n',
                "requirements.txt": "requests==2.31.0\n",
            },
        )
    )
    assert found == [
        Declared(
            name="requests",
            requirement="requests==2.31.0",
            pinned="2.31.0",
            source="requirements.txt",
        )
    ]


def test_direct_urls_vcs_and_paths_are_declared_as_written(tmp_path: Path) -> None:
    found = declared_packages(
        tree(
            tmp_path,
            {
                "requirements.txt": "-e .\n"
                "pkg-a @ https://example.invalid/pkg_a-1.0.tar.gz\n"
                "-e git+https://example.invalid/team/tool.git@v1#egg=Tool_X\n"
                "git+https://example.invalid/team/other-lib.git@main\n"
                "https://example.invalid/files/Wheelie-2.0-py3-none-any.whl\n"
                "./libs/local\n",
                "libs/local/pyproject.toml": '[project]\nname = "Local.Thing"\n',
            },
        )
    )
    assert [(d.name, d.requirement, d.pinned) for d in found] == [
        ("pkg-a", "pkg-a @ https://example.invalid/pkg_a-1.0.tar.gz", None),
        ("tool-x", "-e git+https://example.invalid/team/tool.git@v1#egg=Tool_X", None),
        ("other-lib", "git+https://example.invalid/team/other-lib.git@main", None),
        ("wheelie", "https://example.invalid/files/Wheelie-2.0-py3-none-any.whl", None),
        ("local-thing", "./libs/local", None),
    ]
    assert [direct_reference(d.requirement) for d in found] == [
        "https://example.invalid/pkg_a-1.0.tar.gz",
        "git+https://example.invalid/team/tool.git@v1#egg=Tool_X",
        "git+https://example.invalid/team/other-lib.git@main",
        "https://example.invalid/files/Wheelie-2.0-py3-none-any.whl",
        "./libs/local",
    ]
    assert direct_reference("requests[socks]==2.0; python_version < '4'") is None


def test_a_tree_without_environment_files_declares_nothing(tmp_path: Path) -> None:
    assert declared_packages(tree(tmp_path, {"pyproject.toml": "not = [toml"})) == []
