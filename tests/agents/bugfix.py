"""A contestant with a fixed temperament, for the two bugs of `tests/test_pipeline.py`.

Usage: bugfix.py STYLE PROMPT_FILE WORKDIR

It tells the bug from the issue text in the prompt, as an agent would, and edits what
it finds in the working copy; it knows nothing the agents are not shown. Styles:

    right       the correct fix, and a regression test
    wrong       a fix that makes the reported example pass and breaks the case next to
                it, with a test that passes on that fix
    tests-only  a correct test that reproduces the bug, and no fix
    idle        nothing at all

A change that no longer finds the code it expects stops the script with an error, so a
changed project cannot turn a fix into a silent no-op.
"""

from __future__ import annotations

import sys
from pathlib import Path

CHUNKS = "src/tallykit/chunking.py"
MEDIAN = "src/tallykit/stats.py"
BUGGY_RANGE = "range(0, len(items) - size + 1, size)"
BUGGY_MEDIAN = "    return ordered[len(ordered) // 2]\n"

SOURCE: dict[tuple[str, str], tuple[str, str, str]] = {
    ("chunks", "right"): (CHUNKS, BUGGY_RANGE, "range(0, len(items), size)"),
    # the remainder survives only when it is one short of a whole chunk, and size 1
    # now gains an empty chunk at the end
    ("chunks", "wrong"): (CHUNKS, BUGGY_RANGE, "range(0, len(items) - size + 2, size)"),
    ("median", "right"): (
        MEDIAN,
        BUGGY_MEDIAN,
        "    middle = len(ordered) // 2\n"
        "    return ordered[middle] if len(ordered) % 2 else "
        "(ordered[middle - 1] + ordered[middle]) / 2\n",
    ),
    # averages the middle pair of every list, odd lengths included
    ("median", "wrong"): (
        MEDIAN,
        BUGGY_MEDIAN,
        "    return (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2\n",
    ),
}

TESTS: dict[tuple[str, str], tuple[str, str]] = {
    ("chunks", "right"): (
        "tests/test_chunks_regression.py",
        "from tallykit.chunking import chunks\n\n\n"
        "def test_remainder_is_its_own_chunk():\n"
        "    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]\n\n\n"
        "def test_size_one_still_works():\n"
        "    assert chunks([1, 2, 3], 1) == [[1], [2], [3]]\n",
    ),
    ("chunks", "wrong"): (
        "tests/test_chunks_fix.py",
        "from tallykit.chunking import chunks\n\n\n"
        "def test_chunks_keeps_the_remainder():\n"
        "    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]\n",
    ),
    ("chunks", "tests-only"): (
        "tests/test_chunks_issue.py",
        "from tallykit.chunking import chunks\n\n\n"
        "def test_reported_example():\n"
        "    assert chunks([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]\n\n\n"
        "def test_a_longer_remainder():\n"
        '    assert chunks("abcdefg", 3) == ["abc", "def", "g"]\n',
    ),
    ("median", "right"): (
        "tests/test_median_regression.py",
        "from tallykit.stats import median\n\n\n"
        "def test_median_of_even_and_odd_counts():\n"
        "    assert median([1, 2, 3, 4]) == 2.5\n"
        "    assert median([1, 2, 3]) == 2\n",
    ),
    # it believes a median is always the mean of a middle pair, so always a float
    ("median", "wrong"): (
        "tests/test_median_fix.py",
        "from tallykit.stats import median\n\n\n"
        "def test_median_is_the_mean_of_the_middle_values():\n"
        "    assert median([1, 2, 3, 4]) == 2.5\n"
        "    assert isinstance(median([7]), float)\n",
    ),
    ("median", "tests-only"): (
        "tests/test_median_issue.py",
        "from tallykit.stats import median\n\n\n"
        "def test_reported_example():\n"
        "    assert median([1, 2, 3, 4]) == 2.5\n\n\n"
        "def test_two_values():\n"
        "    assert median([1, 3]) == 2\n\n\n"
        "def test_odd_count_unchanged():\n"
        "    assert median([3, 1, 2]) == 2\n",
    ),
}


def bug_of(prompt: str) -> str:
    for bug in ("chunks", "median"):
        if bug in prompt:
            return bug
    raise SystemExit("no bug I know in this issue")


def main() -> None:
    style, prompt, workdir = sys.argv[1], Path(sys.argv[2]).read_text(), Path(sys.argv[3])
    if style not in ("right", "wrong", "tests-only", "idle"):
        raise SystemExit(f"unknown style {style!r}")
    if style == "idle":
        print("nothing to do", flush=True)
        return
    bug = bug_of(prompt)
    if (bug, style) in SOURCE:
        path, old, new = SOURCE[bug, style]
        target = workdir / path
        text = target.read_text()
        if old not in text:
            raise SystemExit(f"{path} no longer holds {old!r}")
        target.write_text(text.replace(old, new, 1))
    test_path, test = TESTS[bug, style]
    (workdir / test_path).write_text(test)
    print(f"{style}: {bug} done", flush=True)


main()
