"""The report: a pure model of what a bout found, and its renderers."""
