"""The macOS profile, read back with a small SBPL reader so structure, not spelling, is tested.

Seatbelt only runs on macOS; the profile text is checked everywhere, and a real run is
checked on macOS.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TypeAlias

import pytest

from bugbout_tui.core.errors import BugboutError
from bugbout_tui.infra.sandbox import (
    CREDENTIAL_STORES,
    Confinement,
    SeatbeltSandbox,
    describe_sandbox,
    select_sandbox,
)

Form: TypeAlias = "str | list[Form]"


class Literal(str):
    """A string literal, as opposed to a bare symbol such as `subpath`."""


class Regex(Literal):
    """A `#"..."` regular expression literal."""


def read_sbpl(text: str) -> list[Form]:
    """Parse SBPL (Scheme syntax) into nested lists, decoding string escapes."""
    stack: list[list[Form]] = [[]]
    index = 0
    while index < len(text):
        char = text[index]
        if char.isspace():
            index += 1
        elif char == ";":
            index = text.index("\n", index) + 1
        elif char == "(":
            stack.append([])
            index += 1
        elif char == ")":
            done = stack.pop()
            stack[-1].append(done)
            index += 1
        elif char == '"' or text.startswith('#"', index):
            regex = char == "#"
            index += 2 if regex else 1
            value = []
            while text[index] != '"':
                if text[index] == "\\":
                    index += 1
                    assert text[index] in '"\\', f"unexpected escape \\{text[index]}"
                value.append(text[index])
                index += 1
            index += 1
            stack[-1].append(Regex("".join(value)) if regex else Literal("".join(value)))
        else:
            end = index
            while end < len(text) and not text[end].isspace() and text[end] not in "()":
                end += 1
            stack[-1].append(text[index:end])
            index = end
    assert len(stack) == 1, "unbalanced parentheses"
    return stack[0]


def filters(form: Form, kind: str) -> list[Form]:
    """The arguments of the `(kind argument)` filters inside a rule."""
    assert isinstance(form, list)
    return [f[1] for f in form if isinstance(f, list) and f[0] == kind]


def symbols(forms: list[Form]) -> list[str]:
    """Every bare symbol (operation, filter or action name), however deeply nested."""
    found: list[str] = []
    for form in forms:
        if isinstance(form, list):
            found += symbols(form)
        elif not isinstance(form, Literal):
            found.append(form)
    return found


def rules(profile: list[Form], action: str, *operations: str) -> list[int]:
    """Positions of the top-level rules `(action operations... filters...)`."""
    return [
        index
        for index, form in enumerate(profile)
        if isinstance(form, list) and form[: 1 + len(operations)] == [action, *operations]
    ]


def profile_of(confinement: Confinement, cwd: Path) -> list[Form]:
    return read_sbpl(SeatbeltSandbox().profile(confinement, cwd=cwd))


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    path = tmp_path / "checkout"
    path.mkdir()
    return path


def test_writes_are_denied_then_allowed_only_in_the_given_places(checkout: Path) -> None:
    logs = checkout.parent / "logs"
    logs.mkdir()
    profile = profile_of(Confinement(writable=(checkout, logs), env={}), checkout)

    assert profile[:3] == [["version", "1"], ["allow", "default"], ["deny", "file-write*"]]
    (allow,) = rules(profile, "allow", "file-write*")
    assert allow > rules(profile, "deny", "file-write*")[0]
    granted = profile[allow]
    assert isinstance(granted, list)
    subpaths = filters(granted, "subpath")
    assert subpaths[:3] == ["/private/tmp", "/private/var/tmp", "/private/var/folders"]
    assert set(subpaths) == {
        "/private/tmp",
        "/private/var/tmp",
        "/private/var/folders",
        os.path.realpath(checkout),
        os.path.realpath(logs),
    }
    assert {"/dev/null", "/dev/tty"} <= set(filters(granted, "literal"))
    assert all(isinstance(p, Regex) for p in filters(granted, "regex"))


@pytest.mark.parametrize("network", [False, True])
def test_the_network_is_denied_last_unless_allowed(network: bool, checkout: Path) -> None:
    profile = profile_of(Confinement(writable=(checkout,), network=network), checkout)

    denials = rules(profile, "deny", "network*")
    if network:
        assert denials == []
        assert not any("network" in symbol for symbol in symbols(profile))
    else:
        # Nothing after it allows any network, loopback included.
        assert denials == [len(profile) - 1]
        assert profile[-1] == ["deny", "network*"]


def test_paths_are_escaped_as_sbpl_strings(tmp_path: Path) -> None:
    awkward = tmp_path / 'say "hi" \\ (then) ; bye'
    awkward.mkdir()
    text = SeatbeltSandbox().profile(Confinement(writable=(awkward,)), cwd=tmp_path)

    assert '\\"hi\\" \\\\ (then)' in text
    (allow,) = rules(read_sbpl(text), "allow", "file-write*")
    granted = read_sbpl(text)[allow]
    assert isinstance(granted, list)
    assert os.path.realpath(awkward) in filters(granted, "subpath")


def test_paths_are_resolved_to_what_the_kernel_sees(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    profile = profile_of(
        Confinement(writable=(Path("link"),), env={"TMPDIR": str(tmp_path / "link")}), tmp_path
    )

    (allow,) = rules(profile, "allow", "file-write*")
    granted = profile[allow]
    assert isinstance(granted, list)
    subpaths = filters(granted, "subpath")
    assert str(real) in subpaths
    assert str(tmp_path / "link") not in subpaths
    assert subpaths.count(str(real)) == 1


def test_a_missing_writable_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BugboutError, match="does not exist"):
        SeatbeltSandbox().profile(Confinement(writable=(tmp_path / "absent",)), cwd=tmp_path)


def test_credential_stores_are_unreadable_unless_granted(tmp_path: Path, checkout: Path) -> None:
    home = tmp_path / "home"
    gemini = home / ".gemini"
    known_hosts = home / ".ssh" / "known_hosts"
    gemini.mkdir(parents=True)
    known_hosts.parent.mkdir()
    known_hosts.write_text("example.org ssh-ed25519 AAAA")
    env = {"HOME": str(home)}
    confinement = Confinement(writable=(checkout, gemini), env=env, readable=(known_hosts,))
    profile = profile_of(confinement, checkout)

    (deny,) = rules(profile, "deny", "file-read*", "file-write*")
    assert deny > rules(profile, "allow", "file-write*")[0]
    denied = profile[deny]
    assert isinstance(denied, list)
    hidden = set(filters(denied, "subpath"))
    real_home = Path(os.path.realpath(home))
    assert {str(real_home / ".ssh"), str(real_home / ".aws"), str(real_home / ".netrc")} <= hidden
    assert str(real_home / ".gemini" / "oauth_creds.json") not in hidden
    assert len([s for s in CREDENTIAL_STORES if str(real_home / s) in hidden]) == (
        len(CREDENTIAL_STORES) - 1
    )
    (reopen,) = rules(profile, "allow", "file-read*")
    assert reopen > deny
    shown = profile[reopen]
    assert isinstance(shown, list) and filters(shown, "subpath") == [str(known_hosts)]


def test_stores_inside_a_writable_path_are_left_alone_and_grants_inside_a_store_win(
    tmp_path: Path, checkout: Path
) -> None:
    home = tmp_path / "home"
    config = home / ".config"
    agent_keys = home / ".ssh" / "agent"
    config.mkdir(parents=True)
    agent_keys.mkdir(parents=True)
    confinement = Confinement(writable=(config, agent_keys), env={"HOME": str(home)})
    profile = profile_of(confinement, checkout)

    real_home = Path(os.path.realpath(home))
    (deny,) = rules(profile, "deny", "file-read*", "file-write*")
    denied = filters(profile[deny], "subpath")
    assert str(real_home / ".config" / "gh") not in denied
    assert str(real_home / ".ssh") in denied
    (reopen,) = rules(profile, "allow", "file-read*", "file-write*")
    assert reopen > deny
    assert filters(profile[reopen], "subpath") == [str(agent_keys)]


def test_wrap_runs_sandbox_exec_with_the_profile(checkout: Path) -> None:
    sandbox = SeatbeltSandbox()
    confinement = Confinement(writable=(checkout,), env={"PATH": "/usr/bin"})
    argv = sandbox.wrap(["python", "-m", "pytest"], confinement, cwd=checkout)

    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"]
    assert argv[2] == sandbox.profile(confinement, cwd=checkout)
    assert argv[3:] == ["python", "-m", "pytest"]


@pytest.mark.skipif(sys.platform == "darwin", reason="seatbelt works on macOS")
def test_seatbelt_explains_that_it_is_macos_only() -> None:
    with pytest.raises(BugboutError) as caught:
        select_sandbox("seatbelt")

    assert "macOS" in caught.value.message
    assert caught.value.hint is not None and "bubblewrap" in caught.value.hint
    report = describe_sandbox("seatbelt")
    assert not report.ok and report.backend == "seatbelt" and "macOS" in report.detail


@pytest.mark.skipif(sys.platform != "darwin", reason="seatbelt runs only on macOS")
def test_seatbelt_confines_a_real_process(tmp_path: Path, checkout: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sandbox = select_sandbox("seatbelt")
    code = (
        "import socket, sys\n"
        "open(sys.argv[1], 'w').write('ok')\n"
        "try:\n    open(sys.argv[2], 'w')\nexcept OSError:\n    print('write denied')\n"
        "try:\n    socket.create_connection(('127.0.0.1', 9), timeout=5)\n"
        "except PermissionError:\n    print('network denied')\nexcept OSError:\n    pass\n"
    )
    argv = [sys.executable, "-c", code, str(checkout / "a"), str(elsewhere / "b")]
    confinement = Confinement(writable=(checkout,), env={"PATH": "/usr/bin:/bin"})
    result = subprocess.run(
        sandbox.wrap(argv, confinement, cwd=checkout),
        env=dict(confinement.env),
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.stdout.split() == ["write", "denied", "network", "denied"], result.stderr
    assert (checkout / "a").read_text() == "ok"
    assert not (elsewhere / "b").exists()


# --- the minimal view ------------------------------------------------------------------


def minimal_profile(confinement: Confinement, cwd: Path, argv: list[str]) -> list[Form]:
    return read_sbpl(SeatbeltSandbox().profile(confinement, cwd=cwd, argv=argv))


def test_the_minimal_view_denies_every_read_then_allows_the_system_and_the_grants(
    tmp_path: Path, checkout: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    confinement = Confinement(
        writable=(checkout,), env={"HOME": str(home)}, readable=(data, home), view="minimal"
    )
    profile = minimal_profile(confinement, checkout, [sys.executable, "-c", "pass"])

    assert profile[:3] == [["version", "1"], ["allow", "default"], ["deny", "file-read*"]]
    (metadata,) = rules(profile, "allow", "file-read-metadata")
    (reads,) = rules(profile, "allow", "file-read*")
    assert 2 < metadata < reads
    allowed = set(filters(profile[reads], "subpath"))
    assert {"/usr", "/bin", "/System", "/Library", "/private/etc", "/dev"} <= allowed
    assert {"/private/tmp", "/private/var/tmp", "/private/var/folders"} <= allowed
    for path in (checkout, data, home, Path(sys.prefix)):
        real = Path(os.path.realpath(path))
        assert any(real == Path(a) or Path(a) in real.parents for a in allowed), real
    assert "/home" not in allowed and "/Users" not in allowed
    # Resolving a granted path reads the metadata of each directory above it.
    above = set(filters(profile[metadata], "literal"))
    assert {"/", "/etc", "/tmp", "/var"} <= above
    assert {str(p) for p in Path(os.path.realpath(data)).parents} <= above
    # A credential store inside a grant is still denied, after the grant.
    (deny,) = rules(profile, "deny", "file-read*", "file-write*")
    assert deny > reads
    assert os.path.join(os.path.realpath(home), ".ssh") in filters(profile[deny], "subpath")


def test_the_host_view_denies_no_reads_but_the_stores(checkout: Path) -> None:
    profile = profile_of(Confinement(writable=(checkout,), env={}), checkout)
    assert ["deny", "file-read*"] not in profile
    assert all(profile[i][2] == "file-write*" for i in rules(profile, "deny", "file-read*"))
    assert rules(profile, "allow", "file-read-metadata") == []


@pytest.mark.parametrize("network", [True, False])
def test_the_minimal_view_shows_certificates_only_with_network(
    network: bool, tmp_path: Path, checkout: Path
) -> None:
    bundle = tmp_path / "certs" / "bundle.pem"
    bundle.parent.mkdir()
    bundle.write_text("-----BEGIN CERTIFICATE-----")
    confinement = Confinement(
        writable=(checkout,),
        env={"SSL_CERT_FILE": str(bundle)},
        network=network,
        view="minimal",
    )
    profile = minimal_profile(confinement, checkout, ["/usr/bin/true"])
    (reads,) = rules(profile, "allow", "file-read*")
    assert (os.path.realpath(bundle) in filters(profile[reads], "subpath")) is network


@pytest.mark.skipif(sys.platform != "darwin", reason="seatbelt runs only on macOS")
def test_seatbelt_minimal_view_confines_a_real_process(tmp_path: Path, checkout: Path) -> None:
    granted = tmp_path / "granted"
    elsewhere = tmp_path / "elsewhere"
    for folder in (granted, elsewhere):
        folder.mkdir()
        (folder / "data.txt").write_text("readable")
    code = (
        "import os\n"
        "for name in ('GRANTED', 'ELSEWHERE'):\n"
        "    try:\n        print(open(os.environ[name]).read())\n"
        "    except OSError:\n        print('denied')\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "GRANTED": str(granted / "data.txt"),
        "ELSEWHERE": str(elsewhere / "data.txt"),
    }
    confinement = Confinement(writable=(checkout,), env=env, readable=(granted,), view="minimal")
    sandbox = select_sandbox("seatbelt")
    result = subprocess.run(
        sandbox.wrap([sys.executable, "-c", code], confinement, cwd=checkout),
        env=env,
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.stdout.split() == ["readable", "denied"], result.stderr
