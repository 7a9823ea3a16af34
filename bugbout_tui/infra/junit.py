"""Per-test outcomes from the JUnit XML report pytest writes.

The report, not pytest's printed output, is what counts: a test can print anything,
but the report is written by pytest itself after every test has run. It is read in the
`xunit1` family, whose `file` attribute on every test case lets the pytest node id be
rebuilt exactly, which the dotted `classname` alone cannot do (a directory name may
contain dots, and a class name follows the module's).

What the report can and cannot tell, checked against pytest 8:

- A failing test has a `<failure>`, a test whose setup or teardown raised an
  `<error>`; a test that failed and then errored at teardown appears twice, and the
  failure is kept.
- `pytest.xfail` and an expected failure appear as `<skipped type="pytest.xfail">`.
- A test marked `xfail(strict=True)` that passes appears as a failure ("[XPASS(strict)]").
  One marked non-strict that passes appears exactly like a pass, so it is reported as
  `passed`, which is also how pytest itself counts it.
- A module or directory that fails to collect (an import error, a broken conftest)
  appears as one test case named after the module, with an empty `classname`; it is
  keyed by its path (`tests/test_x.py`, `tests/sub`), with no `::`.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed"]

MAX_REPORT_BYTES = 256 * 1024 * 1024
"""A report larger than this is refused rather than parsed: no real suite writes one with
captured output turned off, and a test could fill the scratch directory on purpose."""

MESSAGE_LIMIT = 600
"""Failure text kept per test: enough for the assertion and where it failed."""

# Which record wins when one test appears twice (a failure, then a teardown error).
_SEVERITY: dict[Outcome, int] = {
    "passed": 0,
    "skipped": 0,
    "xfailed": 0,
    "error": 1,
    "failed": 2,
}
_LOCATION = re.compile(r"^(\S.*?):(\d+): (.+)$")


class TestResult(BaseModel):
    """One test's outcome, with a short reason when it did not pass."""

    __test__: ClassVar[bool] = False  # a pydantic model, not a pytest test class
    model_config = ConfigDict(frozen=True)

    outcome: Outcome
    message: str | None = None
    """For failures and errors: the assertion (pytest's `E` lines) and the location of
    the failing frame; for skips and expected failures: the reason."""


class JUnitError(Exception):
    """The report is missing its structure, malformed or too large to trust."""


def parse_junit(path: Path, *, rootdir: Path) -> dict[str, TestResult]:
    """The outcome of every test case in the report, keyed by pytest node id.

    `rootdir` is the directory pytest used as its rootdir; node ids are relative to it.
    The file is parsed incrementally, so a large report does not sit in memory whole.

    Raises:
        JUnitError: the report is too large, or is not a well-formed pytest JUnit report.
    """
    size = os.path.getsize(path)
    if size > MAX_REPORT_BYTES:
        raise JUnitError(
            f"the JUnit report is {size} bytes, more than the {MAX_REPORT_BYTES} accepted"
        )
    outcomes: dict[str, TestResult] = {}
    root_seen = False
    try:
        for _, element in ET.iterparse(path, events=("end",)):
            if element.tag == "testcase":
                node_id, result = _read_case(element, rootdir)
                previous = outcomes.get(node_id)
                if previous is None or _SEVERITY[result.outcome] > _SEVERITY[previous.outcome]:
                    outcomes[node_id] = result
                element.clear()
            elif element.tag in ("testsuites", "testsuite"):
                root_seen = True
    except ET.ParseError as error:
        raise JUnitError(f"the JUnit report is not well-formed XML: {error}") from error
    if not root_seen:
        raise JUnitError("the file holds no <testsuite>: it is not a JUnit report")
    return outcomes


def _read_case(case: ET.Element, rootdir: Path) -> tuple[str, TestResult]:
    name = case.get("name")
    if name is None:
        raise JUnitError("a <testcase> has no name attribute")
    node_id = node_id_of(case.get("classname", ""), name, case.get("file"), rootdir)
    for child in case:
        if child.tag == "failure":
            return node_id, TestResult(outcome="failed", message=short_failure(child))
        if child.tag == "error":
            return node_id, TestResult(outcome="error", message=short_failure(child))
        if child.tag == "skipped":
            outcome: Outcome = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
            return node_id, TestResult(outcome=outcome, message=_cap(child.get("message")))
    return node_id, TestResult(outcome="passed")


def node_id_of(classname: str, name: str, file: str | None, rootdir: Path) -> str:
    """Rebuild the node id pytest reported as `classname` + `name`.

    pytest writes the node id's path part dotted and without `.py`, followed by the
    classes, as `classname`, and the function with its parameters as `name`. The `file`
    attribute, when it is the module the test was collected from, tells where the path
    ends. It is a different file for a test inherited from a base class defined
    elsewhere; then the longest dotted prefix that names a module under `rootdir` is the
    path.
    """
    if not classname:  # a module or directory that failed (or skipped) collection
        return file if file else name.replace(".", "/")
    parts = classname.split(".")
    if file:
        module = _dotted(file).split(".")
        if parts[: len(module)] == module:
            return "::".join([file, *parts[len(module) :], name])
    for cut in range(len(parts), 0, -1):
        candidate = "/".join(parts[:cut]) + ".py"
        if (rootdir / candidate).is_file():
            return "::".join([candidate, *parts[cut:], name])
    # No module found on disk: take the classes to start at the first capitalised part.
    cut = next((i for i, part in enumerate(parts) if part[:1].isupper()), len(parts))
    return "::".join(["/".join(parts[:cut]) + ".py", *parts[cut:], name])


def _dotted(file: str) -> str:
    return re.sub(r"\.py$", "", file.replace("/", "."))


def short_failure(element: ET.Element) -> str | None:
    """The assertion lines and the failing frame's `file:line: Error`, capped.

    Falls back to the report's one-line message when the traceback has no `E` lines
    (a strict XPASS, or `--tb=no` in the project's pytest-args).
    """
    text = element.text or ""
    lines = text.splitlines()
    asserted = [line[1:].strip() for line in lines if line == "E" or line.startswith("E ")]
    body = "\n".join(line for line in asserted if line)
    if not body:
        body = element.get("message") or next((ln.strip() for ln in lines if ln.strip()), "")
    location = next((ln for ln in reversed(lines) if _LOCATION.match(ln)), None)
    if location is None or location in body:
        return _cap(body)
    room = MESSAGE_LIMIT - len(location) - 1
    if len(body) > room:
        body = body[: max(room - 1, 0)] + "…"
    return _cap(f"{body}\n{location}" if body else location)


def _cap(text: str | None) -> str | None:
    if not text:
        return None
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"
