"""The arithmetic of an environment repair's score: how faithful its declared packages
are to what its run used, how it ended, how large it was."""

from __future__ import annotations

import pytest

from bugbout_tui.core.env_models import EnvInstall, EnvTrace
from bugbout_tui.core.patch import FileChange, Patch
from bugbout_tui.rules.env_score import changed_lines, manifest_scores, repair_status


def test_precision_recall_and_f1_of_the_declared_against_the_used() -> None:
    precision, recall, f1 = manifest_scores(
        ["Requests", "click", "unused-pkg"], ["requests", "click", "urllib3", "idna"]
    )

    assert precision == pytest.approx(2 / 3)
    assert recall == pytest.approx(2 / 4)
    assert f1 == pytest.approx(2 * (2 / 3) * (1 / 2) / (2 / 3 + 1 / 2))


def test_names_are_compared_as_pep_503_names() -> None:
    assert manifest_scores(
        ["Zope.Interface", "ruamel_yaml"], ["zope-interface", "ruamel.yaml"]
    ) == (
        1.0,
        1.0,
        1.0,
    )


def test_duplicates_count_once() -> None:
    assert manifest_scores(["a", "A", "a"], ["a"]) == (1.0, 1.0, 1.0)


def test_a_score_that_would_divide_by_nothing_is_none() -> None:
    assert manifest_scores([], ["a"]) == (None, 0.0, None)
    assert manifest_scores(["a"], []) == (0.0, None, None)
    assert manifest_scores([], []) == (None, None, None)


def test_no_overlap_is_an_f1_of_zero() -> None:
    assert manifest_scores(["a"], ["b"]) == (0.0, 0.0, 0.0)


OK_INSTALL = EnvInstall(ok=True, exit_code=0)
FAILED_INSTALL = EnvInstall(ok=False, exit_code=1)


@pytest.mark.parametrize(
    ("install", "trace", "status"),
    [
        (OK_INSTALL, EnvTrace(ok=True, exit_code=0), "resolved"),
        (OK_INSTALL, EnvTrace(ok=False, exit_code=1), "run-failed"),
        (OK_INSTALL, None, "not-run"),
        (FAILED_INSTALL, None, "install-failed"),
        (FAILED_INSTALL, EnvTrace(ok=True, exit_code=0), "install-failed"),
        (None, None, "not-run"),
    ],
)
def test_a_repair_is_resolved_when_install_and_run_both_succeed(
    install: EnvInstall | None, trace: EnvTrace | None, status: str
) -> None:
    assert repair_status(install, trace) == status


def test_changed_lines_count_only_the_files_named() -> None:
    patch = Patch(
        files=[
            FileChange(
                path="requirements.txt",
                status="modified",
                part="other",
                added_lines=2,
                removed_lines=1,
            ),
            FileChange(path="src/a.py", status="modified", part="source", added_lines=9),
        ]
    )

    assert changed_lines(patch, ["requirements.txt"]) == 3
    assert changed_lines(patch, []) == 0
