"""The text rules of mining, one by one: fix titles, references, merge titles, paths."""

from __future__ import annotations

import pytest

from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.models import IssueRef
from bugbout_tui.rules.fixwords import is_fix_title
from bugbout_tui.rules.mine import Layout, split_message
from bugbout_tui.rules.refs import find_references, references_in


@pytest.mark.parametrize(
    "title",
    [
        "Fix crash on empty input",
        "fixes handling of None",
        "Fixed off-by-one in pager",
        "Fixing the tokenizer for tabs",
        "fix: handle empty config",
        "fix(parser): accept trailing commas",
        "fix!: reject negative sizes",
        "Bugfix: wrong exit code",
        "HOTFIX timeout in client",
        "Hot-fix for the cache key",
        "bug-fix in date parsing",
        "Crash when the file is empty",
        "Parser crashes on BOM",
        "Regression in 2.1: slow import",
        "Repair the cache after a failed write",
        "Broken output with --json",
        "Incorrect result for negative numbers",
        "Wrong default encoding on Windows",
        "Avoid segfault in C extension",
        "Fix crash on empty input (#123)",
        "Fix #12",
        "Fixes #45: empty input",
        "Fixed issue 601",
        "Merge branch 'fix-crash'",
    ],
)
def test_fix_titles(title: str) -> None:
    assert is_fix_title(title)


@pytest.mark.parametrize(
    "title",
    [
        "Add prefix option",
        "Strip suffix from names",
        "Catch IndexError in the loop",
        "Add fixture for temporary homes",
        "Use fixtures from conftest",
        "Rename fix_paths helper",
        "Add --fix option to the linter",
        "Add auto-fix mode",
        "Add pre-commit hook support (fixes #537)",
        "Add pre-commit hook support, fixes #537",
        "Closes #12",
        "Resolve merge conflicts",
        "Resolves #12",
        'Revert "Fix crash on empty input"',
        "revert: fix(parser): accept trailing commas",
        "Add non-regression tests",
        "fixup! Add cache",
        "Debugging output for the scheduler",
        "",
    ],
)
def test_not_fix_titles(title: str) -> None:
    assert not is_fix_title(title)


def test_closing_phrase_kept_when_another_fix_word_remains() -> None:
    assert is_fix_title("Handle crash in parser (fixes #537)")


def test_squash_title_suffix_is_a_reference_of_unknown_kind() -> None:
    assert find_references("Fix crash on empty input (#123)", "") == (IssueRef(number=123),)


def test_closing_phrases_in_the_body_come_before_the_squash_suffix() -> None:
    refs = find_references("Fix crash (#123)", "Long story.\n\nFixes #45")
    assert refs == (IssueRef(number=45), IssueRef(number=123))


def test_closing_phrase_in_title_comes_first() -> None:
    refs = find_references("Handle empty files, closes #9 (#30)", "See #2")
    assert [r.number for r in refs] == [9, 30, 2]


@pytest.mark.parametrize(
    "text",
    [
        "Fixes #45",
        "fixes #45",
        "FIXED #45",
        "fix #45",
        "Closes: #45",
        "closed #45",
        "close #45",
        "Resolves #45",
        "resolved #45",
        "resolve #45",
        "fixed issue #45",
        "Fixes issue 45",
    ],
)
def test_closing_keywords_in_every_form(text: str) -> None:
    assert find_references("Handle empty input", f"Some words.\n\n{text}") == (IssueRef(number=45),)


def test_several_references_in_one_closing_phrase() -> None:
    refs = find_references("Fix two crashes", "Fixes #1, #2 and fixes #3")
    assert [r.number for r in refs] == [1, 2, 3]


def test_merge_pull_request_is_a_pull_reference_after_closing_phrases() -> None:
    refs = find_references("Fix crash on empty input", "Fixes #10", pull=12)
    assert refs == (IssueRef(number=10), IssueRef(number=12, kind="pull"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#123", IssueRef(number=123)),
        ("see psf/requests#45", IssueRef(number=45, repo="psf/requests")),
        (
            "https://github.com/o/r/issues/45",
            IssueRef(number=45, repo="o/r", kind="issue"),
        ),
        ("https://github.com/o/r/pull/46", IssueRef(number=46, repo="o/r", kind="pull")),
        (
            "https://ghe.example.com/team/proj/issues/7#issuecomment-1",
            IssueRef(number=7, repo="team/proj", kind="issue"),
        ),
        ("GH-45", IssueRef(number=45)),
        ("gh-45", IssueRef(number=45)),
        ("issue601", IssueRef(number=601)),
        ("issue 601", IssueRef(number=601)),
        ("Issue #601", IssueRef(number=601)),
        ("PR #12", IssueRef(number=12, kind="pull")),
        ("pull request #12", IssueRef(number=12, kind="pull")),
    ],
)
def test_reference_forms(text: str, expected: IssueRef) -> None:
    assert references_in(f"words {text}, more words") == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "commit #123abc",
        "colour #fff and #ffffff",
        "written in C# today",
        "# Heading",
        "## 1. Setup",
        "&#123; entity",
        "see foo.py#L123",
        "version #1.2",
        "page#12",
        "#0",
        "tissue 12",
    ],
)
def test_no_false_references(text: str) -> None:
    assert references_in(text) == []


