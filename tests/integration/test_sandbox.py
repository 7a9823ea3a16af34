"""The sandbox confines for real.

Every confinement is checked by running a real process under bubblewrap and, as a control,
the same process unconfined (or with the one protection removed): the control must show
the opposite outcome, so a test cannot pass because its probe was blind.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from fakes.harness import bubblewrap

from bugbout_tui.core.errors import BugboutError, ToolMissingError, UsageError
from bugbout_tui.infra.programs import interpreter_paths
from bugbout_tui.infra.sandbox import (
    BubblewrapSandbox,
    Confinement,
    NoSandbox,
    Sandbox,
    bubblewrap_fix,
    describe_sandbox,
    scrub_environment,
    select_sandbox,
)

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="bubblewrap confines processes on Linux only"
)

PYTHON = sys.executable
TIMEOUT = 60
KINDS = ["bubblewrap", "none"]


def _sandbox(kind: str) -> Sandbox:
    """The backend under test; bubblewrap tests are skipped where bwrap cannot run."""
    return NoSandbox() if kind == "none" else bubblewrap()


def _plain_env(**extra: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": "/nohome"}
    env.update(extra)
    return env


def _run(
    sandbox: Sandbox,
    argv: Sequence[str],
    confinement: Confinement,
    cwd: Path,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        sandbox.wrap(argv, confinement, cwd=cwd),
        env=dict(confinement.env),
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def _python(
    sandbox: Sandbox, code: str, confinement: Confinement, cwd: Path
) -> subprocess.CompletedProcess[str]:
    return _run(sandbox, [PYTHON, "-c", code], confinement, cwd)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    path = tmp_path / "checkout"
    path.mkdir()
    return path


# --- network ---------------------------------------------------------------------------

CONNECT = """
import socket, sys
try:
    with socket.create_connection(("127.0.0.1", {port}), timeout=10) as connection:
        connection.sendall(b"hello")
except OSError as error:
    print(error)
    sys.exit(3)
"""


@pytest.mark.parametrize(
    ("kind", "network", "reaches"),
    [("bubblewrap", False, False), ("bubblewrap", True, True), ("none", False, True)],
)
def test_the_network_is_cut_loopback_included_unless_allowed(
    kind: str, network: bool, reaches: bool, checkout: Path
) -> None:
    sandbox = _sandbox(kind)
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        confinement = Confinement(writable=(checkout,), network=network, env=_plain_env())
        result = _python(sandbox, CONNECT.format(port=port), confinement, checkout)
        server.setblocking(False)
        try:
            connection, _ = server.accept()
        except BlockingIOError:
            received = None
        else:
            with connection:
                connection.settimeout(10)
                received = connection.recv(5)

    assert (result.returncode == 0) is reaches, result.stdout + result.stderr
    assert (received == b"hello") is reaches


# --- file system -----------------------------------------------------------------------

WRITES = """
import errno, json, sys
outcome = {}
for name, path in json.loads(sys.argv[1]).items():
    try:
        with open(path, "w") as handle:
            handle.write("written inside")
        outcome[name] = "ok"
    except OSError as error:
        outcome[name] = errno.errorcode[error.errno]
with open(sys.argv[2]) as handle:
    outcome["read"] = handle.read()
