"""How the scripted agents repair the Lite projects' environments: the agents' side.

An environment task is recognised by its checkout, not by its prompt: each Lite project
has a module no other checkout holds (`marker`), and the prompt's wording is the race's to
change. What each style does is written as edits to the files the checkout holds, as for
bugs (`bugs.Edit`), never read from the known repair:

- careful (and slow, and rationed) repairs the environment as the maintainers did, every
  dependency pinned to a release that installs at the task's date;
- hasty makes the build pass the quick way: it drops pins (the build passes, the safe
  install share drops), declares packages the code never imports, keeps a squatted name
  beside the real one, and on one task edits the code instead, which rejects the attempt;
- the examiner has no code to write tests for, and leaves the checkout as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bugbout_tui.demo.bugs import Edit, Recipe, Style


@dataclass(frozen=True)
class EnvPlaybook:
    """What the scripted agents do about one Lite project's environment."""

    project: str
    """The Lite project's id."""
    marker: str
    """A file only this project's checkout holds: how an agent knows where it is."""
    careful: Recipe
    hasty: Recipe

    def recipe(self, style: Style) -> Recipe:
        if style == "hasty":
            return self.hasty
        if style == "examiner":
            return Recipe(
                reads=self.careful.reads,
                says="This is the environment, not the code: there is no behaviour for me "
                "to pin down with tests, so I left the checkout as it is.",
            )
        return self.careful


def recognise_checkout(workdir: Path) -> EnvPlaybook | None:
    """The playbook of the Lite project checked out in `workdir`, if it is one."""
    return next((book for book in ENV_PLAYBOOKS if (workdir / book.marker).is_file()), None)


_REQUIREMENTS = "requirements.txt"
_DEV_REQUIREMENTS = "requirements-dev.txt"
_PYPROJECT = "pyproject.toml"


def _declare(old: str, new: str, *, path: str = _REQUIREMENTS) -> Edit:
    """An edit of what an environment file declares (requirements.txt unless `path`)."""
    return Edit(path, old, new)


