"""Reading issues and pull requests from GitHub's REST API, and from an issues file.

Only the standard library talks to the network, so reading issues adds no dependency.
Every answer that will not change on a rerun (an issue, or "no such issue") is cached
on disk as soon as it arrives: a run stopped by a rate limit keeps everything it read,
and the next run asks only for the rest. Once GitHub refuses the run as a whole (rate
limit, bad token, network down), the client stops asking, because every further request
would fail the same way and, offline, each would wait for a timeout first.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from bugbout_tui.core.errors import BugboutError, UsageError
from bugbout_tui.core.fs import write_atomic
from bugbout_tui.core.store import store_error
from bugbout_tui.infra.proc import run_bounded

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
CACHE_SCHEMA = 1

TokenSource = Literal["GITHUB_TOKEN", "gh", "given", "anonymous"]
"""Where the token came from: the environment, the GitHub CLI's login, the caller, or none."""

_SOURCE_WORDS: dict[TokenSource, tuple[str, str]] = {
    "GITHUB_TOKEN": (
        "token from GITHUB_TOKEN",
        "set GITHUB_TOKEN to a valid token, or unset it to read anonymously",
    ),
    "gh": ("token from `gh auth token`", "log in again with `gh auth login`, or set GITHUB_TOKEN"),
    "given": ("token given by the caller", "pass a valid token"),
    "anonymous": (
        "anonymous, 60 requests an hour",
        "set GITHUB_TOKEN, or log in with `gh auth login`",
    ),
}
"""Per source: how messages name the credentials, and how to fix a token GitHub refuses.
One table, so that a new source cannot get a name without a fix."""

_REPO = re.compile(r"^(?!\.\.?/)[A-Za-z0-9_.-]+/(?!\.\.?$)[A-Za-z0-9_.-]+$")


def _user_agent() -> str:
    try:
        version = metadata.version("bugbout-tui")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"bugbout/{version}"


def is_repo_name(repo: str) -> bool:
    """True for `owner/name` as GitHub spells repositories; guards the cache paths too."""
    return _REPO.match(repo) is not None


def api_url_from_env(configured: str | None = None) -> str:
    """The API base: the configured one, else `GITHUB_API_URL`, else github.com.

    The configuration wins over the environment because CI runners set
    `GITHUB_API_URL` for their own host, which need not be where the project lives.
    """
    url = (configured or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL).strip()
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        origin = "the configuration" if configured else "GITHUB_API_URL"
        raise UsageError(
            f"GitHub API URL {url!r} from {origin} is not an http(s) URL",
            hint="use e.g. https://github.example.com/api/v3 for GitHub Enterprise",
        )
    return url.rstrip("/")


@dataclass(frozen=True)
class Credentials:
    """A token, or none, and where it came from so messages can name the right fix."""

    token: str | None
    source: TokenSource

    def describe(self) -> str:
        """How `bugbout doctor` and the source's description name the credentials."""
        return _SOURCE_WORDS[self.source][0]

    def fix(self) -> str:
        """What to do when GitHub refuses these credentials."""
        return _SOURCE_WORDS[self.source][1]


def resolve_credentials(api_url: str = DEFAULT_API_URL, *, gh_timeout: float = 5.0) -> Credentials:
    """`GITHUB_TOKEN`, else the GitHub CLI's login for the API's host, else anonymous.

    `gh` is asked only when it is installed, and any failure of it (not logged in, a
    hang, a crash) quietly means anonymous: a missing token must never stop a run.
    """
    token = os.environ.get("GITHUB_TOKEN", "").strip()
    if token:
        return Credentials(token, "GITHUB_TOKEN")
    gh = shutil.which("gh")
    if gh is not None:
        command = [gh, "auth", "token"]
        host = urllib.parse.urlsplit(api_url).hostname or ""
        if host not in ("api.github.com", "github.com"):
            command += ["--hostname", host]
        answer = _run_quietly(command, gh_timeout)
        if answer:
            return Credentials(answer, "gh")
    return Credentials(None, "anonymous")


