"""A simple packaging tool for simple packages: the build backend half."""
