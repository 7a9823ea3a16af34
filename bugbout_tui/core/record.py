"""The base of every stored record, apart from the records so that each kind of record
can live in its own module."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 4
"""2: attempts record what their checkout lacked; oracles, matrices and scores the
conditions they were made under. 3: attempts record when a usage limit resets and may be
stopped by a budget (status `budget`); a ground truth may be not answered yet
(`may_pass`). 4: tasks have a kind (`bug`, `env`), and environment tasks their repairs
(`repairs.json`). Records of earlier versions read as they are; an older bugbout meeting
a later version says to upgrade rather than fail on the fields it does not know."""


class Record(BaseModel):
    """Base of every stored file: strict about unknown fields, versioned."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