print(json.dumps(outcome))
"""


@pytest.mark.parametrize("kind", KINDS)
def test_writes_land_only_in_the_checkout_and_a_private_tmp(
    kind: str, tmp_path: Path, checkout: Path
) -> None:
    sandbox = _sandbox(kind)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "data.txt").write_text("left by the test")
    marker = f"bugbout-sandbox-test-{uuid.uuid4().hex}"
    targets = {
        "checkout": str(checkout / "out.txt"),
        "elsewhere": str(elsewhere / "out.txt"),
        "tmp": f"/tmp/{marker}",
        "var_tmp": f"/var/tmp/{marker}",
    }
    confinement = Confinement(writable=(checkout,), env=_plain_env(), readable=(elsewhere,))
    try:
        result = _run(
            sandbox,
            [PYTHON, "-c", WRITES, json.dumps(targets), str(elsewhere / "data.txt")],
            confinement,
            checkout,
        )
        assert result.returncode == 0, result.stderr
        outcome = json.loads(result.stdout)
        leaked = {name: Path(path).exists() for name, path in targets.items()}
    finally:
        Path(targets["tmp"]).unlink(missing_ok=True)
        Path(targets["var_tmp"]).unlink(missing_ok=True)

    assert outcome["checkout"] == outcome["tmp"] == outcome["var_tmp"] == "ok"
    assert outcome["read"] == "left by the test"
    assert leaked["checkout"]
    if kind == "none":
        assert outcome["elsewhere"] == "ok"
        assert leaked["elsewhere"] and leaked["tmp"] and leaked["var_tmp"]
    else:
        assert outcome["elsewhere"] == "EROFS"
        assert not leaked["elsewhere"], "a write outside the writable paths reached the host"
        assert not leaked["tmp"] and not leaked["var_tmp"], "the sandbox's temp dirs are shared"


def test_a_relative_writable_path_is_taken_from_the_working_directory(checkout: Path) -> None:
    (checkout / "logs").mkdir()
    confinement = Confinement(writable=(Path("logs"),), env=_plain_env())
    code = "open('logs/a.txt', 'w').write('x'); open('b.txt', 'w')"
    result = _python(_sandbox("bubblewrap"), code, confinement, checkout)

    assert (checkout / "logs" / "a.txt").read_text() == "x"
    assert not (checkout / "b.txt").exists()
    assert "Read-only file system" in result.stderr


def test_a_missing_writable_path_is_refused_before_anything_runs(checkout: Path) -> None:
    confinement = Confinement(writable=(checkout / "absent",), env=_plain_env())
    with pytest.raises(BugboutError, match="does not exist"):
        BubblewrapSandbox().wrap(["true"], confinement, cwd=checkout)


def test_the_working_directory_and_grants_stay_readable_under_the_private_tmp_and_no_more(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, checkout: Path
) -> None:
    """A bugbout home under /tmp is not bound back as a whole: a process sees of it only
    what it is granted (a test environment), never its trees."""
    home = tmp_path / "bugbout-home"
    (home / "envs").mkdir(parents=True)
    (home / "envs" / "marker").write_text("environment")
    (home / "trees").mkdir()
    (home / "trees" / "fix.py").write_text("the fix")
    monkeypatch.setenv("BUGBOUT_HOME", str(home))
    reports = tmp_path / "reports"
    reports.mkdir()
    code = (
        "import os, sys\nprint(open(sys.argv[1]).read(), os.listdir('.'))\n"
        "print(os.path.exists(sys.argv[2]))\nopen(sys.argv[1], 'a')\n"
    )
    result = _run(
        _sandbox("bubblewrap"),
        [PYTHON, "-c", code, str(home / "envs" / "marker"), str(home / "trees" / "fix.py")],
        Confinement(writable=(reports,), env=_plain_env(), readable=(home / "envs",)),
        checkout,
    )

    assert result.stdout == "environment []\nFalse\n"
    assert "Read-only file system" in result.stderr


def test_a_test_suite_can_use_multiprocessing(checkout: Path) -> None:
    code = (
        "import multiprocessing as mp\n"
        "if __name__ == '__main__':\n"
        "    lock = mp.Lock()\n"
        "    with mp.get_context('spawn').Pool(2) as pool:\n"
        "        print(sum(pool.map(abs, [-1, -2, -3])))\n"
    )
    (checkout / "pool.py").write_text(code)
    result = _run(
        _sandbox("bubblewrap"),
        [PYTHON, "pool.py"],
        Confinement(writable=(checkout,), env=_plain_env()),
        checkout,
    )

    assert result.stdout == "6\n", result.stderr


# --- credential stores -----------------------------------------------------------------

READ_HOME = """
import json, pathlib, sys
home = pathlib.Path(sys.argv[1])
seen = {}
for name in sys.argv[2:]:
    try:
        seen[name] = (home / name).read_text()
    except OSError as error:
        seen[name] = type(error).__name__
