"""How much room each directory takes."""

from dusize.sizes import describe, directory_size

__all__ = ["describe", "directory_size"]
