"""The Textual app, `bugbout-tui`: the only part of the package that imports textual."""
