"""Mining real git histories: each rule, each reason, and the traps of real repositories."""

from __future__ import annotations

import subprocess
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from gitrepo import GitRepo

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.core.models import IssueRef, Reason
from bugbout_tui.infra.git import EmptyRepositoryError
from bugbout_tui.rules.mine import Candidate, LinkedIssue, MiningResult, mine

CORE = "def parse(text):\n    return text.split()\n"
TESTS = (
    "import pytest\n"
    "\n"
    "\n"
    "def test_parse():\n"
    "    assert parse('a b') == ['a', 'b']\n"
    "\n"
    "\n"
    "class TestParser:\n"
    "    def test_words(self):\n"
    "        assert True\n"
    "\n"
    "    def test_spaces(self):\n"
    "        assert True\n"
)


def _project(repo: GitRepo) -> str:
    return repo.commit(
        "Initial layout",
        files={
            "src/pkg/__init__.py": "",
            "src/pkg/core.py": CORE,
            "src/pkg/util.py": "X = 1\n",
            "src/pkg/extra.py": "Y = 1\n",
            "tests/test_core.py": TESTS,
            "README.md": "# pkg\n",
        },
    )


def _mine(repo: GitRepo, **settings: Any) -> MiningResult:
    options: dict[str, Any] = {
        "ref": "refs/heads/main",
        "source": "src/pkg",
        "tests": "tests",
        "since": None,
        "max_source_files": 2,
    }
    options.update(settings)
    return mine(repo.root, **options)


def _reason(result: MiningResult, sha: str) -> Reason | None:
    reasons = [e.reason for e in result.excluded if e.commit == sha]
    assert len(reasons) <= 1
    return reasons[0] if reasons else None


def _candidate(result: MiningResult, sha: str) -> Candidate:
    found = [c for c in result.candidates if c.commit == sha]
    assert found, f"{sha} was left out: {_reason(result, sha)}"
    return found[0]


def _fix(repo: GitRepo, title: str, also: dict[str, str] | None = None) -> str:
    """A typical fix: one source file and one new test function, plus the files `also`."""
    files = {
        "src/pkg/core.py": CORE + f"# {title}\n",
        "tests/test_core.py": repo.read("tests/test_core.py") + "\n\ndef test_new():\n    pass\n",
    }
    return repo.commit(title, files={**files, **(also or {})})


def test_squashed_fix_becomes_a_candidate(git_repo: GitRepo) -> None:
    base = _project(git_repo)
    sha = git_repo.commit(
        "Fix crash on empty input (#123)",
        files={
            "src/pkg/core.py": CORE.replace("text.split()", "text.split() if text else []"),
            "tests/test_core.py": TESTS + "\n\ndef test_empty():\n    assert parse('') == []\n",
        },
    )
    result = _mine(git_repo)
    assert result.head == sha
    candidate = _candidate(result, sha)
    assert candidate.base_commit == base
    assert candidate.title == "Fix crash on empty input (#123)"
    assert candidate.refs == (IssueRef(number=123),)
    assert candidate.source_files == ("src/pkg/core.py",)
    assert candidate.test_files == ("tests/test_core.py",)
    assert candidate.added_tests == ("test_empty",)
    assert candidate.date.tzinfo is not None
    assert candidate.date == datetime.fromisoformat(git_repo.git("log", "-1", "--format=%cI"))


def test_every_change_is_examined_once_newest_first(git_repo: GitRepo) -> None:
    _project(git_repo)
    first = _fix(git_repo, "Fix one (#1)")
    second = _fix(git_repo, "Fix two (#2)")
    git_repo.commit("Update docs", files={"README.md": "# pkg\n\nMore.\n"})
    result = _mine(git_repo)
    assert [c.commit for c in result.candidates] == [second, first]
    assert result.examined == 4 == len(result.candidates) + len(result.excluded)


