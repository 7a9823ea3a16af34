"""The GitHub issue source against a real HTTP server on the loopback interface."""

from __future__ import annotations

import json
import socket
import time
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.models import IssueRef, StatementSource
from bugbout_tui.infra.github import (
    BadCredentials,
    GitHubClient,
    Unreachable,
    local_time,
    resolve_credentials,
)
from bugbout_tui.rules.statement import GitHubIssues, issue_source_from_settings

if TYPE_CHECKING:
    from github_server import FakeGitHub, GitHubEnv

pytest_plugins = ["github_server"]

REPO = "acme/tools"
ISSUE_BODY = """\
Calling `total([])` raises:

```
Traceback (most recent call last):
  File "t.py", line 1, in <module>
ZeroDivisionError: division by zero
```
"""
PR_BODY = """\
<!-- Describe your change. Link issues with "Fixes #123". -->
Handle empty lists in `total`.

## Implementation
Return 0 early.

```diff
--- a/tools/total.py
+++ b/tools/total.py
@@ -1,2 +1,3 @@
+    if not items: return 0
```

Fixes #5
"""


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "github"


def _source(server: FakeGitHub, cache: Path, token: str | None = None) -> GitHubIssues:
    return GitHubIssues(REPO, api_url=server.url, cache_dir=cache, token=token)


def _reset_epoch(minutes: int = 30) -> tuple[int, str]:
    reset = int(time.time()) + minutes * 60
    return reset, local_time(datetime.fromtimestamp(reset).astimezone())


def test_issue_is_read_with_github_headers(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path
) -> None:
    github_server.add_issue(REPO, 5, "total([]) divides by zero", ISSUE_BODY)
    source = _source(github_server, cache)
    lookup = source.fetch(IssueRef(number=5))
    assert lookup.statement == "# total([]) divides by zero\n\n" + ISSUE_BODY.rstrip("\n")
    assert (lookup.issue, lookup.title, lookup.missing, lookup.via_pull) == (
        5,
        "total([]) divides by zero",
        None,
        None,
    )
    [request] = github_server.requests
    assert request.path == "/repos/acme/tools/issues/5"
    assert request.header("Accept") == "application/vnd.github+json"
    assert request.header("X-GitHub-Api-Version") == "2022-11-28"
    assert request.header("User-Agent") == f"bugbout/{metadata.version('bugbout-tui')}"
    assert request.header("Authorization") is None
    stored = json.loads((cache / "acme" / "tools" / "5.json").read_text())
    assert stored["issue"]["title"] == "total([]) divides by zero"
    assert source.describe() == (
        f"GitHub API at {github_server.url} (anonymous, 60 requests an hour)"
    )


def test_pull_request_yields_the_issue_it_closes_and_is_cached(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path
) -> None:
    github_server.add_issue(REPO, 5, "total([]) divides by zero", ISSUE_BODY)
    github_server.add_issue(REPO, 9, "Handle empty lists", PR_BODY, pull=True)
    lookup = _source(github_server, cache).fetch(IssueRef(number=9))
    assert (lookup.issue, lookup.via_pull, lookup.title, lookup.note) == (
        5,
        9,
        "total([]) divides by zero",
        None,
    )
    assert lookup.statement == "# total([]) divides by zero\n\n" + ISSUE_BODY.rstrip("\n")
    assert github_server.issue_requests() == [
        "/repos/acme/tools/issues/9",
        "/repos/acme/tools/issues/5",
    ]
    again = _source(github_server, cache).fetch(IssueRef(number=9))
    assert again == lookup
    assert len(github_server.requests) == 2


