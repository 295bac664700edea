"""A typer group whose commands are imported only when one of them is used.

Why: a command's module imports what the command runs (the attack library, the bench, the reward
server), and importing all of them costs over a second; ``truegrade --help`` and
``truegrade --version`` need none of it. The group knows each command's name, where it lives and
the first paragraph of its help; it imports a command's module when that command is run, its help
is shown or the command is looked up (``group.commands[name]``, ``get_command``), and builds it
exactly as ``app.command(name)`` / ``app.add_typer(sub_app, name=name)`` would.

What it must never do: import a command's module to list the commands (the group's help shows
the recorded summaries), or show a summary that differs from the command's own help
(``tests/cli/test_startup.py`` compares them).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from typer._click import Command, Context, HelpFormatter

__all__ = ["LazyCommand", "LazyGroup"]


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives and what the group's command list says of it.

    Attributes:
        target: ``module:attribute``, a command function or a ``typer.Typer`` of subcommands.
        summary: the first paragraph of the command's help, line breaks included (the list
            shows it as the command's own help would be shown).
    """

    target: str
    summary: str

    def load(self, name: str, group: TyperGroup) -> Command:
        """Import the command and build it as ``group``'s typer app would have."""
        module, _, attribute = self.target.partition(":")
        found = getattr(importlib.import_module(module), attribute)
        holder = typer.Typer(
            rich_markup_mode=group.rich_markup_mode, suggest_commands=group.suggest_commands
        )
        if isinstance(found, typer.Typer):
            holder.add_typer(found, name=name)
        else:
            holder.command(name)(found)
        return typer.main.get_group(holder).commands[name]


class _Commands(MutableMapping[str, "Command"]):
    """A group's commands by name: listing names imports nothing, looking one up imports it."""

    def __init__(self, group: TyperGroup, lazy: Mapping[str, LazyCommand]) -> None:
        self._group = group
        self._lazy = dict(lazy)
        self._loaded: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        if name not in self._loaded:
            self._loaded[name] = self._lazy[name].load(name, self._group)
        return self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._lazy or name in self._loaded

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._lazy, *self._loaded]))

    def __len__(self) -> int:
        return len(self._lazy.keys() | self._loaded.keys())

    def __setitem__(self, name: str, command: Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._lazy.pop(name, None)
        self._loaded.pop(name, None)

    def listed(self, name: str) -> Command:
        """The command as the group's help lists it: the command itself once imported, else a
        stand-in with its name and summary."""
        if name in self._loaded:
            return self._loaded[name]
        return TyperCommand(name=name, help=self._lazy[name].summary)


class LazyGroup(TyperGroup):
    """A typer group of ``lazy_commands``: a subclass sets them, ``typer.Typer(cls=)`` takes it."""

    lazy_commands: ClassVar[Mapping[str, LazyCommand]] = {}

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._lazy = _Commands(self, self.lazy_commands)
        self._lazy.update(self.commands)
        self.commands = self._lazy
        self._listing = False

    def list_commands(self, ctx: Context) -> list[str]:
        return list(self.commands)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        if self._listing and cmd_name in self._lazy:
            return self._lazy.listed(cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
