"""The command palette's list: every action the current screen offers, by its name.

The list is read from the bindings active where the palette was opened, so a screen's
actions appear there the moment they have a key, and never when they are disabled.
Moving a cursor (arrows, pages, first and last) is what keys are for, not a command: the
palette leaves those out, as it does the command palette's own key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

NAVIGATION_KEYS = frozenset(
    {"up", "down", "left", "right", "pageup", "pagedown", "home", "end", "shift+tab"}
)
"""Keys that move a cursor or the focus; their bindings are not listed."""


@dataclass(frozen=True)
class PaletteCommand:
    """One entry: what the palette shows, what it runs, and the key that does the same."""

    text: str
    help: str
    run: Callable[[], object]


class ActionsProvider(Provider):
    """Screens and actions of the screen the palette was opened over."""

    def _commands(self) -> list[PaletteCommand]:
        commands: list[PaletteCommand] = []
        seen: set[str] = set()
        for node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if not enabled or not binding.description or binding.action in seen:
                continue
            if binding.key in NAVIGATION_KEYS or binding.action == "command_palette":
                continue
            seen.add(binding.action)
            text = binding.description
            if binding.action.startswith("goto("):
                text = f"Go to {text}"
            key = self.app.get_key_display(binding)
            helptext = f"{tooltip or binding.tooltip or binding.description} (key: {key})"
            run = partial(self.app.run_action, binding.action, node)
            commands.append(PaletteCommand(text, helptext, run))
        return commands

    async def discover(self) -> Hits:
        for command in self._commands():
            yield DiscoveryHit(command.text, command.run, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self._commands():
            score = matcher.match(command.text)
            if score > 0:
                yield Hit(score, matcher.highlight(command.text), command.run, help=command.help)
