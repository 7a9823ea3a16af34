"""Adapters to the outside world: git, GitHub, uv, the sandbox, subprocesses and pytest."""