def test_repeated_reference_keeps_first_place_and_learns_its_kind() -> None:
    refs = find_references("Fix crash (#5)", "See https://github.com/o/r/issues/5 and #5")
    assert refs == (IssueRef(number=5), IssueRef(number=5, repo="o/r", kind="issue"))
    refs = find_references("Fix crash (#5)", "Fixes #5, PR #5")
    assert refs == (IssueRef(number=5, kind="pull"),)


def test_github_merge_title_is_the_pull_request_title() -> None:
    message = "Merge pull request #12 from user/branch\n\nFix crash on empty input\n\nMore."
    assert split_message(message, merge=True) == ("Fix crash on empty input", "More.", 12)


def test_github_merge_without_title_keeps_its_subject() -> None:
    message = "Merge pull request #12 from user/fix-crash\n"
    assert split_message(message, merge=True) == (
        "Merge pull request #12 from user/fix-crash",
        "",
        12,
    )


def test_gitlab_merge_title_from_body() -> None:
    message = "Merge branch 'fix-x' into 'main'\n\nFix crash in x\n\nCloses #3"
    assert split_message(message, merge=True) == ("Fix crash in x", "Closes #3", None)


def test_merge_with_conflicts_list_keeps_its_subject() -> None:
    message = "Merge branch 'topic'\n\nConflicts:\n\ta.py\n"
    assert split_message(message, merge=True)[0] == "Merge branch 'topic'"


def test_bitbucket_merge() -> None:
    message = "Merged in fix-x (pull request #8)\n\nFix crash in x"
    assert split_message(message, merge=True) == ("Fix crash in x", "", 8)


def test_plain_commit_title_is_its_first_line() -> None:
    message = "Merge pull request #12 from a/b\n\nbody"
    assert split_message(message, merge=False) == ("Merge pull request #12 from a/b", "body", None)


def test_layout_sorts_paths() -> None:
    layout = Layout.from_settings("./src/pkg/", "tests")
    assert layout.source == "src/pkg"
    assert layout.is_source_file("src/pkg/core.py")
    assert layout.is_source_file("src/pkg/sub/deep.py")
    assert not layout.is_source_file("src/pkg/README.md")
    assert not layout.is_source_file("src/pkgother/core.py")
    assert not layout.is_source_file("setup.py")
    assert not layout.is_source_file("src/pkg/tests/test_core.py")
    assert not layout.is_source_file("src/pkg/tests/helpers.py")
    assert layout.is_test_module("tests/test_core.py")
    assert layout.is_test_module("tests/helpers.py")
    assert layout.is_test_module("tests/unit/conftest.py")
    assert layout.is_test_module("src/pkg/core_test.py")
    assert layout.is_test_module("src/pkg/tests/helpers.py")
    assert not layout.is_test_module("tests/data/case.json")
    assert layout.is_test_data("tests/data/case.json")
    assert not layout.is_test_data("docs/index.md")


def test_layout_at_repository_root() -> None:
    layout = Layout.from_settings(".", "tests")
    assert layout.is_source_file("module.py")
    assert not layout.is_source_file("tests/test_module.py")


@pytest.mark.parametrize("source", ["/abs/pkg", "../elsewhere", "src/../../x"])
def test_layout_rejects_paths_outside_the_repository(source: str) -> None:
    with pytest.raises(UsageError, match=r"project\.source"):
        Layout.from_settings(source, "tests")


def test_unusual_tests_directory_disables_the_diff_filter() -> None:
    assert Layout.from_settings("pkg", "my tests").diff_attributes() is None
    attributes = Layout.from_settings("pkg", "qa/checks").diff_attributes()
    assert attributes is not None
    assert "/qa/checks/**/*.py !diff" in attributes
