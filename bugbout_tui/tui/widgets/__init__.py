"""Widgets shared by the screens of bugbout-tui."""
