"""The local package index, for the benchmarks: it lives in `bugbout_tui.infra.package_index`,
since the built-in demo serves its Lite projects from it offline."""

from bugbout_tui.infra.package_index import (
    LONG_AGO,
    RUNNER,
    PackageIndex,
    build_sdist,
    build_wheel,
    repack_installed,
)

__all__ = ["LONG_AGO", "RUNNER", "PackageIndex", "build_sdist", "build_wheel", "repack_installed"]