def test_pull_request_without_closing_reference_uses_its_own_cleaned_text(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path
) -> None:
    body = "`total([])` raises ZeroDivisionError. " + PR_BODY.replace("Fixes #5", "")
    github_server.add_issue(REPO, 9, "Handle empty lists", body, pull=True)
    lookup = _source(github_server, cache).fetch(IssueRef(number=9))
    assert (lookup.issue, lookup.via_pull) == (9, None)
    assert lookup.statement == "`total([])` raises ZeroDivisionError."
    assert lookup.note == "pull request #9 names no issue it closes; its own text is used"
    assert lookup.source == StatementSource(
        kind="pull",
        number=9,
        cut=["the title", 'section "implementation"', "1 sentence about the change"],
    )


def test_pull_request_whose_text_is_all_change_gives_no_statement(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path
) -> None:
    github_server.add_issue(
        REPO, 9, "Handle empty lists", PR_BODY.replace("Fixes #5", ""), pull=True
    )
    lookup = _source(github_server, cache).fetch(IssueRef(number=9))
    assert lookup.statement is None and lookup.no_problem and not lookup.retry
    assert lookup.missing == "the text of pull request #9 describes only the change made"


def test_not_found_is_cached(github_env: GitHubEnv, github_server: FakeGitHub, cache: Path) -> None:
    lookup = _source(github_server, cache, token="t0ken").fetch(IssueRef(number=404))
    assert lookup.statement is None
    assert lookup.missing == "issue #404 not found in acme/tools"
    again = _source(github_server, cache, token="t0ken").fetch(IssueRef(number=404))
    assert again == lookup
    assert len(github_server.requests) == 1


def test_anonymous_not_found_is_asked_again_with_a_token(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path
) -> None:
    anonymous = _source(github_server, cache).fetch(IssueRef(number=7))
    assert anonymous.missing == (
        "issue #7 not found in acme/tools (a private repository needs GITHUB_TOKEN)"
    )
    assert _source(github_server, cache).fetch(IssueRef(number=7)) == anonymous
    assert len(github_server.requests) == 1
    github_server.add_issue(REPO, 7, "Private bug", "Only members see this.")
    with_token = _source(github_server, cache, token="t0ken").fetch(IssueRef(number=7))
    assert with_token.statement == "# Private bug\n\nOnly members see this."
    assert len(github_server.requests) == 2


def test_rate_limit_stops_asking_and_keeps_what_was_read(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path
) -> None:
    for number in (1, 2, 3):
        github_server.add_issue(REPO, number, f"Bug {number}", "Broken.")
    reset, hhmm = _reset_epoch()
    github_server.rate_limit_after(1, reset=reset)
    source = _source(github_server, cache)
    assert source.fetch(IssueRef(number=1)).statement == "# Bug 1\n\nBroken."
    limited = source.fetch(IssueRef(number=2))
    assert limited.statement is None
    assert limited.missing == (
        f"GitHub rate limit reached, resets at {hhmm}; set GITHUB_TOKEN or log in with "
        "`gh auth login` for 5,000 requests an hour instead of 60"
    )
    later = source.fetch(IssueRef(number=3))
    assert later.missing == f"not fetched: GitHub rate limit reached, resets at {hhmm}"
    assert github_server.issue_requests() == [
        "/repos/acme/tools/issues/1",
        "/repos/acme/tools/issues/2",
    ]
    assert not (cache / "acme" / "tools" / "2.json").exists()
    kept = _source(github_server, cache).fetch(IssueRef(number=1))
    assert kept.statement == "# Bug 1\n\nBroken."
    assert len(github_server.requests) == 2


@pytest.mark.parametrize(
    ("status", "secondary"),
    [pytest.param(429, False, id="429"), pytest.param(403, True, id="secondary limit")],
)
def test_rate_limit_with_retry_after(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path, status: int, secondary: bool
) -> None:
    github_server.rate_limit_after(0, retry_after=120, status=status, secondary=secondary)
    before = datetime.now().astimezone()
    lookup = _source(github_server, cache, token="t0ken").fetch(IssueRef(number=1))
    assert lookup.missing is not None
    assert lookup.missing.startswith("GitHub rate limit reached, resets at ")
    shown = lookup.missing.removeprefix("GitHub rate limit reached, resets at ")[:5]
    expected = {
        (before.timestamp() + seconds) for seconds in (120, 180)
    }  # the minute may turn over between the request and this check
    assert shown in {datetime.fromtimestamp(t).strftime("%H:%M") for t in expected}
    assert lookup.missing.endswith(
        "; wait for the reset or use another token (token given by the caller)"
    )


