"""Linux's sandbox: bubblewrap, with a view built from mounts."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.core.errors import BugboutError, ToolMissingError
from bugbout_tui.infra.sandbox.backend import UNCONFINED_HINT, Sandbox, require_command
from bugbout_tui.infra.sandbox.confinement import (
    SYSTEM_DIRS,
    TEMP_VARIABLES,
    Confinement,
    credential_paths,
    existing,
    hidden_paths,
    inside,
    inside_any,
    network_paths,
    outermost,
    program_grants,
    resolve,
    unique,
)


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
                "`sudo pacman -S bubblewrap` (Arch). " + UNCONFINED_HINT,
            )
        return found

    def wrap(self, argv: Sequence[str], confinement: Confinement, *, cwd: Path) -> list[str]:
        require_command(argv)
        workdir = resolve(cwd, cwd)
        writable = existing(confinement.writable, workdir, "write to")
        temp_roots = unique([resolve(Path("/tmp"), workdir), resolve(Path("/var/tmp"), workdir)])
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
        for variable in TEMP_VARIABLES:
            value = confinement.env.get(variable)
            if value is None:
                continue
            target = resolve(Path(value), workdir)
            if target not in temp_roots and not inside_any(target, writable):
                command += ["--setenv", variable, "/tmp"]
        command += ["--chdir", str(workdir), "--", *argv]
        return command

    def check(self) -> None:
        bwrap = self.executable()
        failure = self.trial_failure(bwrap, "true")
        if failure is not None:
            raise BugboutError(
                f"bubblewrap cannot create a sandbox on this machine: {failure}",
                hint=bubblewrap_fix(apparmor_restricts_userns=_apparmor_restricts_userns()),
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
    return steps + " " + UNCONFINED_HINT


def _apparmor_restricts_userns() -> bool:
    flag = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
    try:
        return flag.read_text().strip() == "1"
    except OSError:
        return False


def _system_mounts() -> tuple[list[Path], list[tuple[int, int, list[str]]]]:
    """The system directories that exist here, as real paths, and the mounts showing
    them: a bind of each real directory, and a link for each that is a link on the host
    (`/bin` to `usr/bin` on a merged /usr)."""
    real = [Path(os.path.realpath(d)) for d in SYSTEM_DIRS if os.path.isdir(d)]
    shown = outermost(real)
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
        for store in [*credential_paths(confinement.env), *hidden_paths(confinement)]
        if os.path.exists(store) and not inside_any(store, writable)
    ]
    wanted = [*existing(confinement.readable, workdir, "read"), workdir]
    wanted += program_grants(argv, confinement, candidates) if argv else []
    mounts: list[tuple[int, int, list[str]]] = []
    if minimal:
        system, mounts = _system_mounts()
        if confinement.network:
            wanted += network_paths(confinement.env)
        readable = unique(
            path
            for path in wanted
            if not inside_any(path, writable)
            and (not inside_any(path, system) or inside_any(path, candidates))
        )
        exposed = [*system, *writable, *readable]
        masks = [store for store in candidates if inside_any(store, exposed)]
    else:
        hiding = [*temp_roots, *candidates]
        readable = unique(
            path for path in wanted if inside_any(path, hiding) and not inside_any(path, writable)
        )
        exposed = [*writable, *readable]
        # Under a private temp dir, a store shows only where a grant lies inside it (its
        # directories are made for the grant's mount point) or it lies inside a grant.
        masks = [
            store
            for store in candidates
            if not inside_any(store, temp_roots)
            or inside_any(store, exposed)
            or any(inside(path, store) for path in exposed)
        ]
    masks = outermost(masks)

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
    links = unique(link for path in named for link in _links_on_the_way(path))
    return [
        arg
        for target, where in links
        if not inside_any(where, [*mounted, *system])
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
