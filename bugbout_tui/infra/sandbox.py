"""Confining the processes bugbout starts: the tests it runs and the agents it races.

Tests and patches come from agents, so bugbout treats them as untrusted: a confined
process writes only where the caller allows, reaches the network only when the caller
allows, and sees no credentials. What it may read is its view: the whole machine with
the caller's hidden paths masked (`host`), or nothing but the system directories and
what the caller grants (`minimal`), which every test run gets. A caller states all that
in a `Confinement`; a backend turns it into the command line that enforces it, so the
subprocess layer stays the same for every backend.

The environment is not passed through the command line on purpose: an agent's own key
would then show in the process table. The caller hands `confinement.env` to the
subprocess, and the backends keep it intact (bubblewrap only re-points temp-dir variables
at a directory that exists inside, and sets `PWD` to the working directory).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from bugbout_tui.core.errors import BugboutError, ToolMissingError, UsageError
from bugbout_tui.infra.programs import program_paths
from bugbout_tui.infra.secrets import scrub_environment

__all__ = [
    "CREDENTIAL_STORES",
    "SANDBOX_KINDS",
    "SYSTEM_DIRS",
    "BubblewrapSandbox",
    "Confinement",
    "NoSandbox",
    "Sandbox",
    "SandboxReport",
    "SeatbeltSandbox",
    "View",
    "describe_sandbox",
    "scrub_environment",
    "select_sandbox",
]

View = Literal["host", "minimal"]

SANDBOX_KINDS = ("auto", "bubblewrap", "seatbelt", "none")

# Files and directories under a home directory that hold credentials. Hidden from every
# confined process unless the caller made one writable (an agent's own state directory).
CREDENTIAL_STORES = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".config/gh",
    ".config/glab-cli",
    ".config/hub",
    ".config/op",
    ".password-store",
    ".local/share/keyrings",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".pypirc",
    ".npmrc",
    ".pgpass",
    ".my.cnf",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".vault-token",
    ".terraformrc",
    ".terraform.d/credentials.tfrc.json",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".huggingface/token",
    ".cache/huggingface/token",
    ".codex/auth.json",
    ".claude/.credentials.json",
    ".gemini/oauth_creds.json",
    ".config/mini-swe-agent/.env",
)

# Sockets of daemons that would hand out root or a user's session to anyone connecting.
_HOST_SOCKETS = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
)

_TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""What the minimal view shows of a Linux host besides its grants, read-only: programs,
libraries and configuration (`/etc`), the parts of the file system that are the same
for every user."""

# What resolving names and checking certificates reads, for a process with network: each
# is shown where it really lives (resolv.conf is often a link into /run).
_NETWORK_FILES = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/ssl/certs",
    "/etc/ssl/cert.pem",
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ca-certificates",
)
_CERTIFICATE_VARIABLES = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "GIT_SSL_CAINFO",
)

_UNCONFINED_HINT = (
    "To run without any sandbox instead (not recommended: tests and agents could then write "
    'anywhere and reach the network), set sandbox = "none" under [run] in bugbout.toml.'
)

_PROBE_TIMEOUT = 30.0


@dataclass(frozen=True)
class Confinement:
    """What a confined process may do.

    Attributes:
        writable: Directories (or files) the process may write, besides its private temp
            directories. Each must exist: the caller creates them. Relative paths are
            taken from the process's working directory.
        network: False gives the process a network namespace of its own: it reaches
            nothing outside, not even the host's loopback (its own loopback works).
        env: The complete environment of the process; build it with `scrub_environment`.
        readable: Paths the process must be able to read. In the host view, only those
            the sandbox would otherwise hide (its private `/tmp`, a masked store or a
            hidden path) need listing; in the minimal view, everything beyond the system
            directories does. The working directory and the program's own installation
            (see `program_paths`) are shown without being listed.
        hidden: Paths the process must not read at all, masked like credential stores:
            for an agent, every bugbout home, the store and the repository would give
            the answer away. A writable or readable path inside a hidden one stays
            usable.
        nested: The process starts sandboxes of its own inside this one (Codex CLI and
            Claude Code run each command in their own bubblewrap).
        view: What the process may read. `host`: the whole machine, read-only, minus the
            hidden paths and credential stores. `minimal`: deny by default; only the
            system directories, the readable and writable paths, the working directory,
            the program's installation, fresh `/dev` and `/proc` and private temp dirs
            (and, with network, what resolving names and checking certificates need).
    """

    writable: tuple[Path, ...]
    network: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    readable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    nested: bool = False
    view: View = "host"

    def __post_init__(self) -> None:
        # Callers build these from lists and configuration strings; freeze copies so a
        # later change to the caller's objects cannot widen a confinement already handed out.
        object.__setattr__(self, "writable", tuple(Path(p) for p in self.writable))
        object.__setattr__(self, "readable", tuple(Path(p) for p in self.readable))
        object.__setattr__(self, "hidden", tuple(Path(p) for p in self.hidden))
        object.__setattr__(self, "env", dict(self.env))


