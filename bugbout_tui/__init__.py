"""bugbout: find out which coding agent really fixes bugs in your own codebase."""

__version__ = "0.1.0"
