"""Editing bugbout.toml in place, and writing the first one.

A person's config file carries their comments, order and layout; the TUI and the task
reviewer change single keys in it. `ConfigDocument` therefore edits the tomlkit document,
touching only the key that changed, and refuses to save anything that would not load.

tomlkit keeps comments and blank lines that precede a table inside the table before it,
so new keys are placed after a table's last key, and comments at the end of a table are
carried along when an agent table is added or removed, instead of being separated from
the section they introduce.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit
from tomlkit.container import Container
from tomlkit.items import AoT, Array, Comment, InlineTable, Item, Null, Table, Whitespace

from bugbout_tui.core.config import (
    CONFIG_NAME,
    Config,
    Decision,
    parse_toml,
    read_config_text,
    validate_config,
)
from bugbout_tui.core.config_errors import (
    ConfigError,
    ConfigProblem,
    Loc,
    display_path,
    dotted,
)
from bugbout_tui.core.errors import UsageError
from bugbout_tui.core.fs import write_atomic

__all__ = ["AgentTable", "ConfigDocument", "FoundDependencies", "Layout", "render_initial_config"]

AgentTable = Literal["contestants", "examiners"]

_Node = Container | Table | InlineTable


class ConfigDocument:
    """bugbout.toml as its user wrote it, with edits that leave the rest untouched."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self._document = parse_toml(text, path)
        self._saved_text = text

    @classmethod
    def load(cls, path: Path) -> ConfigDocument:
        """Read the file (or `bugbout.toml` in a directory). Only syntax is checked here,
        so a file with mistakes can still be opened and repaired."""
        file = path / CONFIG_NAME if path.is_dir() else path
        return cls(file, read_config_text(file))

    def copy(self) -> ConfigDocument:
        """An independent copy, to try an edit on without touching this document."""
        twin = ConfigDocument(self.path, self.text)
        twin._saved_text = self._saved_text
        return twin

    @property
    def text(self) -> str:
        return tomlkit.dumps(self._document)

    @property
    def modified(self) -> bool:
        """Whether there are edits that have not been saved."""
        return self.text != self._saved_text

    @property
    def config(self) -> Config:
        """The validated model of the document as it stands; raises `ConfigError`."""
        return validate_config(self._document.unwrap(), file=self.path, text=self.text)

    def problems(self) -> list[ConfigProblem]:
        """What is wrong with the document as it stands, for showing beside each field."""
        try:
            validate_config(self._document.unwrap(), file=self.path, text=self.text)
        except ConfigError as exc:
            return exc.problems
        return []

    def get(self, key: Loc) -> Any:
        """The plain value at `key` (e.g. `("run", "timeout")`), or None when absent."""
        node: Any = self._document
        for part in key:
            if isinstance(part, int):
                if not isinstance(node, AoT | Array) or not -len(node) <= part < len(node):
                    return None
            elif not isinstance(node, Container | Table | InlineTable) or part not in node:
                return None
            node = node[part]
        return node.unwrap() if isinstance(node, Item | Container) else node

    def set(self, key: Loc, value: Any) -> None:
        """Set one key, creating the tables above it; None removes the key.

        An existing key keeps its place and its trailing comment; a new key goes after
        the last key of its table.
        """
        if not key or not isinstance(key[-1], str):
            raise UsageError(f"cannot set '{dotted(key)}': it does not name a key")
        name = key[-1]
        if value is None:
            parent = self._node(key[:-1], create=False)
            if parent is not None and name in parent:
                del parent[name]
            return
        parent = self._node(key[:-1], create=True)
        assert parent is not None
        if name in parent:
            parent[name] = value
        else:
            _add_key(parent, name, tomlkit.item(value))

    def set_task_decision(self, task_id: str, decision: Decision | None) -> None:
        """Record a person's review of a task in `[tasks] include` / `exclude`.

        The id moves to the list for `decision` and out of the other one; None clears it.
        A list left empty is removed rather than kept as `[]`, and so is a `[tasks]` table
        left with neither keys nor comments.
        """
        tasks = self._node(("tasks",), create=decision is not None)
        if tasks is None:
            return
        for list_name, meaning in (("include", "accepted"), ("exclude", "excluded")):
            current = tasks.get(list_name)
            if current is not None and not isinstance(current, Array):
                raise UsageError(
                    f"[tasks] {list_name} in {display_path(self.path)} is not a list",
                    hint='Make it a list of task ids, e.g. ["mypkg-123"].',
                )
            if meaning == decision:
                if current is None:
                    _add_key(tasks, list_name, tomlkit.item([task_id]))
                elif task_id not in current.unwrap():
                    current.append(task_id)
            elif current is not None:
                for index in reversed(range(len(current))):
                    if current[index] == task_id:
                        del current[index]
                if len(current) == 0:
                    del tasks[list_name]
        left = self._document.get("tasks")
        if isinstance(left, Table) and _blank(left):
            last = self._document.body[-1][1] is left
            del self._document["tasks"]
            if last and self.text.endswith("\n\n"):
                # The blank line that set the table apart now ends the file.
                self._document = parse_toml(self.text.rstrip("\n") + "\n", self.path)

    def add_agent(self, table: AgentTable, options: Mapping[str, Any]) -> int:
        """Append an agent (keys as in the file, dashed) and return its index."""
        entry = tomlkit.table()
        for key, value in options.items():
            entry[key] = value
        existing = self._document.get(table)
        if existing is None:
            self._separate_from_previous()
            tables = tomlkit.aot()
            tables.append(entry)
            self._document.append(table, tables)
            return 0
        if not isinstance(existing, AoT):
            raise UsageError(
                f"{table} in {display_path(self.path)} is not written as [[{table}]] tables"
            )
        if len(existing) == 0:
            existing.append(entry)
            return 0
        last = existing[-1]
        trailing = _take_trailing(last.value)
        last.value.append(None, tomlkit.nl())
        existing.append(entry)
        for item in trailing:
            existing[-1].value.append(None, item)
        return len(existing) - 1

    def remove_agent(self, table: AgentTable, index: int) -> None:
        """Remove one agent; comments after it stay with what follows it."""
        existing = self._document.get(table)
        if not isinstance(existing, AoT) or not 0 <= index < len(existing):
            raise UsageError(f"{display_path(self.path)} has no [[{table}]] #{index + 1}")
        trailing = _take_trailing(existing[index].value)
        previous = existing[index - 1] if index > 0 else self._table_before(existing)
        if previous is not None:
            if index > 0:
                # What closed the previous table introduced the one removed; a preamble
                # before the first table speaks for the whole list, so it stays.
                _take_trailing(previous.value)
            for item in trailing:
                previous.append(None, item)
        del existing[index]
        if len(existing) == 0:
            del self._document[table]

    def _table_before(self, tables: AoT) -> Table | None:
        """The table whose end precedes `tables` in the file, which holds their preamble."""
        before: Table | None = None
        for _, item in self._document.body:
            if item is tables:
                return before
            if isinstance(item, Table):
                before = item
            elif isinstance(item, AoT) and len(item) > 0:
                before = item[-1]
            elif not isinstance(item, Whitespace | Comment):
                before = None
        return None

    def save(self) -> Config:
        """Write the document if it is valid; an invalid one raises `ConfigError` unwritten."""
        config = self.config
        text = self.text
        write_atomic(self.path, text)
        self._saved_text = text
        return config

    def _node(self, key: Loc, *, create: bool) -> _Node | None:
        """The table at `key`; tables missing on the way are made when `create` is set."""
        node: _Node = self._document
        depth = 0
        while depth < len(key):
            part = key[depth]
            here = dotted(key[: depth + 1])
            if not isinstance(part, str):
                raise UsageError(f"cannot reach '{here}' in {display_path(self.path)}")
            child = node.get(part)
            if child is None:
                if not create:
                    return None
                if depth == 0:
                    self._separate_from_previous()
                    self._document.append(part, tomlkit.table())
                else:
                    _add_key(node, part, tomlkit.inline_table())
                child = node[part]
            if isinstance(child, AoT):
                position = key[depth + 1] if depth + 1 < len(key) else None
                if not isinstance(position, int) or not -len(child) <= position < len(child):
                    raise UsageError(
                        f"{display_path(self.path)} has no such [[{part}]] table ('{here}')"
                    )
                child = child[position]
                depth += 1
            if not isinstance(child, Container | Table | InlineTable):
                raise UsageError(f"'{here}' in {display_path(self.path)} is not a table")
            node = child
            depth += 1
        return node

    def _separate_from_previous(self) -> None:
        """Leave one blank line before a table added at the end of the file."""
        text = self.text
        if text and not text.endswith("\n\n"):
            self._document.add(tomlkit.nl())
            if not text.endswith("\n"):
                self._document.add(tomlkit.nl())