print(json.dumps(seen))
"""

HOME_FILES = {
    ".ssh/id_ed25519": "PRIVATE KEY",
    ".aws/credentials": "[default]\naws_secret_access_key = x",
    ".config/gh/hosts.yml": "oauth_token: gho_x",
    ".netrc": "machine example.org password x",
    "notes.txt": "ordinary file",
}


def _make_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for name, text in HOME_FILES.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    return home


@pytest.mark.parametrize("kind", KINDS)
def test_credential_stores_in_the_home_are_hidden(
    kind: str, tmp_path: Path, checkout: Path
) -> None:
    home = _make_home(tmp_path)
    confinement = Confinement(
        writable=(checkout,), env=_plain_env(HOME=str(home)), readable=(home,)
    )
    result = _run(
        _sandbox(kind), [PYTHON, "-c", READ_HOME, str(home), *HOME_FILES], confinement, checkout
    )
    seen = json.loads(result.stdout)

    assert seen["notes.txt"] == "ordinary file"
    if kind == "none":
        assert seen == HOME_FILES
    else:
        assert seen[".ssh/id_ed25519"] == "FileNotFoundError"
        assert seen[".aws/credentials"] == "FileNotFoundError"
        assert seen[".config/gh/hosts.yml"] == "FileNotFoundError"
        assert seen[".netrc"] == ""


def test_a_store_the_process_may_write_stays_visible(tmp_path: Path, checkout: Path) -> None:
    home = _make_home(tmp_path)
    confinement = Confinement(
        writable=(checkout, home / ".ssh"), env=_plain_env(HOME=str(home)), readable=(home,)
    )
    result = _run(
        _sandbox("bubblewrap"),
        [PYTHON, "-c", READ_HOME, str(home), ".ssh/id_ed25519", ".netrc"],
        confinement,
        checkout,
    )

    assert json.loads(result.stdout) == {".ssh/id_ed25519": "PRIVATE KEY", ".netrc": ""}


# --- environment -----------------------------------------------------------------------

SECRETS = {
    "OPENAI_API_KEY": "sk-proj-abcdefghijklmnopqrstuvwxyz",
    "GITHUB_TOKEN": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "MY_SERVICE_TOKEN": "opaque",
}


def _environment_inside(sandbox: Sandbox, env: Mapping[str, str], checkout: Path) -> dict[str, str]:
    env_program = shutil.which("env")
    assert env_program is not None
    result = _run(
        sandbox, [env_program, "-0"], Confinement(writable=(checkout,), env=env), checkout
    )
    assert result.returncode == 0, result.stderr
    return dict(entry.split("=", 1) for entry in result.stdout.split("\0") if entry)


@pytest.mark.parametrize(("kind", "scrubbed"), [*((k, True) for k in KINDS), ("bubblewrap", False)])
def test_the_process_gets_exactly_the_given_environment(
    kind: str, scrubbed: bool, checkout: Path
) -> None:
    outer = {
        **_plain_env(HOME="/home/someone"),
        **SECRETS,
        "ANTHROPIC_API_KEY": "the agent's own key",
    }
    env = scrub_environment(outer, keep=["ANTHROPIC_API_KEY"]) if scrubbed else outer
    sandbox = _sandbox(kind)
    inside = _environment_inside(sandbox, env, checkout)

    # bwrap sets PWD to the working directory, as a shell would; nothing else is added.
    expected = {**env, "PWD": str(checkout)} if kind == "bubblewrap" else env
    assert inside == expected
    assert inside["ANTHROPIC_API_KEY"] == "the agent's own key"
    assert {"PATH", "HOME", "LANG"} <= inside.keys()
    leaked = SECRETS.keys() & inside.keys()
    assert leaked == (set() if scrubbed else SECRETS.keys())


def test_temp_dir_variables_point_inside_the_sandbox(tmp_path: Path, checkout: Path) -> None:
    own_tmp = checkout / "tmp"
    own_tmp.mkdir()
    env = _plain_env(TMPDIR=str(tmp_path / "host-only"), TEMP=str(own_tmp), TMP="/tmp")
    code = (
        "import json, os, tempfile\n"
        "with tempfile.NamedTemporaryFile() as handle: pass\n"
        "print(json.dumps({k: os.environ[k] for k in ('TMPDIR', 'TEMP', 'TMP')}))"
    )
    result = _python(_sandbox("bubblewrap"), code, Confinement((checkout,), env=env), checkout)

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"TMPDIR": "/tmp", "TEMP": str(own_tmp), "TMP": "/tmp"}


# --- process behaviour -----------------------------------------------------------------

ECHO = """
import os, sys
print(os.getcwd())
print(sys.stdin.read().upper(), end="")
sys.exit(7)
"""


@pytest.mark.parametrize("kind", KINDS)
def test_cwd_stdin_stdout_and_exit_status_pass_through(kind: str, checkout: Path) -> None:
    (checkout / "src").mkdir()
    result = _run(
        _sandbox(kind),
        [PYTHON, "-c", ECHO],
        Confinement(writable=(checkout,), env=_plain_env()),
        checkout / "src",
        stdin="some input\n",
    )

    assert result.returncode == 7
    assert result.stdout == f"{checkout / 'src'}\nSOME INPUT\n"


# The child starts a grandchild that holds stdout too and lives until the test closes its
# end of a pipe; the child echoes stdin. Stdout reaches end-of-file only once both are gone.
TREE = """
import subprocess, sys
hold = int(sys.argv[1])
subprocess.Popen([sys.executable, "-c", "import os, sys; os.read(int(sys.argv[1]), 1)", str(hold)],
                 pass_fds=[hold], stdin=subprocess.DEVNULL)
