"""The screens of bugbout-tui: six modes and the drill-downs pushed on top of them."""