def _blank(table: Table) -> bool:
    """Whether a table holds nothing a person wrote: no key, no comment."""
    return all(isinstance(item, Whitespace | Null) for _, item in table.value.body)


def _take_trailing(container: Container) -> list[Item]:
    """Remove and return the comments and blank lines closing a table.

    They sit before whatever follows the table in the file, so they belong to it.
    """
    taken: list[Item] = []
    while container.body and container.body[-1][0] is None:
        item = container.body[-1][1]
        if not isinstance(item, Whitespace | Comment):
            break
        container.body.pop()
        taken.insert(0, item)
    return taken


def _add_key(parent: _Node, name: str, value: Item) -> None:
    """Add a new key after the table's last key, not after the comments closing it.

    A table added after a table of the same parent (`[prices."b"]` after
    `[prices."a"]`) takes over what closed the one before it, and a blank line parts
    them, as when an agent is added.
    """
    if not isinstance(parent, Table):
        parent[name] = value
        return
    last = parent.value.body[-1][1] if parent.value.body else None
    if isinstance(value, Table) and isinstance(last, Table):
        trailing = _take_trailing(last.value)
        last.value.append(None, tomlkit.nl())
        parent.append(name, value)
        added = parent[name]
        assert isinstance(added, Table)
        for item in trailing:
            added.value.append(None, item)
        return
    trailing = _take_trailing(parent.value)
    parent.append(name, value)
    for item in trailing:
        parent.append(None, item)