print("ready", flush=True)
for line in sys.stdin:
    print(line.strip(), flush=True)
"""


def _read_until_eof(stream: int, timeout: float) -> bytes | None:
    """Everything left on `stream`, or None if it stays open for `timeout` seconds."""
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    data = b""
    try:
        while selector.select(timeout=timeout):
            chunk = os.read(stream, 4096)
            if not chunk:
                return data
            data += chunk
        return None
    finally:
        selector.close()


@pytest.mark.parametrize("die_with_parent", [True, False])
def test_killing_bwrap_kills_the_whole_sandboxed_tree(
    die_with_parent: bool, checkout: Path
) -> None:
    hold_read, hold_write = os.pipe()
    confinement = Confinement(writable=(checkout,), env=_plain_env())
    argv = _sandbox("bubblewrap").wrap(
        [PYTHON, "-c", TREE, str(hold_read)], confinement, cwd=checkout
    )
    if not die_with_parent:  # the control: the same sandbox without the protection
        argv.remove("--die-with-parent")
    process = subprocess.Popen(
        argv,
        env=confinement.env,
        cwd=checkout,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        pass_fds=[hold_read],
    )
    os.close(hold_read)
    assert process.stdin is not None and process.stdout is not None
    try:
        assert process.stdout.readline() == b"ready\n"
        process.kill()
        process.wait(timeout=TIMEOUT)
        if die_with_parent:
            assert _read_until_eof(process.stdout.fileno(), timeout=TIMEOUT) == b""
        else:
            # Still answering after bwrap is gone: the tree outlived it.
            process.stdin.write(b"still here\n")
            process.stdin.flush()
            assert process.stdout.readline() == b"still here\n"
    finally:
        # Ends whatever survived: the child sees end of input, the grandchild its pipe close.
        os.close(hold_write)
        process.stdin.close()
        _read_until_eof(process.stdout.fileno(), timeout=TIMEOUT)
        process.stdout.close()


# --- the command line ------------------------------------------------------------------


def test_writable_binds_follow_the_read_only_root_and_the_private_tmp(checkout: Path) -> None:
    sandbox = _sandbox("bubblewrap")
    argv = sandbox.wrap(
        ["pytest", "-x"], Confinement(writable=(checkout,), env=_plain_env()), cwd=checkout
    )

    def position(*sequence: str) -> int:
        for index in range(len(argv)):
            if argv[index : index + len(sequence)] == list(sequence):
                return index
        raise AssertionError(f"{sequence} not in {argv}")

    bind = position("--bind", str(checkout), str(checkout))
    assert position("--ro-bind", "/", "/") < position("--tmpfs", "/tmp") < bind
    assert "--unshare-net" in argv and "--die-with-parent" in argv
    assert argv[-3:] == ["--", "pytest", "-x"]
    with_network = sandbox.wrap(["true"], Confinement(writable=(), network=True), cwd=checkout)
    assert "--unshare-net" not in with_network


@pytest.mark.parametrize("sandbox", [BubblewrapSandbox(), NoSandbox()])
def test_an_empty_command_is_a_programming_error(sandbox: Sandbox, checkout: Path) -> None:
    with pytest.raises(ValueError, match="empty"):
        sandbox.wrap([], Confinement(writable=()), cwd=checkout)


def test_none_runs_the_command_as_given(checkout: Path) -> None:
    sandbox = select_sandbox("none")
    assert sandbox.wrap(["a", "b c"], Confinement(writable=()), cwd=checkout) == ["a", "b c"]


# --- choosing a backend ----------------------------------------------------------------


def test_auto_picks_bubblewrap_when_it_works() -> None:
    _sandbox("bubblewrap")
    assert select_sandbox("auto").name == "bubblewrap"
    report = describe_sandbox("auto")
    assert report.ok and report.confined and report.backend == "bubblewrap"


@pytest.fixture
def no_bwrap_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    yield


@linux_only
@pytest.mark.usefixtures("no_bwrap_on_path")
def test_a_missing_bwrap_names_the_package_and_the_opt_out() -> None:
    with pytest.raises(ToolMissingError) as caught:
        select_sandbox("auto")

    text = str(caught.value)
    assert "bubblewrap" in caught.value.message and "auto" in caught.value.message
    assert "apt-get install bubblewrap" in text and "dnf install bubblewrap" in text
    assert 'sandbox = "none"' in text
    report = describe_sandbox("bubblewrap")
    assert not report.ok and report.backend == "bubblewrap"
    assert report.fix is not None and "apt-get install bubblewrap" in report.fix


def test_a_bwrap_that_cannot_start_is_reported_with_the_fix() -> None:
    false = shutil.which("false")
    assert false is not None
    with pytest.raises(BugboutError) as caught:
        BubblewrapSandbox(executable=false).check()

    assert "cannot create a sandbox" in caught.value.message
    assert caught.value.hint is not None and "apparmor" in caught.value.hint.lower()


def test_the_fix_leads_with_apparmor_when_it_restricts_namespaces() -> None:
    restricted = bubblewrap_fix(apparmor_restricts_userns=True)
    generic = bubblewrap_fix(apparmor_restricts_userns=False)

    assert restricted.startswith("AppArmor on this machine restricts")
    for text in (restricted, generic):
        assert "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0" in text
        assert 'sandbox = "none"' in text
    assert "user.max_user_namespaces" in generic


def test_an_unknown_kind_is_a_usage_error_listing_the_choices() -> None:
    with pytest.raises(UsageError) as caught:
        select_sandbox("docker")

    assert caught.value.exit_code == 2
    assert all(f'"{kind}"' in str(caught.value) for kind in ("auto", "bubblewrap", "none"))
    report = describe_sandbox("docker")
    assert not report.ok and report.backend is None


def test_none_is_reported_as_working_but_unconfined() -> None:
    report = describe_sandbox("none")
    assert report.ok and not report.confined and report.backend == "none"
    assert report.fix is not None and "auto" in report.fix


# --- scrubbing the environment ---------------------------------------------------------

CREDENTIALS = {
    "GITHUB_TOKEN": "x",
    "GH_TOKEN": "x",
    "GH_ENTERPRISE_TOKEN": "x",
    "GITLAB_TOKEN": "x",
    "CI_JOB_TOKEN": "x",
    "OPENAI_API_KEY": "x",
    "OPENAI_BASE_URL": "https://proxy.example",
    "ANTHROPIC_API_KEY": "x",
    "ANTHROPIC_AUTH_TOKEN": "x",
    "GEMINI_API_KEY": "x",
    "GOOGLE_API_KEY": "x",
    "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/sa.json",
    "GCP_SA_KEY": "x",
    "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE": "/home/me/token",
    "AWS_ACCESS_KEY_ID": "x",
    "AWS_SECRET_ACCESS_KEY": "x",
    "AWS_SESSION_TOKEN": "x",
    "AWS_PROFILE": "work",
    "AZURE_CLIENT_SECRET": "x",
    "AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com",
    "ARM_CLIENT_SECRET": "x",
    "HF_TOKEN": "x",
    "HUGGING_FACE_HUB_TOKEN": "x",
    "NPM_TOKEN": "x",
    "NODE_AUTH_TOKEN": "x",
    "NPM_CONFIG__AUTH": "x",
    "PYPI_API_TOKEN": "x",
    "TWINE_USERNAME": "__token__",
    "TWINE_PASSWORD": "x",
    "UV_PUBLISH_TOKEN": "x",
    "POETRY_PYPI_TOKEN_PYPI": "x",
    "POETRY_HTTP_BASIC_CORP_PASSWORD": "x",
    "CARGO_REGISTRY_TOKEN": "x",
    "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
    "GPG_AGENT_INFO": "x",
    "DOCKER_AUTH_CONFIG": "{}",
    "KUBECONFIG": "/home/me/.kube/config",
    "VAULT_TOKEN": "x",
    "PGPASSWORD": "x",
    "MYSQL_PWD": "x",
    "DATABASE_PASSWORD": "x",
    "DJANGO_SECRET_KEY": "x",
    "CLIENT_SECRETS": "x",
    "MY_SERVICE_TOKEN": "x",
    "STRIPE_APIKEY": "x",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/x",
    "SENTRY_DSN": "https://key@sentry.io/1",
    "GH_PAT": "x",
    "SOME_CREDENTIALS": "x",
    "JIRA_CREDS": "x",
    "ACTIONS_RUNTIME_TOKEN": "x",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.example",
    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
    "GIT_ASKPASS": "/usr/lib/code/askpass.sh",
    "VSCODE_GIT_IPC_HANDLE": "/run/user/1000/vscode-git.sock",
    "BW_SESSION": "x",
    "OP_SESSION_my": "x",
    "KRB5CCNAME": "FILE:/tmp/krb5cc_1000",
}

# Innocent names whose values give the credential away.
CREDENTIAL_VALUES = {
    "PIP_INDEX_URL": "https://user:s3cret@pypi.corp.example/simple",
    "HTTPS_PROXY": "http://me:pw@proxy:3128",
    "SOME_SETTING": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "DEFAULTS": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
    "UPLOAD_ID": "AKIAIOSFODNN7EXAMPLE",
    "GIT_CONFIG_VALUE_0": "AUTHORIZATION: basic eC1hY2Nlc3M6dG9rZW4=",
    "DEPLOY": "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
}

ORDINARY = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/me",
    "LANG": "en_US.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "xterm-256color",
    "SHELL": "/bin/zsh",
    "USER": "me",
    "TMPDIR": "/tmp",
    "PYTHONHASHSEED": "0",
    "PYTHONPATH": "/src",
    "VIRTUAL_ENV": "/home/me/.venv",
    "TOKENIZERS_PARALLELISM": "false",
    "XAUTHORITY": "/home/me/.Xauthority",
    "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
    "REQUESTS_CA_BUNDLE": "/etc/ssl/certs/ca-certificates.crt",
    "GIT_SSL_CAINFO": "/etc/ssl/certs/ca-certificates.crt",
    "CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE": "/etc/ssl/certs/ca-certificates.crt",
    "HTTPS_PROXY_HOST": "proxy.example",
    "NO_PROXY": "localhost,127.0.0.1",
    "PIP_INDEX_URL_PUBLIC": "https://pypi.org/simple",
    "CI": "true",
    "GITHUB_ACTIONS": "true",
    "GITHUB_SHA": "0123456789abcdef0123456789abcdef01234567",
    "PWD": "/home/me/project",
    "DISPLAY": ":0",
    "EDITOR": "vim",
    "TASK_ID": "task-abcdefghijklmnopqrstuvwxyz",
}


def test_credentials_are_dropped_by_name_and_by_value() -> None:
    scrubbed = scrub_environment({**CREDENTIALS, **CREDENTIAL_VALUES, **ORDINARY})

    assert scrubbed == ORDINARY


def test_keep_lets_the_named_variables_through_and_only_those() -> None:
    env = {**CREDENTIALS, **ORDINARY}
    scrubbed = scrub_environment(env, keep=["ANTHROPIC_API_KEY", "NOT_SET_ANYWHERE"])

    assert scrubbed == {**ORDINARY, "ANTHROPIC_API_KEY": "x"}


def test_keep_also_overrides_a_value_that_looks_like_a_credential() -> None:
    env = {"OPENAI_BASE_URL": "https://user:pw@gateway.example/v1"}

    assert scrub_environment(env, keep=("OPENAI_BASE_URL",)) == env
    assert scrub_environment(env) == {}


# --- hidden paths ----------------------------------------------------------------------

READ_ANSWER = """
import sys
from pathlib import Path
for name in sys.argv[1:]:
    try:
        print(name, Path(name).read_text().strip())
    except OSError as error:
        print(name, type(error).__name__)