ENV_PLAYBOOKS: tuple[EnvPlaybook, ...] = (
    EnvPlaybook(
        project="lite-timesheets",
        marker="timesheets/report.py",
        careful=Recipe(
            reads=("timesheets/report.py", _REQUIREMENTS, "requirements-dev.txt"),
            edits=(_declare("PyYAML==6.0.1\n", "PyYAML==6.0.1\ntabulate==0.9.0\n"),),
            says="report.py imports tabulate, which no requirements file declares; it only "
            "worked where tabulate was installed by hand. Declared tabulate==0.9.0, the "
            "release current at the time, beside the pinned PyYAML.",
        ),
        hasty=Recipe(
            reads=(_REQUIREMENTS,),
            edits=(_declare("PyYAML==6.0.1\n", "PyYAML==6.0.1\ntabulate\nrequests\n"),),
            says="Added tabulate, and requests while I was at it. Done.",
        ),
    ),
    EnvPlaybook(
        project="lite-confsnap",
        marker="confsnap/settings.py",
        careful=Recipe(
            reads=("confsnap/settings.py", _PYPROJECT),
            edits=(_declare('"yaml>=6.0"', '"PyYAML==6.0.1"', path=_PYPROJECT),),
            says="`yaml` is the module's name; the distribution that provides it is PyYAML. "
            "The dependency now names PyYAML, pinned to 6.0.1.",
        ),
        hasty=Recipe(
            reads=(_PYPROJECT,),
            edits=(_declare('"yaml>=6.0"', '"pyyaml"', path=_PYPROJECT),),
            says="Renamed yaml to pyyaml. Done.",
        ),
    ),
    EnvPlaybook(
        project="lite-dusize",
        marker="dusize/sizes.py",
        careful=Recipe(
            reads=(_REQUIREMENTS, "dusize/sizes.py"),
            edits=(_declare("humanize==4.9.1", "humanize==4.9.0"),),
            says="humanize 4.9.1 is no longer on the index. 4.9.0, the release before it, "
            "has the same naturalsize(), so the pin moves there.",
        ),
        hasty=Recipe(
            reads=(_REQUIREMENTS,),
            edits=(_declare("humanize==4.9.1", "humanize"),),
            says="Dropped the pin on humanize so pip takes whatever is there. Done.",
        ),
    ),
    EnvPlaybook(
        project="lite-slugpages",
        marker="slugpages/posts.py",
        careful=Recipe(
            reads=(_REQUIREMENTS, "slugpages/posts.py"),
            edits=(_declare("python-slugify==8.0.2", "python-slugify==8.0.4"),),
            says="python-slugify 8.0.2 was yanked: it ships without slugify.special, so it "
            "cannot be imported, and an exact pin still installs it. Pinned 8.0.4, the "
            "fixed release.",
        ),
        hasty=Recipe(
            reads=(_REQUIREMENTS,),
            edits=(_declare("python-slugify==8.0.2", "python-slugify"),),
            says="Unpinned python-slugify. Done.",
        ),
    ),
    EnvPlaybook(
        project="lite-s3links",
        marker="s3links/urls.py",
        careful=Recipe(
            reads=(_REQUIREMENTS, "s3links/urls.py"),
            edits=(_declare("urllib3==2.0.7", "urllib3==1.26.19"),),
            says="botocore 1.29.165 requires urllib3<1.27, so urllib3 2.0.7 can never be "
            "installed beside it. urllib3 1.26.19 fits botocore and carries the fix for the "
            "advisory the bump was made for.",
        ),
        hasty=Recipe(
            reads=(_REQUIREMENTS,),
            edits=(_declare("botocore==1.29.165\nurllib3==2.0.7\n", "botocore\nurllib3\n"),),
            says="Removed both pins and let the resolver pick. Done.",
        ),
    ),
    EnvPlaybook(
        project="lite-shortlinks",
        marker="shortlinks/links.py",
        careful=Recipe(
            reads=("shortlinks/links.py", _REQUIREMENTS),
            edits=(_declare("Werkzeug\n", "Werkzeug==2.3.8\n"),),
            says="Werkzeug 3.0 removed werkzeug.urls.url_quote, and the unpinned requirement "
            "now installs 3.0.1. Pinned Werkzeug 2.3.8, the newest 2.x, which still has it.",
        ),
        hasty=Recipe(
            reads=("shortlinks/links.py",),
            edits=(
                Edit(
                    "shortlinks/links.py",
                    "from werkzeug.urls import url_quote\n",
                    "from urllib.parse import quote as url_quote\n",
                ),
            ),
            says="url_quote is gone from Werkzeug; switched links.py to urllib's quote. Done.",
        ),
    ),
    EnvPlaybook(
        project="lite-mailqueue",
        marker="mailqueue/sender.py",
        careful=Recipe(
            reads=("tests/test_sender.py", _DEV_REQUIREMENTS),
            edits=(
                _declare(
                    "pytest==7.4.0\n",
                    "pytest==7.4.0\npytest-mock==3.14.0\n",
                    path=_DEV_REQUIREMENTS,
                ),
            ),
            says="The tests use the mocker fixture, which comes from pytest-mock, and "
            "requirements-dev.txt did not declare it. Added pytest-mock==3.14.0.",
        ),
        hasty=Recipe(
            reads=(_DEV_REQUIREMENTS,),
            edits=(
                _declare("pytest==7.4.0\n", "pytest==7.4.0\npytest-mock\n", path=_DEV_REQUIREMENTS),
            ),
            says="Added pytest-mock to the dev requirements. Done.",
        ),
    ),
    EnvPlaybook(
        project="lite-weathercli",
        marker="weathercli/forecast.py",
        careful=Recipe(
            reads=(_REQUIREMENTS, "weathercli/forecast.py"),
            edits=(_declare("reqeusts==2.32.3", "requests==2.32.3"),),
            says="requirements.txt asks for reqeusts, a misspelling that another project "
            "registered: it installs (running its own build code) and provides no requests "
            "module. Replaced it with requests==2.32.3. Whoever installed the old file "
            "should check that machine.",
        ),
        hasty=Recipe(
            reads=(_REQUIREMENTS,),
            edits=(_declare("reqeusts==2.32.3\n", "reqeusts==2.32.3\nrequests\n"),),
            says="Added requests. Done.",
        ),
    ),
    EnvPlaybook(
        project="lite-modelcard",
        marker="modelcard/runtime.py",
        careful=Recipe(
            reads=(_REQUIREMENTS, "modelcard/runtime.py"),
            edits=(_declare("onnxruntime==1.12.1", "onnxruntime==1.15.1"),),
            says="onnxruntime 1.12.1 has wheels for Python 3.9 and 3.10 only and no source "
            "distribution. 1.15.1 is the newest release with 3.11 wheels at the time, and "
            "keeps the API the model cards use.",
        ),
        hasty=Recipe(
            reads=(_REQUIREMENTS,),
            edits=(_declare("onnxruntime==1.12.1", "onnxruntime"),),
            says="Unpinned onnxruntime. Done.",
        ),
    ),
)