# --- the first bugbout.toml --------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    """Where a repository keeps its package and tests, as far as it could be told."""

    source: str | None
    tests: str | None
    other_packages: tuple[str, ...] = ()
    """Further candidate packages, named in a comment so the user can switch."""


@dataclass(frozen=True)
class FoundDependencies:
    """What a repository's tests need besides the project, and where that was read.

    Attributes:
        requirements: PEP 508 requirements, pytest first.
        source: Where they came from, in words (``[project.optional-dependencies] test``
            in pyproject.toml); None when nothing was found and pytest alone is given.
        left_out: Names of a development group's entries left out as tools.
    """

    requirements: tuple[str, ...]
    source: str | None
    left_out: tuple[str, ...] = ()


_AGENT_EXAMPLES: dict[str, tuple[str, ...]] = {
    "codex": ('# model = "gpt-5-codex"', '# reasoning-effort = "high"'),
    "claude-code": ('# model = "sonnet"', '# effort = "high"'),
    "gemini-cli": ('# model = "gemini-2.5-pro"',),
}


def _toml_string(value: str) -> str:
    return tomlkit.item(value).as_string()


def _contestant_lines(agents: Iterable[str]) -> list[str]:
    lines: list[str] = []
    found = list(dict.fromkeys(agents))
    ready = [agent for agent in found if agent != "mini-swe-agent"]
    for agent in ready:
        lines += ["[[contestants]]", f"agent = {_toml_string(agent)}"]
        lines += [*_AGENT_EXAMPLES.get(agent, ()), ""]
    if "mini-swe-agent" in found:
        lines += [
            "# mini-swe-agent is installed too. It races any LiteLLM model, which it",
            "# needs to be told; uncomment and name one to add it:",
            "# [[contestants]]",
            '# agent = "mini-swe-agent"',
            '# model = "ollama/qwen3-coder:30b"',
            "",
        ]
    if not found:
        lines += [
            "# No agent was found on PATH (looked for codex, claude, gemini and mini).",
            "# Install one, then add it here, for example:",
            "# [[contestants]]",
            '# agent = "claude-code"',
            '# model = "sonnet"',
            "",
        ]
    return lines


def _test_dependency_lines(found: FoundDependencies | None) -> list[str]:
    if found is None or found.source is None:
        return [
            "# What the tests need besides the project's own dependencies; none is declared",
            "# where bugbout looks (test groups, requirements-test.txt, tox, nox).",
            '# test-dependencies = ["pytest"]',
        ]
    said = f"What the tests need besides the project's own dependencies, from {found.source}"
    if found.left_out:
        said += f", leaving out tools the tests do not import: {', '.join(found.left_out)}"
    listed = ", ".join(_toml_string(requirement) for requirement in found.requirements)
    comment = textwrap.wrap(said + ".", width=86, break_on_hyphens=False)
    return [*(f"# {line}" for line in comment), f"test-dependencies = [{listed}]"]