def _run_quietly(command: list[str], timeout: float) -> str | None:
    """The stripped output of a successful `command`; None on any failure or timeout.

    The command runs in its own process group so a timeout also ends whatever it
    started (a version-manager shim, say), which would otherwise hold the pipe open.
    """
    try:
        done = run_bounded(command, timeout=timeout, keep_stderr=False)
    except OSError:
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace").strip() or None


class Label(BaseModel):
    """A label as the API returns it; only the name matters here."""

    model_config = ConfigDict(extra="ignore")

    name: str


class GitHubIssue(BaseModel):
    """The fields of an issue (or pull request) that bugbout reads.

    The REST API's issue endpoint answers for pull requests too; they carry a
    `pull_request` object. The same shape is accepted from an issues file.
    """

    model_config = ConfigDict(extra="ignore")

    number: int
    title: str
    body: str | None = None
    pull_request: dict[str, Any] | None = None
    html_url: str | None = None
    state: str | None = None
    labels: list[Label | str] = []

    @property
    def is_pull(self) -> bool:
        """Whether this is a pull request rather than an issue."""
        return self.pull_request is not None


class CachedAnswer(BaseModel):
    """One cached answer: the issue, or the fact that it does not exist."""

    schema_version: int = CACHE_SCHEMA
    api_url: str
    fetched_at: datetime
    issue: GitHubIssue | None
    """None when GitHub said the issue does not exist (404 or 410)."""
    with_token: bool = False
    """Whether a token was sent: GitHub hides private repositories from anonymous
    requests behind a 404, so an anonymous "not found" is asked again once there is a token."""


@dataclass(frozen=True)
class RateLimit:
    """The core API quota, as `GET /rate_limit` reports it."""

    limit: int
    remaining: int
    reset: datetime
    """When the quota refills, in local time."""


class GitHubError(BugboutError):
    """GitHub could not answer; the message is a reason fit to show per task."""


class RateLimited(GitHubError):
    """GitHub refuses more requests until `reset` (None when it did not say)."""

    def __init__(self, reset: datetime | None, credentials: Credentials) -> None:
        when = f", resets at {local_time(reset)}" if reset is not None else ""
        if credentials.token is None:
            hint = (
                "set GITHUB_TOKEN or log in with `gh auth login` for 5,000 requests "
                "an hour instead of 60"
            )
        else:
            hint = f"wait for the reset or use another token ({credentials.describe()})"
        super().__init__(f"GitHub rate limit reached{when}", hint=hint)
        self.reset = reset


class BadCredentials(GitHubError):
    """GitHub rejected the token (401)."""


class Unreachable(GitHubError):
    """No answer from the API: offline, DNS, connection refused, timeout."""


class RequestFailed(GitHubError):
    """One request failed in a way that may not repeat (5xx, 403 on one repository)."""


class NotFetched(GitHubError):
    """Not asked: an earlier answer in this run showed that asking would fail too."""

    def __init__(self, cause: GitHubError) -> None:
        super().__init__(f"not fetched: {cause.message}")
        self.cause = cause


def local_time(moment: datetime) -> str:
    """`HH:MM` in local time, with the date too when it is not today."""
    local = moment.astimezone()
    if local.date() == datetime.now().astimezone().date():
        return local.strftime("%H:%M")
    return local.strftime("%Y-%m-%d %H:%M")


def _epoch(value: str | None) -> datetime | None:
    if value is None or not value.strip().isdigit():
        return None
    return datetime.fromtimestamp(int(value.strip())).astimezone()


def _rate_limit_reset(headers: Message) -> datetime | None:
    retry_after = headers.get("Retry-After")
    if retry_after is not None and retry_after.strip().isdigit():
        return datetime.fromtimestamp(time.time() + int(retry_after.strip())).astimezone()
    return _epoch(headers.get("X-RateLimit-Reset"))


def _is_rate_limit(status: int, headers: Message, message: str) -> bool:
    if status == 429:
        return True
    if status != 403:
        return False
    return (
        headers.get("X-RateLimit-Remaining") == "0"
        or headers.get("Retry-After") is not None
        or "rate limit" in message.lower()
    )