class Sandbox(ABC):
    """A way of confining a process, chosen once per run with `select_sandbox`."""

    name: str
    separates_processes: bool = False
    """Each confined process starts in a PID namespace of its own, where it and what it
    starts are all there is: killing every process it can see ends a run's leftovers."""

    @abstractmethod
    def wrap(self, argv: Sequence[str], confinement: Confinement, *, cwd: Path) -> list[str]:
        """The command line to run instead of `argv`.

        The caller still passes `env=confinement.env` and `cwd` to the subprocess.
        """

    @abstractmethod
    def check(self) -> None:
        """Raise `BugboutError`, with the fix as its hint, when this backend cannot run here."""


class NoSandbox(Sandbox):
    """Runs processes as they are, for users who opt out with `sandbox = "none"`."""

    name = "none"

    def wrap(self, argv: Sequence[str], confinement: Confinement, *, cwd: Path) -> list[str]:
        _require_command(argv)
        return list(argv)

    def check(self) -> None:
        return None


class BubblewrapSandbox(Sandbox):
    """Linux: a read-only view of the host, or of its system directories and the grants
    alone, with private temp dirs and, if asked, no network.

    The process gets new PID, IPC and UTS namespaces (and, when the network is cut, a
    network namespace of its own holding nothing but its own loopback), drops every
    capability, starts a new terminal session so it cannot type into ours, and is killed
    with its whole process tree when bwrap or bwrap's parent dies.
    """

    name = "bubblewrap"
    separates_processes = True

    def __init__(self, executable: str | None = None) -> None:
        self._configured = executable

    def executable(self) -> str:
        """The bwrap binary, found on PATH when none was given."""
        found = self._configured or shutil.which("bwrap")
        if found is None:
            raise ToolMissingError(
                "bubblewrap (the `bwrap` program) is not installed, and bugbout needs it to "
                "confine tests and agents on Linux.",
                hint="Install the `bubblewrap` package: `sudo apt-get install bubblewrap` "
                "(Debian, Ubuntu), `sudo dnf install bubblewrap` (Fedora) or "
                "`sudo pacman -S bubblewrap` (Arch). " + _UNCONFINED_HINT,
            )
        return found

    def wrap(self, argv: Sequence[str], confinement: Confinement, *, cwd: Path) -> list[str]:
        _require_command(argv)
        workdir = _resolve(cwd, cwd)
        writable = _existing(confinement.writable, workdir, "write to")
        temp_roots = _unique([_resolve(Path("/tmp"), workdir), _resolve(Path("/var/tmp"), workdir)])
        minimal = confinement.view == "minimal"
        # Without a bind of the host's root, bwrap starts from an empty tmpfs, which is
        # made read-only once every mount point in it exists.
        command = [self.executable()] + ([] if minimal else ["--ro-bind", "/", "/"])
        command += ["--dev", "/dev", "--proc", "/proc"]
        command += _bubblewrap_mounts(confinement, workdir, writable, temp_roots, argv=argv)
        if minimal:
            command += ["--remount-ro", "/"]
        command += ["--unshare-pid", "--unshare-ipc", "--unshare-uts"]
        if not confinement.network:
            command.append("--unshare-net")
        command += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if confinement.nested and os.geteuid() == 0:
            # Run by root, bwrap makes no user namespace, so an inner bwrap must map uid 0
            # into its own, which the kernel allows only with CAP_SETFCAP (Linux 5.12+).
            # bwrap sets no_new_privs, so the capability cannot be turned into others.
            command += ["--cap-add", "CAP_SETFCAP"]
        for variable in _TEMP_VARIABLES:
            value = confinement.env.get(variable)
            if value is None:
                continue
            target = _resolve(Path(value), workdir)
            if target not in temp_roots and not _inside_any(target, writable):
                command += ["--setenv", variable, "/tmp"]
        command += ["--chdir", str(workdir), "--", *argv]
        return command

    def check(self) -> None:
        bwrap = self.executable()
        if bwrap not in _PROBES:
            probe = self.wrap(["true"], Confinement(writable=()), cwd=Path("/"))
            _PROBES[bwrap] = _probe(probe)
        failure = _PROBES[bwrap]
        if failure is not None:
            raise BugboutError(
                f"bubblewrap cannot create a sandbox on this machine: {failure}",
                hint=bubblewrap_fix(apparmor_restricts_userns=_apparmor_restricts_userns()),
            )


