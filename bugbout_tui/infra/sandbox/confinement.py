"""What a confined process may do, and the paths that follow from it.

A `Confinement` is the caller's statement; the helpers here turn it into paths every
backend treats alike: the credential stores and daemon sockets to hide, the program's
installation to show, the files that name resolution reads, and the path arithmetic
(inside, outermost) that decides which mount or rule shadows which.
"""

from __future__ import annotations

import contextlib
import os
import pwd
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.infra.programs import program_paths

View = Literal["host", "minimal"]


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


TEMP_VARIABLES = ("TMPDIR", "TEMP", "TMP")


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
        grant_program: Whether the backend adds what the program `argv` runs needs to
            the view: its installation, the interpreter its `#!` line names, and a
            Python's paths, which bugbout learns by running that Python, unconfined.
            False when the caller granted all of it itself, because finding it would
            run or follow what an agent chose (the interpreter of an environment whose
            packages an agent declared runs their `.pth` files at start-up).
    """

    writable: tuple[Path, ...]
    network: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    readable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    nested: bool = False
    view: View = "host"
    grant_program: bool = True

    def __post_init__(self) -> None:
        # Callers build these from lists and configuration strings; freeze copies so a
        # later change to the caller's objects cannot widen a confinement already handed out.
        object.__setattr__(self, "writable", tuple(Path(p) for p in self.writable))
        object.__setattr__(self, "readable", tuple(Path(p) for p in self.readable))
        object.__setattr__(self, "hidden", tuple(Path(p) for p in self.hidden))
        object.__setattr__(self, "env", dict(self.env))


def credential_paths(env: Mapping[str, str]) -> list[Path]:
    """Credential stores of every home the process might use, and the daemon sockets."""
    homes = [os.environ.get("HOME"), env.get("HOME")]
    with contextlib.suppress(KeyError):  # a uid without a passwd entry, as in some containers
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    stores = [
        Path(os.path.realpath(Path(home) / store))
        for home in unique(h for h in homes if h and os.path.isabs(h))
        for store in CREDENTIAL_STORES
    ]
    runtime_dirs = [f"/run/user/{os.getuid()}", os.environ.get("XDG_RUNTIME_DIR")]
    runtime_dirs.append(env.get("XDG_RUNTIME_DIR"))
    sockets = [*_HOST_SOCKETS, *(d for d in runtime_dirs if d and os.path.isabs(d))]
    return unique([*stores, *(Path(os.path.realpath(s)) for s in sockets)])


def hidden_paths(confinement: Confinement) -> list[Path]:
    return [Path(os.path.realpath(path)) for path in confinement.hidden]


def program_grants(
    argv: Sequence[str], confinement: Confinement, stores: Sequence[Path]
) -> list[Path]:
    """The installation of the program `argv` runs, never at the price of a hidden path
    or a store (a program at a repository's root, say); a store inside it is masked.
    Nothing when the caller granted the program's needs itself (`grant_program`)."""
    if not confinement.grant_program:
        return []
    found = program_paths(argv, env=confinement.env, hidden=confinement.hidden)
    return [path for path in found if not inside_any(path, stores)]


def network_paths(env: Mapping[str, str]) -> list[Path]:
    """Where the files that resolving names and checking certificates read really live."""
    named = [*_NETWORK_FILES, *(v for k in _CERTIFICATE_VARIABLES if (v := env.get(k)))]
    real = (Path(os.path.realpath(path)) for path in named if os.path.isabs(path))
    return unique(path for path in real if os.path.exists(path))


def resolve(path: Path, cwd: Path) -> Path:
    return Path(os.path.realpath(cwd / path))


def existing(paths: Iterable[Path], cwd: Path, access: str) -> list[Path]:
    resolved = unique(resolve(p, cwd) for p in paths)
    for path in resolved:
        if not os.path.exists(path):
            raise BugboutError(
                f"Cannot let a sandboxed process {access} {path}: it does not exist.",
                hint="Create it before starting the process.",
            )
    return resolved


def inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def inside_any(path: Path, roots: Iterable[Path]) -> bool:
    return any(inside(path, root) for root in roots)


_T = TypeVar("_T")


def unique(items: Iterable[_T]) -> list[_T]:
    return list(dict.fromkeys(items))


def outermost(paths: Iterable[Path]) -> list[Path]:
    """The paths without those inside another, in their first order."""
    distinct = unique(paths)
    return [p for p in distinct if not any(o != p and inside(p, o) for o in distinct)]