class GitHubClient:
    """A small REST client: headers, JSON, errors as reasons, an on-disk answer cache."""

    def __init__(
        self,
        api_url: str | None = None,
        credentials: Credentials | None = None,
        *,
        cache_dir: Path | None = None,
        timeout: float = 15.0,
    ) -> None:
        self.api_url = api_url_from_env(api_url)
        self.credentials = credentials or resolve_credentials(self.api_url)
        self.cache_dir = cache_dir
        self.timeout = timeout
        self.stopped: GitHubError | None = None
        """Set once a failure showed that every later request would fail the same way."""

    def describe(self) -> str:
        """`GitHub API at <url> (<credentials>)`, for `doctor` and the task screen."""
        return f"GitHub API at {self.api_url} ({self.credentials.describe()})"

    def issue(self, repo: str, number: int) -> GitHubIssue | None:
        """The issue or pull request `repo#number`; None when GitHub says it does not exist.

        Raises:
            GitHubError: a reason the answer could not be read; nothing is cached then.
            StoreError: the answer could not be written to the cache.
        """
        if not is_repo_name(repo):
            raise UsageError(f"{repo!r} is not a GitHub repository (owner/name)")
        cached = self._cached(repo, number)
        if cached is not None:
            return cached.issue
        status, payload = self._get(f"/repos/{repo}/issues/{number}", missing_ok=True)
        if status in (404, 410):
            issue = None
        else:
            try:
                issue = GitHubIssue.model_validate(payload)
            except ValidationError as error:
                raise RequestFailed(
                    f"GitHub's answer for {repo}#{number} is not an issue: "
                    f"{error.errors()[0]['msg']}"
                ) from None
        self._store(repo, number, issue)
        return issue

    def rate_limit(self) -> RateLimit | None:
        """The core quota, which asking does not use up; None when the server has none.

        GitHub Enterprise with rate limiting turned off answers 404 here.

        Raises:
            GitHubError: the API could not be reached or refused the token.
        """
        status, payload = self._get("/rate_limit", missing_ok=True)
        if status in (404, 410):
            return None
        try:
            core = payload["resources"]["core"]
            return RateLimit(
                limit=int(core["limit"]),
                remaining=int(core["remaining"]),
                reset=datetime.fromtimestamp(int(core["reset"])).astimezone(),
            )
        except (KeyError, TypeError, ValueError):
            raise RequestFailed(f"{self.api_url}/rate_limit answered an unknown shape") from None

    def _cache_path(self, repo: str, number: int) -> Path | None:
        if self.cache_dir is None:
            return None
        owner, name = repo.lower().split("/")
        return self.cache_dir / owner / name / f"{number}.json"

    def _cached(self, repo: str, number: int) -> CachedAnswer | None:
        path = self._cache_path(repo, number)
        if path is None or not path.is_file():
            return None
        try:
            answer = CachedAnswer.model_validate_json(path.read_bytes())
        except (OSError, ValidationError):
            return None  # unreadable or from another version: ask again and overwrite
        if answer.schema_version != CACHE_SCHEMA or answer.api_url != self.api_url:
            return None
        if answer.issue is None and not answer.with_token and self.credentials.token is not None:
            return None
        return answer

    def _store(self, repo: str, number: int, issue: GitHubIssue | None) -> None:
        path = self._cache_path(repo, number)
        if path is None:
            return
        answer = CachedAnswer(
            api_url=self.api_url,
            fetched_at=datetime.now().astimezone(),
            issue=issue,
            with_token=self.credentials.token is not None,
        )
        try:
            write_atomic(path, answer.model_dump_json(indent=2) + "\n")
        except OSError as error:
            raise store_error(error, path) from None

    def _request(self, path: str) -> urllib.request.Request:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": _user_agent(),
        }
        if self.credentials.token is not None:
            headers["Authorization"] = f"Bearer {self.credentials.token}"
        return urllib.request.Request(self.api_url + path, headers=headers, method="GET")

    def _get(self, path: str, *, missing_ok: bool) -> tuple[int, Any]:
        """Status and decoded JSON of one successful GET (or a 404/410 when `missing_ok`).

        Raises:
            GitHubError: anything else, with the reason worded for the user.
        """
        if self.stopped is not None:
            raise NotFetched(self.stopped)
        try:
            with urllib.request.urlopen(self._request(path), timeout=self.timeout) as response:
                status, headers, raw = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, headers, raw = error.code, error.headers, error.read()
        except (OSError, http.client.HTTPException) as error:
            raise self._stop(Unreachable(self._unreachable(error))) from None
        payload = _decode(raw)
        if 200 <= status < 300:
            if payload is None:
                raise RequestFailed(f"{self.api_url}{path} answered with something not JSON")
            return status, payload
        if missing_ok and status in (404, 410):
            return status, payload
        raise self._failure(status, headers, payload, path)

    def _unreachable(self, error: BaseException) -> str:
        cause = error.reason if isinstance(error, urllib.error.URLError) else error
        if isinstance(cause, TimeoutError):
            return f"could not reach {self.api_url}: no answer within {self.timeout:g} s"
        return f"could not reach {self.api_url}: {cause or type(cause).__name__}"

    def _failure(self, status: int, headers: Message, payload: Any, path: str) -> GitHubError:
        message = str(payload.get("message", "")) if isinstance(payload, dict) else ""
        if _is_rate_limit(status, headers, message):
            return self._stop(RateLimited(_rate_limit_reset(headers), self.credentials))
        if status == 401:
            answer = f"401 {message or 'Unauthorized'}"
            if self.credentials.token is None:
                refused = f"GitHub refused an anonymous request ({answer})"
            else:
                refused = f"GitHub rejected the {self.credentials.describe()} ({answer})"
            return self._stop(BadCredentials(refused, hint=self.credentials.fix()))
        detail = f": {message}" if message else ""
        if status in (404, 410):
            return RequestFailed(f"{self.api_url}{path} does not exist ({status}{detail})")
        return RequestFailed(f"GitHub answered {status} for {path}{detail}")

    def _stop(self, error: GitHubError) -> GitHubError:
        self.stopped = error
        return error


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def load_issues_file(path: Path) -> list[GitHubIssue]:
    """Issues from a JSON file holding a list of GitHub-shaped issue objects.

    Raises:
        UsageError: the file is missing, not JSON (with its line), or not such a list.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"issues file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"issues file {path} cannot be read: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(
            f"issues file {path} is not valid JSON: line {error.lineno}, "
            f"column {error.colno}: {error.msg}"
        ) from None
    if not isinstance(data, list):
        raise UsageError(
            f"issues file {path} must hold a JSON list of issues, not a {type(data).__name__}",
            hint='e.g. [{"number": 12, "title": "Crash on empty input", "body": "..."}]',
        )
    issues: list[GitHubIssue] = []
    seen: set[int] = set()
    for index, item in enumerate(data, start=1):
        try:
            issue = GitHubIssue.model_validate(item)
        except ValidationError as error:
            raise UsageError(f"issues file {path}, item {index}: {_first_error(error)}") from None
        if issue.number in seen:
            raise UsageError(f"issues file {path} lists #{issue.number} twice")
        seen.add(issue.number)
        issues.append(issue)
    return issues


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    if first["type"] == "missing":
        return f"{where!r} is missing"
    if not where:
        return f"must be an object with number and title ({first['msg']})"
    return f"{where!r}: {first['msg']}"


def repo_of_url(url: str | None) -> str | None:
    """`owner/name` from an issue's web URL (`https://host/owner/name/issues/12`)."""
    if not url:
        return None
    parts = urllib.parse.urlsplit(url).path.strip("/").split("/")
    if len(parts) >= 4 and parts[2] in ("issues", "pull"):
        repo = f"{parts[0]}/{parts[1]}"
        return repo if is_repo_name(repo) else None
    return None
