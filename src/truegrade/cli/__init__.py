"""The command-line interface (``truegrade ...``)."""

from truegrade.cli._app import app, main

__all__ = ["app", "main"]
