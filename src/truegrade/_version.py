"""The package version, read from the installed metadata so there is one source of truth."""

from importlib.metadata import PackageNotFoundError, version

try:
    #: The installed distribution's version (``0.0.0+unknown`` in a source tree never installed).
    __version__ = version("truegrade")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
