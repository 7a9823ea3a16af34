"""Strict stand-ins for the agent CLIs, and a runner that starts invocations as the engine does."""