def test_pull_request_whose_issue_hits_the_rate_limit_has_no_statement(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path
) -> None:
    github_server.add_issue(REPO, 5, "total([]) divides by zero", ISSUE_BODY)
    github_server.add_issue(REPO, 9, "Handle empty lists", PR_BODY, pull=True)
    reset, hhmm = _reset_epoch()
    github_server.rate_limit_after(1, reset=reset)
    lookup = _source(github_server, cache, token="t0ken").fetch(IssueRef(number=9))
    assert lookup.statement is None
    assert lookup.missing is not None
    assert lookup.missing.startswith(
        f"pull request #9 closes #5: GitHub rate limit reached, resets at {hhmm}"
    )
    assert (cache / "acme" / "tools" / "9.json").is_file()


def test_bad_credentials_name_the_token_source(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    github_server.require_token("right")
    monkeypatch.setenv("GITHUB_TOKEN", "wrong")
    source = _source(github_server, cache)
    lookup = source.fetch(IssueRef(number=1))
    assert lookup.missing == (
        "GitHub rejected the token from GITHUB_TOKEN (401 Bad credentials); "
        "set GITHUB_TOKEN to a valid token, or unset it to read anonymously"
    )
    assert source.fetch(IssueRef(number=2)).missing == (
        "not fetched: GitHub rejected the token from GITHUB_TOKEN (401 Bad credentials)"
    )
    assert len(github_server.requests) == 1
    monkeypatch.delenv("GITHUB_TOKEN")
    with pytest.raises(BadCredentials) as raised:
        GitHubClient(github_server.url).rate_limit()
    assert str(raised.value) == (
        "GitHub refused an anonymous request (401 Bad credentials)\n"
        "set GITHUB_TOKEN, or log in with `gh auth login`"
    )


def test_server_not_listening_is_offline(
    github_env: GitHubEnv, cache: Path, closed_port: int
) -> None:
    url = f"http://127.0.0.1:{closed_port}"
    source = GitHubIssues(REPO, api_url=url, cache_dir=cache)
    lookup = source.fetch(IssueRef(number=1))
    assert lookup.statement is None
    assert lookup.missing == f"could not reach {url}: [Errno 111] Connection refused"
    assert source.fetch(IssueRef(number=2)).missing == f"not fetched: {lookup.missing}"
    assert not cache.exists()


def test_server_that_never_answers_times_out(github_env: GitHubEnv, cache: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        lookup = GitHubIssues(REPO, api_url=url, cache_dir=cache, timeout=0.3).fetch(
            IssueRef(number=1)
        )
    assert lookup.missing == f"could not reach {url}: no answer within 0.3 s"


def test_server_error_is_not_cached(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path
) -> None:
    github_server.reply("/repos/acme/tools/issues/1", 502, {"message": "Server Error"})
    source = _source(github_server, cache)
    assert source.fetch(IssueRef(number=1)).missing == (
        "GitHub answered 502 for /repos/acme/tools/issues/1: Server Error"
    )
    github_server.reply("/repos/acme/tools/issues/1", 200, {"number": 1, "title": "Back"})
    assert source.fetch(IssueRef(number=1)).statement == "# Back"
    assert len(github_server.requests) == 2


def test_enterprise_url_from_environment(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    github_server.prefix = "/api/v3"
    github_server.add_issue(REPO, 1, "Bug", "Broken.")
    monkeypatch.setenv("GITHUB_API_URL", github_server.url + "/")
    source = issue_source_from_settings(REPO, None, cache)
    assert source.describe().startswith(f"GitHub API at {github_server.url} (")
    assert source.fetch(IssueRef(number=1)).statement == "# Bug\n\nBroken."
    assert [r.path for r in github_server.requests] == ["/api/v3/repos/acme/tools/issues/1"]


def test_configured_url_wins_over_environment(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9/unused")
    github_server.add_issue(REPO, 1, "Bug")
    source = issue_source_from_settings(REPO, None, cache, api_url=github_server.url)
    assert source.fetch(IssueRef(number=1)).statement == "# Bug"


def test_bad_api_url_is_a_usage_error(
    github_env: GitHubEnv, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_API_URL", "ghe.example.com")
    with pytest.raises(UsageError, match="GITHUB_API_URL"):
        GitHubIssues(REPO, cache_dir=cache)
    with pytest.raises(UsageError, match="not owner/name"):
        GitHubIssues("tools", api_url="https://api.github.com", token="x", cache_dir=cache)


def test_token_from_environment_is_sent(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_fromenv")
    github_server.require_token("ghp_fromenv")
    github_server.add_issue(REPO, 1, "Bug")
    source = _source(github_server, cache)
    assert source.describe().endswith("(token from GITHUB_TOKEN)")
    assert source.fetch(IssueRef(number=1)).statement == "# Bug"
    assert github_server.requests[0].header("Authorization") == "Bearer ghp_fromenv"


def test_gh_login_is_used_without_github_token(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path, tmp_path: Path
) -> None:
    log = tmp_path / "gh.log"
    github_env.install_gh(token="gho_fromcli", log=log)
    github_server.add_issue(REPO, 1, "Bug")
    source = _source(github_server, cache)
    assert source.client.credentials.source == "gh"
    assert source.describe().endswith("(token from `gh auth token`)")
    source.fetch(IssueRef(number=1))
    assert github_server.requests[0].header("Authorization") == "Bearer gho_fromcli"
    assert log.read_text() == "auth token --hostname 127.0.0.1\n"
    log.unlink()
    assert resolve_credentials("https://api.github.com").token == "gho_fromcli"
    assert log.read_text() == "auth token\n"


def test_anonymous_when_gh_is_not_logged_in_or_hangs(github_env: GitHubEnv, tmp_path: Path) -> None:
    assert resolve_credentials().source == "anonymous"
    hanging = github_env.bin_dir / "gh"
    hanging.write_text("#!/bin/sh\nsleep 30\necho too-late\n")
    credentials = resolve_credentials(gh_timeout=0.2)
    assert (credentials.token, credentials.source) == (None, "anonymous")


def test_other_repository_is_read_from_there(
    github_env: GitHubEnv, github_server: FakeGitHub, cache: Path
) -> None:
    github_server.add_issue("upstream/lib", 12, "Upstream bug", "Breaks downstream.")
    lookup = _source(github_server, cache).fetch(IssueRef(number=12, repo="upstream/lib"))
    assert lookup.statement == "# Upstream bug\n\nBreaks downstream."
    assert (cache / "upstream" / "lib" / "12.json").is_file()
    odd = _source(github_server, cache).fetch(IssueRef(number=12, repo="../etc"))
    assert odd.missing == "'../etc' is not a GitHub repository (owner/name)"


def test_rate_limit_endpoint(github_env: GitHubEnv, github_server: FakeGitHub) -> None:
    quota = GitHubClient(github_server.url).rate_limit()
    assert quota is not None
    assert (quota.limit, quota.remaining) == (60, 57)
    assert quota.reset == datetime.fromtimestamp(1_900_000_000).astimezone()
    assert github_server.requests[0].path == "/rate_limit"
    github_server.reply("/rate_limit", 404, {"message": "Rate limiting is not enabled."})
    assert GitHubClient(github_server.url).rate_limit() is None


def test_rate_limit_endpoint_offline(github_env: GitHubEnv, closed_port: int) -> None:
    with pytest.raises(Unreachable, match="Connection refused"):
        GitHubClient(f"http://127.0.0.1:{closed_port}").rate_limit()
