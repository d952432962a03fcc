"""What a stack knows of the platform it builds or runs on, one shape whichever its source: each
stack-file kind reads them from its own config (`StackConfig.facts`, `FleetStackConfig.facts`) or,
for a workload stack, from its platform's contract (`contract.facts_on`)."""

from __future__ import annotations

from dataclasses import dataclass

from trainstack.core import catalog


@dataclass(frozen=True)
class JobPool:
    """The GPU pool a stack's jobs are queued to: its machine, its largest size and its LocalQueue."""

    machine: catalog.Machine
    nodes: int
    local_queue: str


@dataclass(frozen=True)
class PlatformFacts:
    """What a stack knows of the platform it builds or runs on, one shape whichever its source.

    Attributes:
        project, region: where this stack's resources are created (a workload stack's own, if it
            sets them, else its platform's).
        zone: the GPU pool's zone (a fleet's: its manager's).
        name_prefix: the prefix of this stack's cloud resource names: its cluster's name, or the
            cluster a workload stack runs on.
        job_pool: the GPU pool its jobs are queued to; None for a fleet, whose manager has none.
    """

    project: str
    region: str
    zone: str
    name_prefix: str
    job_pool: JobPool | None
