"""`trainstack up`, made safe: what the stack is (its offline plan's summary and warnings), what the
update changes in the live stack (Pulumi's own preview), what of that loses data or restarts the
running job, and only then, asked or with `--yes`, the update.

The hazards are those `trainstack diff` leads with (app/review/diff.py, DATA and JOB), read here
from the engine's preview steps: a data store (app/review/semantics.py DATA_STORES) replaced or
deleted loses its bytes; the JobSet replaced or deleted restarts the job from its last checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trainstack.app.ops.automation import Stack, echo
from trainstack.app.review.semantics import DATA_STORES, JOBSET

# The engine's step ops (sdk/python/lib/pulumi/automation/events.py OpType) that remove a live
# resource: a replacement's delete half and a delete; `replace` is the step a preview shows.
LOSES = {"replace": "replaced", "create-replacement": "replaced", "delete-replaced": "replaced", "delete": "deleted", "discard": "deleted"}
COUNTED = ("create", "update", "replace", "delete")  # the header's columns, each apart; the rest is "unchanged"


@dataclass
class Previewed:
    """What a `pulumi preview` of the stack reported: each step (op, type, URN) and the engine's counts by op."""

    steps: list[tuple[str, str, str]] = field(default_factory=list)
    changes: dict[str, int] = field(default_factory=dict)

    @property
    def unchanged(self) -> bool:
        return not any(self.changes.get(op) for op in COUNTED)

    def counts(self) -> str:
        """`2 to create, 1 to update, 1 to replace, 0 to delete, 14 unchanged`."""
        same = sum(n for op, n in self.changes.items() if op not in COUNTED)
        return ", ".join([*(f"{self.changes.get(op, 0)} to {op}" for op in COUNTED), f"{same} unchanged"])

    def hazards(self) -> list[str]:
        """The data stores and the running job the update replaces or deletes, each once."""
        found: dict[str, str] = {}
        for op, rtype, urn in self.steps:
            fate = LOSES.get(op)
            name = urn.rsplit("::", 1)[-1]
            if fate and rtype in DATA_STORES:
                found.setdefault(urn, f"DATA: the {DATA_STORES[rtype]} {name} is {fate}: its data is lost")
            elif fate and rtype == JOBSET:
                found.setdefault(urn, f"RUNNING JOB: the JobSet {name} is {fate}: the job stops (and restarts from its last checkpoint)")
        return list(found.values())


def preview(stack: Stack) -> Previewed:
    """`pulumi preview --diff` of `stack` (its output streamed), its steps and counts collected."""
    seen = Previewed()

    def on_event(event: Any) -> None:
        pre = event.resource_pre_event
        if pre is not None:
            meta = pre.metadata
            seen.steps.append((str(getattr(meta.op, "value", meta.op)), meta.type, meta.urn))

    result = stack.preview(on_output=echo, diff=True, on_event=on_event)
    seen.changes = {str(getattr(op, "value", op)): n for op, n in (result.change_summary or {}).items()}
    return seen