"""


@pytest.mark.parametrize("kind", KINDS)
def test_hidden_paths_cannot_be_read_but_a_writable_path_inside_one_still_works(
    kind: str, tmp_path: Path
) -> None:
    home = tmp_path / "bugbout-home"
    answer = home / "trees" / "fix" / "answer.py"
    answer.parent.mkdir(parents=True)
    answer.write_text("the fix")
    work = home / "work" / "attempt"
    work.mkdir(parents=True)
    (work / "mine.py").write_text("my copy")
    confinement = Confinement(
        writable=(work,),
        env=_plain_env(),
        hidden=(home / "trees", home / "work"),
    )
    result = _run(
        _sandbox(kind),
        [PYTHON, "-c", READ_ANSWER, str(answer), str(work / "mine.py")],
        confinement,
        work,
    )
    seen = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert seen[str(work / "mine.py")] == "my copy"
    if kind == "none":
        assert seen[str(answer)] == "the fix"
    else:
        assert seen[str(answer)] == "FileNotFoundError"


def test_a_program_under_the_private_tmp_still_runs(tmp_path: Path, checkout: Path) -> None:
    """The test interpreter may live in a virtual environment under /tmp (a CI checkout);
    the private /tmp must not hide the program the sandbox is asked to run."""
    env_root = tmp_path / "venv"
    (env_root / "bin").mkdir(parents=True)
    program = env_root / "bin" / "hello"
    program.write_text("#!/bin/sh\necho hello from $0\n")
    program.chmod(0o755)
    result = _run(
        _sandbox("bubblewrap"), [str(program)], Confinement(writable=(), env=_plain_env()), checkout
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"hello from {program}"


def test_a_script_under_the_private_tmp_runs_and_imports_its_neighbours(
    tmp_path: Path, checkout: Path
) -> None:
    """A `command` agent kept under /tmp is named on the command line by absolute path;
    its directory is shown again, read-only, so it runs and finds its helper modules."""
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "helper.py").write_text("GREETING = 'hello from the helper'\n")
    script = agents / "agent.py"
    script.write_text("import helper\nprint(helper.GREETING)\nopen(__file__, 'a')\n")
    result = _run(
        _sandbox("bubblewrap"),
        [PYTHON, str(script)],
        Confinement(writable=(), env=_plain_env(PYTHONDONTWRITEBYTECODE="1")),
        checkout,
    )
    assert result.stdout.strip() == "hello from the helper", result.stderr
    assert "Read-only file system" in result.stderr
    control = _run(
        _sandbox("bubblewrap"),
        [PYTHON, "-c", f"exec(open({str(script)!r}).read())"],
        Confinement(writable=(), env=_plain_env()),
        checkout,
    )
    assert "No such file or directory" in control.stderr


def test_an_editable_install_under_the_private_tmp_stays_importable(
    tmp_path: Path, checkout: Path
) -> None:
    """bugbout installed in editable mode from a checkout under /tmp: its environment's
    `.pth` file names the checkout, which is shown again so its programs can import it."""
    source = tmp_path / "project" / "src"
    (source / "mypkg").mkdir(parents=True)
    (source / "mypkg" / "__init__.py").write_text("WHERE = 'imported from the checkout'\n")
    environment = tmp_path / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(environment)], check=True)
    (site_packages,) = environment.glob("lib/python3*/site-packages")
    (site_packages / "_editable_impl_mypkg.pth").write_text(f"{source}\n")
    python = str(environment / "bin" / "python")
    code = "import mypkg; print(mypkg.WHERE)"
    result = _python_in(python, code, checkout)
    assert result.stdout.strip() == "imported from the checkout", result.stderr
    (site_packages / "_editable_impl_mypkg.pth").unlink()
    control = _python_in(python, code, checkout, pythonpath=str(source))
    assert "ModuleNotFoundError" in control.stderr


def _python_in(
    python: str, code: str, cwd: Path, pythonpath: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = _plain_env() if pythonpath is None else _plain_env(PYTHONPATH=pythonpath)
    return _run(_sandbox("bubblewrap"), [python, "-c", code], Confinement((), env=env), cwd)


# --- the minimal view ------------------------------------------------------------------

LOOK_AROUND = """
import errno, json, os, sys
def attempt(action):
    try:
        return action()
    except OSError as error:
        return errno.errorcode[error.errno]