class SeatbeltSandbox(Sandbox):
    """macOS: `sandbox-exec` with a profile that denies writes and, if asked, the network.

    Seatbelt cannot give a process private temp dirs, so the system's temp dirs stay
    shared and writable; the rest mirrors bubblewrap.
    """

    name = "seatbelt"
    executable = "/usr/bin/sandbox-exec"

    def wrap(self, argv: Sequence[str], confinement: Confinement, *, cwd: Path) -> list[str]:
        _require_command(argv)
        return [self.executable, "-p", self.profile(confinement, cwd=cwd, argv=argv), *argv]

    def profile(self, confinement: Confinement, *, cwd: Path, argv: Sequence[str] = ()) -> str:
        """The SBPL text; the last matching rule wins, so every exception follows its rule.

        The minimal view denies every read, then allows reading the system directories,
        the temp dirs, the grants and the program's installation (`argv`), and reading
        the metadata of each directory on the way to them, which resolving a path needs.
        """
        workdir = _resolve(cwd, cwd)
        writable = _existing(confinement.writable, workdir, "write to")
        readable = _existing(confinement.readable, workdir, "read")
        temp = [Path("/private/tmp"), Path("/private/var/tmp"), Path("/private/var/folders")]
        temp += [
            _resolve(Path(v), workdir) for k in _TEMP_VARIABLES if (v := confinement.env.get(k))
        ]
        stores = [
            s
            for s in [*_credential_paths(confinement.env), *_hidden_paths(confinement)]
            if not _inside_any(s, writable)
        ]

        lines = ["(version 1)", "(allow default)"]
        if confinement.view == "minimal":
            granted = _unique(
                [
                    *map(Path, _SEATBELT_SYSTEM),
                    *temp,
                    *writable,
                    *readable,
                    workdir,
                    *_program_grants(argv, confinement, stores),
                    *(_network_paths(confinement.env) if confinement.network else []),
                ]
            )
            lines += _seatbelt_reads(_outermost(granted))
        lines += ["(deny file-write*)", "(allow file-write*"]
        lines += [f"    (subpath {_sbpl_string(str(p))})" for p in _unique([*temp, *writable])]
        lines += [f"    (literal {_sbpl_string(device)})" for device in _SEATBELT_DEVICES]
        lines += [f'    (regex #"{pattern}")' for pattern in _SEATBELT_DEVICE_PATTERNS]
        lines.append(")")
        if stores:
            lines.append("(deny file-read* file-write*")
            lines += [f"    (subpath {_sbpl_string(str(s))})" for s in stores]
            lines.append(")")
            reopened = [w for w in writable if _inside_any(w, stores)]
            if reopened:
                lines.append("(allow file-read* file-write*")
                lines += [f"    (subpath {_sbpl_string(str(w))})" for w in reopened]
                lines.append(")")
            shown = [r for r in readable if _inside_any(r, stores)]
            if shown:
                lines.append("(allow file-read*")
                lines += [f"    (subpath {_sbpl_string(str(r))})" for r in shown]
                lines.append(")")
        if not confinement.network:
            lines.append("(deny network*)")
        return "\n".join(lines) + "\n"

    def check(self) -> None:
        if sys.platform != "darwin":
            raise BugboutError(
                f"The seatbelt sandbox is part of macOS and cannot run on {sys.platform}.",
                hint='On Linux use sandbox = "bubblewrap" (or "auto") under [run] in '
                "bugbout.toml. " + _UNCONFINED_HINT,
            )
        if not Path(self.executable).exists():
            raise ToolMissingError(
                f"{self.executable} is missing, and bugbout needs it to confine tests and "
                "agents on macOS.",
                hint="It ships with macOS, so the system installation is damaged. "
                + _UNCONFINED_HINT,
            )
        if self.executable not in _PROBES:
            probe = self.wrap(["/usr/bin/true"], Confinement(writable=()), cwd=Path("/"))
            _PROBES[self.executable] = _probe(probe)
        failure = _PROBES[self.executable]
        if failure is not None:
            raise BugboutError(
                f"sandbox-exec cannot confine processes here: {failure}",
                hint="This happens when bugbout itself already runs inside a macOS sandbox "
                "(some terminals and IDEs start one); run it from a plain Terminal. "
                + _UNCONFINED_HINT,
            )


