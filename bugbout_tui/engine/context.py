"""What the runners of the stages that work on the repository share."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bugbout_tui.engine.bus import EventBus
from bugbout_tui.engine.cluster import Cluster
from bugbout_tui.engine.env_sources import EnvSources
from bugbout_tui.engine.environments import Environments
from bugbout_tui.engine.project import Project
from bugbout_tui.infra.sandbox import Sandbox


@dataclass(frozen=True)
class StageContext:
    """One bout's project, its opened repository, the test environments (one per task
    under dated environments), the sandbox and the bus: made once by the bout, so every
    stage runs under the same ones.

    `retry_failed` asks the stages that keep failed results (ground truth, the race) to
    run them again. `sources` says where environment tasks' commits and packages come
    from; the bout makes one and stops its Lite index at the end.
    """

    project: Project
    repo: Path
    environments: Environments
    sandbox: Sandbox
    bus: EventBus
    retry_failed: bool = False
    sources: EnvSources | None = None
    cluster: Cluster | None = None


class StageRunner:
    """Base of a stage's runner: the parts of its context at hand as attributes."""

    def __init__(self, context: StageContext) -> None:
        self.project = context.project
        self.repo = context.repo
        self.environments = context.environments
        self.sandbox = context.sandbox
        self.bus = context.bus
        self.retry_failed = context.retry_failed
        self.sources = context.sources or EnvSources(context.project, context.repo)
        self.cluster = context.cluster