def write(path):
    with open(path, "w") as handle:
        handle.write("x")
    return "ok"
granted, writable, elsewhere = json.loads(os.environ["LOOK"])
print(json.dumps({
    "root": sorted(os.listdir("/")),
    "var": sorted(os.listdir("/var")),
    "var_lib": os.path.isdir("/var/lib"),
    "granted": attempt(lambda: open(granted).read()),
    "elsewhere": attempt(lambda: open(elsewhere).read()),
    "write_granted": attempt(lambda: write(granted)),
    "write_writable": attempt(lambda: write(os.path.join(writable, "out.txt"))),
    "write_root": attempt(lambda: write("/planted")),
    "write_tmp": attempt(lambda: write("/tmp/scratch")),
}))
"""


@pytest.mark.parametrize("view", ["minimal", "host"])
def test_the_minimal_view_shows_the_system_and_the_grants_and_nothing_else(
    view: str, tmp_path: Path, checkout: Path
) -> None:
    granted = tmp_path / "granted" / "data.txt"
    elsewhere = tmp_path / "elsewhere" / "data.txt"
    for path in (granted, elsewhere):
        path.parent.mkdir()
        path.write_text("readable")
    # Named in the environment: a file named on the command line is shown with its
    # directory, as a script's is.
    look = json.dumps([str(granted), str(checkout), str(elsewhere)])
    confinement = Confinement(
        writable=(checkout,),
        env=_plain_env(LOOK=look),
        readable=(granted.parent,),
        view=view,  # type: ignore[arg-type]
    )
    result = _python(_sandbox("bubblewrap"), LOOK_AROUND, confinement, checkout)
    seen = json.loads(result.stdout)

    assert seen["granted"] == "readable"
    assert seen["write_granted"] == "EROFS"
    assert seen["write_writable"] == seen["write_tmp"] == "ok"
    if view == "host":  # the control: the machine is there, read-only
        assert seen["var_lib"] and seen["write_root"] == "EROFS"
        return
    assert seen["elsewhere"] == "ENOENT"
    assert seen["write_root"] == "EROFS"
    assert seen["var"] == ["tmp"] and not seen["var_lib"]
    tops = {"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "dev", "proc"}
    tops |= {"tmp", "var"}
    tops |= {p.parts[1] for p in interpreter_paths(Path(PYTHON))}
    assert set(seen["root"]) <= tops, seen["root"]
    for gone in ("home", "opt", "srv", "mnt", "run", "media"):
        assert gone not in seen["root"] or gone in tops


def test_the_minimal_view_masks_credential_stores_inside_a_grant(
    tmp_path: Path, checkout: Path
) -> None:
    home = _make_home(tmp_path)
    confinement = Confinement(
        writable=(checkout,), env=_plain_env(HOME=str(home)), readable=(home,), view="minimal"
    )
    result = _run(
        _sandbox("bubblewrap"),
        [PYTHON, "-c", READ_HOME, str(home), *HOME_FILES],
        confinement,
        checkout,
    )
    seen = json.loads(result.stdout)

    assert seen["notes.txt"] == "ordinary file"
    assert seen[".ssh/id_ed25519"] == "FileNotFoundError"
    assert seen[".aws/credentials"] == "FileNotFoundError"
    assert seen[".netrc"] == ""


def test_a_program_reached_through_a_link_runs_with_its_package_in_the_minimal_view(
    tmp_path: Path, checkout: Path
) -> None:
    """A Node.js CLI as npm installs it: a link in a `bin/` directory to a script inside
    `node_modules`, which reads files of its package. The view holds the package and the
    link, not the rest of the installation's prefix."""
    package = tmp_path / "prefix" / "lib" / "node_modules" / "tool"
    (package / "bin").mkdir(parents=True)
    (package / "data.txt").write_text("from the package\n")
    script = package / "bin" / "tool.sh"
    script.write_text(
        '#!/bin/sh\nhere="$(dirname "$(readlink -f "$0")")"\ncat "$here/../data.txt"\n'
        f"cat {tmp_path / 'prefix' / 'private.txt'} 2>/dev/null || echo private-hidden\n"
    )
    script.chmod(0o755)
    (tmp_path / "prefix" / "private.txt").write_text("the prefix's other files")
    (tmp_path / "local" / "bin").mkdir(parents=True)
    link = tmp_path / "local" / "bin" / "tool"
    link.symlink_to(os.path.relpath(script, link.parent))
    confinement = Confinement(writable=(checkout,), env=_plain_env(), view="minimal")
    result = _run(_sandbox("bubblewrap"), [str(link)], confinement, checkout)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["from the package", "private-hidden"]


@pytest.mark.parametrize("network", [True, False])
def test_the_minimal_view_shows_certificates_only_to_a_process_with_network(
    network: bool, tmp_path: Path, checkout: Path
) -> None:
    """What TLS needs, where it really lives (here a bundle a variable names, outside
    the system directories), is shown to a process that may use the network."""
    bundle = tmp_path / "certs" / "bundle.pem"
    bundle.parent.mkdir()
    bundle.write_text("-----BEGIN CERTIFICATE-----")
    env = _plain_env(SSL_CERT_FILE=str(bundle))
    confinement = Confinement(writable=(checkout,), env=env, network=network, view="minimal")
    code = "import os; print(os.path.exists(os.environ['SSL_CERT_FILE']))"
    result = _python(_sandbox("bubblewrap"), code, confinement, checkout)
    assert result.stdout.strip() == str(network), result.stderr