_SEATBELT_DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/tty",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/dtracehelper",
)
_SEATBELT_DEVICE_PATTERNS = ("^/dev/ttys[0-9]+$", "^/dev/fd/[0-9]+$")

_SEATBELT_SYSTEM = (
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library",
    "/Applications/Xcode.app",
    "/private/etc",
    "/private/var/db/timezone",
    "/private/var/db/dyld",
    "/private/var/select",
    "/dev",
)
"""The minimal view's system directories on macOS: programs, frameworks, the developer
tools `/usr/bin/git` hands over to, configuration, time zones and the shared library
cache."""

_SEATBELT_LINKS = ("/etc", "/tmp", "/var")
"""Links at the top of a macOS file system, which resolving a path through them reads."""


def _seatbelt_reads(granted: Sequence[Path]) -> list[str]:
    """The minimal view's read rules: nothing, then the granted trees, and the metadata
    of every directory above them and of the top-level links."""
    above = [parent for path in granted for parent in reversed(path.parents)]
    links = [Path(link) for link in _SEATBELT_LINKS]
    lines = ["(deny file-read*)", "(allow file-read-metadata"]
    lines += [f"    (literal {_sbpl_string(str(p))})" for p in _unique([*above, *links])]
    lines += [")", "(allow file-read*"]
    lines += [f"    (subpath {_sbpl_string(str(p))})" for p in granted]
    lines.append(")")
    return lines


_BACKENDS: dict[str, type[Sandbox]] = {
    "bubblewrap": BubblewrapSandbox,
    "seatbelt": SeatbeltSandbox,
    "none": NoSandbox,
}

# One probe per sandbox program per process: a failing host fails every run the same way.
_PROBES: dict[str, str | None] = {}


class SandboxReport(BaseModel):
    """What `bugbout doctor` says about the sandbox a run would use."""

    model_config = ConfigDict(frozen=True)

    requested: str
    backend: str | None
    """The backend that runs (or would run, once fixed); None for an unknown kind."""
    ok: bool
    confined: bool
    detail: str
    fix: str | None = None


def select_sandbox(kind: str) -> Sandbox:
    """The backend for `[run] sandbox`, checked to work here, or a `BugboutError` saying why not."""
    if kind == "auto":
        return _select_automatically()
    backend = _BACKENDS.get(kind)
    if backend is None:
        raise UsageError(
            f"Unknown sandbox {kind!r}.",
            hint="Set [run] sandbox to one of: " + ", ".join(f'"{k}"' for k in SANDBOX_KINDS) + ".",
        )
    sandbox = backend()
    sandbox.check()
    return sandbox


