"""The JSON schema of `report.json`, published at `docs/report.schema.json`.

The schema is generated from the report model, never written by hand, so the two cannot
drift apart; a test compares the committed file with what the model generates. The
package imports the schema from the model, not from here, so running this module with
`-m` finds it unimported. Regenerate the file with
`python -m bugbout_tui.report.schema docs/report.schema.json`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from bugbout_tui.core.fs import write_atomic
from bugbout_tui.report.model import report_json_schema

__all__ = ["report_json_schema", "schema_text", "write_schema"]


def schema_text() -> str:
    """The schema as the committed file holds it: indented, keys in model order."""
    return json.dumps(report_json_schema(), indent=2, ensure_ascii=False) + "\n"


def write_schema(path: Path) -> None:
    write_atomic(path, schema_text())


def main(argv: Sequence[str] | None = None) -> int:
    """Write the schema to the path given, or print it."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1:
        print("usage: python -m bugbout_tui.report.schema [PATH]", file=sys.stderr)
        return 2
    if args:
        write_schema(Path(args[0]))
    else:
        sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
