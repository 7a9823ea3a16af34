"""HTTP for Humans."""

__version__ = "2.32.3"