def describe_sandbox(kind: str) -> SandboxReport:
    """Which sandbox `kind` resolves to here, and whether it works; never raises."""
    try:
        sandbox = select_sandbox(kind)
    except BugboutError as error:
        return SandboxReport(
            requested=kind,
            backend=_intended_backend(kind),
            ok=False,
            confined=False,
            detail=error.message,
            fix=error.hint,
        )
    if isinstance(sandbox, NoSandbox):
        return SandboxReport(
            requested=kind,
            backend=sandbox.name,
            ok=True,
            confined=False,
            detail="Tests and agents run unconfined: they can write anywhere you can and "
            "reach the network (credentials are still kept out of their environment).",
            fix='Set [run] sandbox = "auto" to confine them.',
        )
    where = sandbox.executable() if isinstance(sandbox, BubblewrapSandbox) else sandbox.name
    return SandboxReport(
        requested=kind,
        backend=sandbox.name,
        ok=True,
        confined=True,
        detail=f"{sandbox.name} ({where}) confines tests and agents: tests see only their "
        "tree, their interpreter and the system directories, agents never see bugbout's "
        "data, the store or the repository; writes only in their checkout and temp dirs, "
        "no network for tests, credential stores hidden.",
    )


def bubblewrap_fix(*, apparmor_restricts_userns: bool) -> str:
    """How to let bwrap create namespaces, most likely cause first."""
    apparmor = (
        "allow them for bwrap with an AppArmor profile (see docs/sandbox.md), or system-wide "
        "with `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`."
    )
    if apparmor_restricts_userns:
        steps = (
            "AppArmor on this machine restricts unprivileged user namespaces (the default on "
            "Ubuntu 24.04 and later), and bubblewrap needs them: " + apparmor
        )
    else:
        steps = (
            "bubblewrap needs unprivileged user namespaces. On Ubuntu 24.04 and later AppArmor "
            "restricts them: " + apparmor + " Elsewhere, `sysctl user.max_user_namespaces` "
            "must be above 0 (and on older Debian `sudo sysctl "
            "kernel.unprivileged_userns_clone=1`); inside a container, the container must "
            "allow creating namespaces."
        )
    return steps + " " + _UNCONFINED_HINT


def _select_automatically() -> Sandbox:
    candidate: Sandbox
    if sys.platform.startswith("linux"):
        candidate = BubblewrapSandbox()
    elif sys.platform == "darwin":
        candidate = SeatbeltSandbox()
    else:
        raise BugboutError(
            f'sandbox = "auto" knows no sandbox for {sys.platform}: bugbout confines '
            "processes with bubblewrap on Linux and seatbelt on macOS.",
            hint=_UNCONFINED_HINT,
        )
    try:
        candidate.check()
    except BugboutError as error:
        raise type(error)(
            f'sandbox = "auto" picked {candidate.name}, which cannot run: {error.message}',
            hint=error.hint,
        ) from error
    return candidate


def _intended_backend(kind: str) -> str | None:
    if kind in _BACKENDS:
        return kind
    if kind == "auto":
        if sys.platform.startswith("linux"):
            return "bubblewrap"
        if sys.platform == "darwin":
            return "seatbelt"
    return None