def test_fix_word_only_in_a_closing_phrase_waits_for_its_issue(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = _fix(git_repo, "Add pre-commit hook support (fixes #537)")
    (candidate,) = _mine(git_repo).candidates
    assert candidate.commit == sha
    assert candidate.confirm == LinkedIssue(IssueRef(number=537))


def test_feature_is_not_a_fix(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = _fix(git_repo, "Add pre-commit hook support (#537)")
    assert _reason(_mine(git_repo), sha) is Reason.NOT_A_FIX


@pytest.mark.parametrize("title", ["Add prefix option (#4)", "Catch IndexError (#4)"])
def test_fix_inside_another_word_is_not_a_fix(git_repo: GitRepo, title: str) -> None:
    _project(git_repo)
    sha = _fix(git_repo, title)
    assert _reason(_mine(git_repo), sha) is Reason.NOT_A_FIX


def test_fixture_change_is_not_a_fix(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = _fix(git_repo, "Add fixture for temporary files (#8)")
    assert _reason(_mine(git_repo), sha) is Reason.NOT_A_FIX


@pytest.mark.parametrize(
    "title",
    ["fix: empty input (#5)", "fix(parser): empty input (#5)", "fix!: empty input (#5)"],
)
def test_conventional_commit_fix(git_repo: GitRepo, title: str) -> None:
    _project(git_repo)
    sha = _fix(git_repo, title)
    assert _candidate(_mine(git_repo), sha).title == title


def test_no_source_change(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = git_repo.commit(
        "Fix typo in docs (#3)",
        files={"README.md": "# Pkg\n", "tests/test_core.py": TESTS + "\ndef test_x():\n    pass\n"},
    )
    assert _reason(_mine(git_repo), sha) is Reason.NO_SOURCE_CHANGE


def test_too_many_source_files(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = _fix(git_repo, "Fix three modules (#3)", {"src/pkg/util.py": "X = 2\n"})
    ok = _fix(git_repo, "Fix two modules (#4)", {"src/pkg/extra.py": "Y = 2\n"})
    result = _mine(git_repo, max_source_files=1)
    assert _reason(result, sha) is Reason.TOO_MANY_SOURCE_FILES
    assert _reason(result, ok) is Reason.TOO_MANY_SOURCE_FILES
    assert _candidate(_mine(git_repo, max_source_files=2), ok)


def test_modified_test_is_not_an_added_test(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = git_repo.commit(
        "Fix crash (#3)",
        files={
            "src/pkg/core.py": CORE + "# fixed\n",
            "tests/test_core.py": TESTS.replace(
                "def test_parse():", "def test_parse(tmp_path):"
            ).replace("assert True", "assert 1 == 1"),
        },
    )
    assert _reason(_mine(git_repo), sha) is Reason.NO_TEST_ADDED


def test_no_issue(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = _fix(git_repo, "Fix crash on empty input")
    assert _reason(_mine(git_repo), sha) is Reason.NO_ISSUE


def test_rules_apply_in_order(git_repo: GitRepo) -> None:
    _project(git_repo)
    docs = git_repo.commit("Fix wording", files={"README.md": "# Pkg\n"})
    untested = git_repo.commit(
        "Fix three modules",
        files={"src/pkg/core.py": "", "src/pkg/util.py": "", "src/pkg/extra.py": ""},
    )
    result = _mine(git_repo)
    assert _reason(result, docs) is Reason.NO_SOURCE_CHANGE
    assert _reason(result, untested) is Reason.TOO_MANY_SOURCE_FILES


def test_issue_forms_in_titles(git_repo: GitRepo) -> None:
    _project(git_repo)
    joined = _fix(git_repo, "Fix crash, issue601")
    spaced = _fix(git_repo, "Fix crash for issue 602")
    result = _mine(git_repo)
    assert _candidate(result, joined).refs == (IssueRef(number=601),)
    assert _candidate(result, spaced).refs == (IssueRef(number=602),)


def test_body_closing_phrase_comes_first(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = _fix(git_repo, "Fix crash (#30)\n\nThe parser choked on tabs.\n\nFixes #12")
    candidate = _candidate(_mine(git_repo), sha)
    assert candidate.refs == (IssueRef(number=12), IssueRef(number=30))
    assert candidate.body == "The parser choked on tabs.\n\nFixes #12"


def test_merged_pull_request(git_repo: GitRepo) -> None:
    base = _project(git_repo)
    sha = git_repo.merge_pr(
        12,
        "Fix crash on empty input",
        body="Fixes #10",
        files={
            "src/pkg/core.py": CORE + "# fixed\n",
            "tests/test_core.py": TESTS + "\n\ndef test_empty():\n    pass\n",
        },
        commits=("wip", "address review"),
    )
    result = _mine(git_repo)
    candidate = _candidate(result, sha)
    assert candidate.base_commit == base
    assert candidate.title == "Fix crash on empty input"
    assert candidate.refs == (IssueRef(number=10), IssueRef(number=12, kind="pull"))
    assert candidate.added_tests == ("test_empty",)
    assert result.examined == 2  # the pull request's own commits are not on the branch


def test_merged_feature_is_not_a_fix(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = git_repo.merge_pr(
        13,
        "Add a --json flag",
        files={
            "src/pkg/core.py": CORE + "# json\n",
            "tests/test_core.py": TESTS + "\n\ndef test_json():\n    pass\n",
        },
        branch="fix-typo-in-branch-name",
    )
    assert _reason(_mine(git_repo), sha) is Reason.NOT_A_FIX


def test_method_added_to_a_test_class(git_repo: GitRepo) -> None:
    _project(git_repo)
    padding = "".join(f"    def test_pad_{i}(self):\n        assert {i}\n\n" for i in range(30))
    git_repo.commit(
        "Add padding tests",
        files={
            "tests/test_core.py": TESTS.replace(
                "class TestParser:\n", f"class TestParser:\n{padding}"
            )
        },
    )
    sha = git_repo.commit(
        "Fix tabs (#7)",
        files={
            "src/pkg/core.py": CORE + "# tabs\n",
            "tests/test_core.py": git_repo.read("tests/test_core.py")
            + "\n    async def test_tabs(self):\n        assert True\n",
        },
    )
    assert _candidate(_mine(git_repo), sha).added_tests == ("TestParser::test_tabs",)


def test_new_test_class_and_module_functions(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = _fix(
        git_repo,
        "Fix tabs (#7)",
        {
            "tests/test_tabs.py": (
                "import sys\n\n"
                "class TestTabs:\n    def test_one(self):\n        def test_helper():\n"
                "            pass\n\n    def helper(self):\n        pass\n\n"
                "async def test_async():\n    pass\n\n"
                "if sys.platform:\n    def test_platform():\n        pass\n"
            )
        },
    )
    candidate = _candidate(_mine(git_repo), sha)
    assert candidate.added_tests == (
        "test_new",
        "TestTabs::test_one",
        "test_async",
        "test_platform",
    )
    assert candidate.test_files == ("tests/test_core.py", "tests/test_tabs.py")


def test_renamed_test_function_counts_as_added(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = git_repo.commit(
        "Fix parse (#9)",
        files={
            "src/pkg/core.py": CORE + "# fixed\n",
            "tests/test_core.py": TESTS.replace("def test_words", "def test_words_and_tabs"),
        },
    )
    assert _candidate(_mine(git_repo), sha).added_tests == ("TestParser::test_words_and_tabs",)


def test_same_name_in_another_class_is_new(git_repo: GitRepo) -> None:
    _project(git_repo)
    changed = TESTS.replace("def test_words(self):", "def test_words(self, tmp_path):")
    sha = git_repo.commit(
        "Fix parse (#9)",
        files={
            "src/pkg/core.py": CORE + "# fixed\n",
            "tests/test_core.py": changed + "\n\nclass TestOther:\n    def test_words(self):\n"
            "        pass\n",
        },
    )
    assert _candidate(_mine(git_repo), sha).added_tests == ("TestOther::test_words",)


def test_python_diff_driver_in_the_repository_does_not_confuse_classes(git_repo: GitRepo) -> None:
    git_repo.commit("Attributes", files={".gitattributes": "*.py diff=python\n"})
    _project(git_repo)
    sha = git_repo.commit(
        "Fix tabs (#7)",
        files={
            "src/pkg/core.py": CORE + "# tabs\n",
            "tests/test_core.py": TESTS + "\n    def test_tabs(self):\n        pass\n",
        },
    )
    assert _candidate(_mine(git_repo), sha).added_tests == ("TestParser::test_tabs",)


def test_renamed_source_file_counts_once(git_repo: GitRepo) -> None:
    _project(git_repo)
    git_repo.rename("src/pkg/core.py", "src/pkg/parsing.py")
    sha = git_repo.commit(
        "Fix parsing after move (#4)",
        files={
            "src/pkg/parsing.py": CORE + "# moved and fixed\n",
            "tests/test_core.py": TESTS + "\n\ndef test_moved():\n    pass\n",
        },
    )
    result = _mine(git_repo, max_source_files=1)
    candidate = _candidate(result, sha)
    assert candidate.source_files == ("src/pkg/parsing.py",)


def test_renamed_test_module_adds_no_test(git_repo: GitRepo) -> None:
    _project(git_repo)
    git_repo.rename("tests/test_core.py", "tests/test_parsing.py")
    sha = git_repo.commit("Fix crash (#4)", files={"src/pkg/core.py": CORE + "# fixed\n"})
    assert _reason(_mine(git_repo), sha) is Reason.NO_TEST_ADDED


def test_binary_files(git_repo: GitRepo) -> None:
    _project(git_repo)
    blob = bytes(range(256)) * 4
    sha = _fix(git_repo, "Fix image loading (#6)")
    git_repo.git("reset", "--soft", "HEAD~1")
    git_repo.apply({"src/pkg/logo.png": blob, "tests/data/broken.png": blob})
    sha = git_repo.commit("Fix image loading (#6)")
    candidate = _candidate(_mine(git_repo), sha)
    assert candidate.source_files == ("src/pkg/core.py",)
    assert candidate.test_data_files == ("tests/data/broken.png",)
    assert candidate.added_tests == ("test_new",)


def test_paths_with_spaces_and_unicode(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = git_repo.commit(
        "Fix accents (#5)",
        files={
            "src/pkg/données utiles.py": "Z = 1\n",
            'tests/test "quoted"\tname.py': "def test_quote():\n    pass\n",
            "tests/test é.py": "class TestÉ:\n    def test_accent(self):\n        pass\n",
        },
    )
    candidate = _candidate(_mine(git_repo), sha)
    assert candidate.source_files == ("src/pkg/données utiles.py",)
    assert set(candidate.test_files) == {'tests/test "quoted"\tname.py', "tests/test é.py"}
    assert set(candidate.added_tests) == {"test_quote", "TestÉ::test_accent"}


def test_message_in_a_declared_legacy_encoding(git_repo: GitRepo) -> None:
    _project(git_repo)
    git_repo.apply({"src/pkg/core.py": CORE + "# é\n"})
    git_repo.apply({"tests/test_core.py": TESTS + "\ndef test_e():\n    pass\n"})
    sha = git_repo.commit("Fix café crash (#2)", encoding="latin-1")
    assert _candidate(_mine(git_repo), sha).title == "Fix café crash (#2)"


def test_message_with_invalid_utf8(git_repo: GitRepo) -> None:
    _project(git_repo)
    git_repo.apply({"src/pkg/core.py": CORE + "# x\n"})
    git_repo.apply({"tests/test_core.py": TESTS + "\ndef test_e():\n    pass\n"})
    sha = git_repo.commit(b"Fix caf\xe9 crash (#2)\n\nBody \xff\n")
    candidate = _candidate(_mine(git_repo), sha)
    assert candidate.title == "Fix caf\ufffd crash (#2)"
    assert candidate.body == "Body \ufffd"


def test_first_commit_is_never_a_task(git_repo: GitRepo) -> None:
    sha = git_repo.commit(
        "Fix everything (#1)",
        files={"src/pkg/core.py": CORE, "tests/test_core.py": TESTS},
    )
    assert _reason(_mine(git_repo), sha) is Reason.NO_SOURCE_CHANGE


def test_since_excludes_older_changes(git_repo: GitRepo) -> None:
    _project(git_repo)
    old = _fix(git_repo, "Fix old (#1)")
    git_repo.clock += timedelta(days=30)
    new = _fix(git_repo, "Fix new (#2)")
    cutoff = (git_repo.clock - timedelta(days=1)).date()
    result = _mine(git_repo, since=cutoff)
    assert [c.commit for c in result.candidates] == [new]
    assert _reason(result, old) is Reason.BEFORE_SINCE
    titles = [e.title for e in result.excluded if e.reason is Reason.BEFORE_SINCE]
    assert titles == ["Fix old (#1)", "Initial layout"]
    assert result.examined == 3


def test_since_day_itself_is_kept(git_repo: GitRepo) -> None:
    _project(git_repo)
    sha = _fix(
        git_repo,
        "Fix (#1)",
    )
    day = datetime.fromisoformat(git_repo.git("log", "-1", "--format=%cI")).date()
    assert _candidate(_mine(git_repo, since=day), sha)
    assert _reason(_mine(git_repo, since=day + timedelta(days=1)), sha) is Reason.BEFORE_SINCE


def test_since_after_everything(git_repo: GitRepo) -> None:
    _project(git_repo)
    result = _mine(git_repo, since=date(2999, 1, 1))
    assert result.candidates == []
    assert [e.reason for e in result.excluded] == [Reason.BEFORE_SINCE]


def test_history_is_read_by_one_git_process(
    git_repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(git_repo)
    for n in range(1, 6):
        _fix(git_repo, f"Fix number {n} (#{n})")
        git_repo.commit(f"Docs {n}", files={"README.md": f"{n}\n"})
    started: list[list[str]] = []
    real_popen = subprocess.Popen

    class CountingPopen(real_popen):  # type: ignore[misc, valid-type]
        def __init__(self, args: list[str], *rest: Any, **kwargs: Any) -> None:
            started.append(list(args))
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", CountingPopen)
    result = _mine(git_repo)
    assert len(result.candidates) == 5
    logs = [argv for argv in started if "log" in argv]
    assert len(logs) == 1
    assert len(started) <= 4  # the log, plus resolving the head and a shallow-clone check


def test_empty_repository_is_a_clear_error(git_repo: GitRepo) -> None:
    with pytest.raises(EmptyRepositoryError, match="no commits yet") as raised:
        _mine(git_repo)
    assert isinstance(raised.value, BugboutError)


def test_shallow_clone_is_refused(git_repo: GitRepo) -> None:
    _project(git_repo)
    _fix(git_repo, "Fix (#1)")
    shallow = git_repo.clone_to(git_repo.root.parent / "shallow", "--depth", "1")
    with pytest.raises(BugboutError, match="shallow") as raised:
        mine(
            shallow.root,
            ref="HEAD",
            source="src/pkg",
            tests="tests",
            since=None,
            max_source_files=2,
        )
    assert "fetch --unshallow" in str(raised.value)
