"""Recorded cross-examinations the judge benchmark builds its populations from.

Each case is one task of a real history, cross-examined by bugbout's own stage on three
kinds of patch: the maintainers' fix (`right`), part of it (`partial`, when the fix has
more than one hunk), and a source change that leaves the behaviour alone (`wrong`). The
`right` author's tests are the fix's own tests, so its reproductions are the bug's; the
suite is the repository's tests at the base. The hidden tests then scored each patch, so
every archetype carries its real status. Nothing here runs a test: the benchmark mixes
these recorded cells into the matrices a population of agents would have produced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bugbout_tui.core.models import Matrix, ResolutionStatus

Archetype = Literal["right", "partial", "wrong"]
ARCHETYPES: tuple[Archetype, ...] = ("right", "partial", "wrong")

CASES = Path(__file__).resolve().parents[1] / "data" / "judge-cases.json"
"""Where the recorded cases are kept, beside the benchmarks."""


class JudgeCase(BaseModel):
    """One task's recorded cross-examination and the hidden tests' word on each patch."""

    model_config = ConfigDict(extra="forbid")

    project: str
    """The history it came from, e.g. `jd/tenacity`."""
    task: str
    matrix: Matrix
    """Trees `base` and one per archetype recorded (`partial` may be missing); authors
    `right` (a contestant: the fix's tests) and `suite`. Suite tests whose outcome is
    the same on every tree are left out: they can neither reproduce nor break."""
    truth: dict[Archetype, ResolutionStatus] = Field(default_factory=dict)
    """Each recorded archetype's status from scoring with the hidden tests."""


class JudgeCases(BaseModel):
    """`benchmarks/data/judge-cases.json`: every recorded case, and where they came from."""

    model_config = ConfigDict(extra="forbid")

    recorded_from: dict[str, str] = Field(default_factory=dict)
    """Project → the commit its history was mined at."""
    cases: list[JudgeCase] = Field(default_factory=list)


def load_cases(path: Path = CASES) -> JudgeCases:
    return JudgeCases.model_validate_json(path.read_text(encoding="utf-8"))