def _probe(argv: list[str]) -> str | None:
    """Why `argv` (a sandboxed `true`) fails, or None when it succeeds."""
    try:
        result = subprocess.run(
            argv,
            env={},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"a trial run did not finish within {_PROBE_TIMEOUT:.0f} seconds"
    except OSError as error:
        return str(error)
    if result.returncode == 0:
        return None
    return result.stderr.strip() or f"a trial run exited with status {result.returncode}"


def _apparmor_restricts_userns() -> bool:
    flag = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
    try:
        return flag.read_text().strip() == "1"
    except OSError:
        return False


def _credential_paths(env: Mapping[str, str]) -> list[Path]:
    """Credential stores of every home the process might use, and the daemon sockets."""
    homes = [os.environ.get("HOME"), env.get("HOME")]
    with contextlib.suppress(KeyError):  # a uid without a passwd entry, as in some containers
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    stores = [
        Path(os.path.realpath(Path(home) / store))
        for home in _unique(h for h in homes if h and os.path.isabs(h))
        for store in CREDENTIAL_STORES
    ]
    runtime_dirs = [f"/run/user/{os.getuid()}", os.environ.get("XDG_RUNTIME_DIR")]
    runtime_dirs.append(env.get("XDG_RUNTIME_DIR"))
    sockets = [*_HOST_SOCKETS, *(d for d in runtime_dirs if d and os.path.isabs(d))]
    return _unique([*stores, *(Path(os.path.realpath(s)) for s in sockets)])


def _hidden_paths(confinement: Confinement) -> list[Path]:
    return [Path(os.path.realpath(path)) for path in confinement.hidden]


def _program_grants(
    argv: Sequence[str], confinement: Confinement, stores: Sequence[Path]
) -> list[Path]:
    """The installation of the program `argv` runs, never at the price of a hidden path
    or a store (a program at a repository's root, say); a store inside it is masked."""
    found = program_paths(argv, env=confinement.env, hidden=confinement.hidden)
    return [path for path in found if not _inside_any(path, stores)]


def _network_paths(env: Mapping[str, str]) -> list[Path]:
    """Where the files that resolving names and checking certificates read really live."""
    named = [*_NETWORK_FILES, *(v for k in _CERTIFICATE_VARIABLES if (v := env.get(k)))]
    real = (Path(os.path.realpath(path)) for path in named if os.path.isabs(path))
    return _unique(path for path in real if os.path.exists(path))


def _system_mounts() -> tuple[list[Path], list[tuple[int, int, list[str]]]]:
    """The system directories that exist here, as real paths, and the mounts showing
    them: a bind of each real directory, and a link for each that is a link on the host
    (`/bin` to `usr/bin` on a merged /usr)."""
    real = [Path(os.path.realpath(d)) for d in SYSTEM_DIRS if os.path.isdir(d)]
    shown = _outermost(real)
    mounts = [(1, 0, ["--symlink", os.readlink(d), d]) for d in SYSTEM_DIRS if _is_dir_link(d)]
    mounts += [(len(r.parts), 0, ["--ro-bind", str(r), str(r)]) for r in shown]
    return shown, mounts


def _is_dir_link(path: str) -> bool:
    return os.path.islink(path) and os.path.isdir(path)


def _links_on_the_way(named: Path) -> list[tuple[str, Path]]:
    """Each link met while resolving `named`, as (its target, where it lies): the minimal
    view shows real paths, and these make the names a process was given lead there."""
    links: list[tuple[str, Path]] = []
    current = Path(named.anchor)
    for part in named.parts[1:]:
        candidate = current / part
        if os.path.islink(candidate):
            links.append((os.readlink(candidate), candidate))
            current = Path(os.path.realpath(candidate))
        else:
            current = candidate
    return links


def _bubblewrap_mounts(
    confinement: Confinement,
    workdir: Path,
    writable: list[Path],
    temp_roots: list[Path],
    *,
    argv: Sequence[str] = (),
) -> list[str]:
    """The mounts that make the process's view: temp dirs, masks, then grants.

    In the host view they lie over the read-only root: a path the sandbox hides (under a
    private temp dir or a masked store) but the process needs is bound back read-only,
    and a store is masked only where the process could see it. In the minimal view they
    build the whole file system: the system directories, the grants, and masks for the
    stores inside those.
    """
    minimal = confinement.view == "minimal"
    candidates = [
        store
        for store in [*_credential_paths(confinement.env), *_hidden_paths(confinement)]
        if os.path.exists(store) and not _inside_any(store, writable)
    ]
    wanted = [*_existing(confinement.readable, workdir, "read"), workdir]
    wanted += _program_grants(argv, confinement, candidates) if argv else []
    mounts: list[tuple[int, int, list[str]]] = []
    if minimal:
        system, mounts = _system_mounts()
        if confinement.network:
            wanted += _network_paths(confinement.env)
        readable = _unique(
            path
            for path in wanted
            if not _inside_any(path, writable)
            and (not _inside_any(path, system) or _inside_any(path, candidates))
        )
        exposed = [*system, *writable, *readable]
        masks = [store for store in candidates if _inside_any(store, exposed)]
    else:
        hiding = [*temp_roots, *candidates]
        readable = _unique(
            path for path in wanted if _inside_any(path, hiding) and not _inside_any(path, writable)
        )
        exposed = [*writable, *readable]
        # Under a private temp dir, a store shows only where a grant lies inside it (its
        # directories are made for the grant's mount point) or it lies inside a grant.
        masks = [
            store
            for store in candidates
            if not _inside_any(store, temp_roots)
            or _inside_any(store, exposed)
            or any(_inside(path, store) for path in exposed)
        ]
    masks = _outermost(masks)

    # Mounts shadow whatever lies beneath them, so shallower paths go first; at equal
    # depth a mask goes before a grant so that an explicit grant wins.
    mounts += [
        *((len(t.parts), 1, ["--tmpfs", str(t)]) for t in temp_roots),
        *((len(m.parts), 2, _mask(m)) for m in masks),
        *((len(r.parts), 3, ["--ro-bind", str(r), str(r)]) for r in readable),
        *((len(w.parts), 4, ["--bind", str(w), str(w)]) for w in writable),
    ]
    mounts.sort(key=lambda mount: (mount[0], mount[1]))
    arguments = [arg for _, _, mount in mounts for arg in mount]
    # A masked directory reads as empty and takes no writes; it is made read-only last,
    # once the mount points of the grants inside it exist.
    arguments += [arg for m in masks if os.path.isdir(m) for arg in ("--remount-ro", str(m))]
    if minimal:
        arguments += _links_to_grants(confinement, argv, workdir, [*exposed, *masks])
    return arguments


def _links_to_grants(
    confinement: Confinement, argv: Sequence[str], workdir: Path, mounted: Sequence[Path]
) -> list[str]:
    """Links that let the names the process was given (its program, its directories)
    lead to the real paths the minimal view mounts: a `~/.local/bin/agent` linking into
    a package, a `/home` that is a link to `/var/home`. A link inside a mounted path is
    there already; one elsewhere is made in the view's own root or temp dirs."""
    given = [*confinement.readable, *confinement.writable]
    named = [Path(os.path.abspath(workdir / path)) for path in given]
    if argv and os.path.isabs(argv[0]):
        named.append(Path(os.path.abspath(argv[0])))
    system = [Path(d) for d in SYSTEM_DIRS]
    links = _unique(link for path in named for link in _links_on_the_way(path))
    return [
        arg
        for target, where in links
        if not _inside_any(where, [*mounted, *system])
        for arg in ("--symlink", target, str(where))
    ]


def _mask(path: Path) -> list[str]:
    """An empty directory over a directory (made read-only once the grants inside it are
    mounted), /dev/null over anything else.

    /dev/null needs a device bind (a plain or read-only bind forbids opening devices, and
    the file would read as "permission denied" instead of empty); writes to it vanish.
    """
    if os.path.isdir(path):
        return ["--tmpfs", str(path)]
    return ["--dev-bind", "/dev/null", str(path)]


def _require_command(argv: Sequence[str]) -> None:
    if not argv:
        raise ValueError("cannot sandbox an empty command line")


def _resolve(path: Path, cwd: Path) -> Path:
    return Path(os.path.realpath(cwd / path))


def _existing(paths: Iterable[Path], cwd: Path, access: str) -> list[Path]:
    resolved = _unique(_resolve(p, cwd) for p in paths)
    for path in resolved:
        if not os.path.exists(path):
            raise BugboutError(
                f"Cannot let a sandboxed process {access} {path}: it does not exist.",
                hint="Create it before starting the process.",
            )
    return resolved


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _inside_any(path: Path, roots: Iterable[Path]) -> bool:
    return any(_inside(path, root) for root in roots)


_T = TypeVar("_T")


def _unique(items: Iterable[_T]) -> list[_T]:
    return list(dict.fromkeys(items))


def _outermost(paths: Iterable[Path]) -> list[Path]:
    """The paths without those inside another, in their first order."""
    unique = _unique(paths)
    return [p for p in unique if not any(o != p and _inside(p, o) for o in unique)]


def _sbpl_string(text: str) -> str:
    """`text` as an SBPL (Scheme) string literal: only backslash and quote need escaping."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