def render_initial_config(
    layout: Layout,
    github: str | None,
    agents: Iterable[str],
    test_dependencies: FoundDependencies | None = None,
) -> str:
    """A commented bugbout.toml for a repository, valid as written.

    Only what was detected is set; every other key appears as a commented example with
    its default, so the file doubles as a short reference.
    """
    if layout.source is None:
        raise UsageError("cannot write bugbout.toml without the package directory")
    lines = [
        "# bugbout races coding agents on bugs this repository has already fixed.",
        "# Commented-out keys show a default or an example; uncomment one to change it.",
        "",
        "[project]",
        "# The package under test, relative to the repository root.",
        f"source = {_toml_string(layout.source)}",
    ]
    if layout.other_packages:
        others = ", ".join(layout.other_packages)
        lines.append(f"# Other packages found here: {others}")
    if layout.tests is not None:
        lines += ["# Where the tests live.", f"tests = {_toml_string(layout.tests)}"]
    else:
        lines += [
            "# No test directory was found; name the one your tests live in.",
            '# tests = "tests"',
        ]
    if github is not None:
        lines += [
            f"# Issues are read from GitHub's {github}, found from the origin remote.",
            f"# github = {_toml_string(github)}",
        ]
    else:
        lines += [
            "# Issues are read from GitHub. No GitHub origin remote was found, so name",
            "# the repository here to read them.",
            '# github = "owner/name"',
        ]
    lines += [
        "# Test environments: dated (each task's dependencies as its fix's date",
        "# knew them) or tip (one environment from the tip's, for every task).",
        '# environments = "dated"',
        "# The test environment's Python; by default each commit's own choice (dated)",
        "# or the one running bugbout (tip).",
        '# python = "3.12"',
        *_test_dependency_lines(test_dependencies),
        "# Extra pytest arguments and environment variables for every test run.",
        '# pytest-args = ["-p", "no:randomly"]',
        '# env = { DATABASE_URL = "sqlite://" }',
        "",
        "[tasks]",
        "# Only fixes after this date count; the newest `limit` become tasks.",
        '# since = "2023-01-01"',
        "# limit = 20",
        "# A fix touching more source files than this is too broad to be one bug.",
        "# max-source-files = 2",
        "# How many times the ground truth runs each fix, to find flaky tests.",
        "# reruns = 2",
        "# Task ids you accept go in `include`, ids you drop in `exclude`. When",
        "# `require-review` is true, only accepted tasks are raced.",
        "# require-review = false",
        "# What the history is mined for: fixes with a new test (bug), and changes to",
        "# the environment files alone that repair a failing install or run (env).",
        '# kinds = ["bug"]',
        "",
        "[run]",
        "# Sandbox for agents' commands and for tests: auto, bubblewrap, seatbelt or none.",
        '# sandbox = "auto"',
        "# What agents may read: host (the machine, minus bugbout's data, the project",
        "# and the repository) or minimal (their checkout, their own install and the",
        "# system directories only). A contestant's `view` overrides it.",
        '# agent-view = "host"',
        "# Seconds one agent may spend on one task.",
        "# timeout = 1800",
        "# Runs sharing a quota take turns; allow more at once for a quota here.",
        "# quotas = { codex = 2 }",
        "# A lane that hits a usage limit waits up to this long for its window to",
        "# reopen, then resumes by itself; without it, the lane parks until a later run.",
        '# wait-for-quota = "6h"',
        "# A Dask scheduler whose workers make the test runs, and the attempts of the",
        "# agents they declare (docs/cluster.md); without it, all runs on this machine.",
        '# cluster = "tcp://10.0.0.5:8786"',
        "# A patch changing more files, or more bytes, than this is not kept: the",
        "# attempt is recorded as oversized and counts as no fix.",
        "# max-patch-files = 5000",
        "# max-patch-bytes = 10485760",
        "# Stop starting tasks once every pair of contestants is decided (exact McNemar,",
        "# corrected for looking after every task); wrong with chance at most decided-at.",
        "# stop-when-decided = false",
        "# decided-at = 0.05",
        "",
        "[judge]",
        "# How one patch is picked per bug: majority, unanimous, strict, cross-vendor",
        "# or credible.",
        '# policy = "majority"',
        "# Also run the repository's own tests on every patch, so breakage shows.",
        "# run-suite = true",
        "",
        "[env]",
        "# Environment-repair tasks install from this index (a simple API with upload",
        "# times, so each task's date holds) and audit against its JSON API.",
        '# index = "https://pypi.org/simple"',
        '# advisories = "https://pypi.org/pypi"',
        "# Also race the built-in Lite projects, each failing for one known reason.",
        "# lite = false",
        "",
        "# Contestants fix the bugs: one table per agent and model. Keys other than",
        "# agent, model, name, vendor, quota and view are options for the agent itself.",
        *_contestant_lines(agents),
        "# Any agent with a command line can race as a `command` agent:",
        "# [[contestants]]",
        '# agent = "command"',
        '# name = "aider"',
        '# command = ["aider", "--yes-always", "--no-git", "--message-file", "{prompt_file}"]',
        "",
        "# Examiners fix nothing: they write tests from the issue alone, and those tests",
        "# cross-examine every contestant's patch.",
        "# [[examiners]]",
        '# agent = "claude-code"',
        '# assignment = "reproduce"  # or "specify" for the rule behind the issue too',
    ]
    return "\n".join(lines) + "\n"
