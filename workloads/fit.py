"""Will it fit? The GPU memory a workload needs per GPU, before anything is created.

The shape comes from trainstack.core.models, how the framework holds the model (sharding, master
weights, recomputation, its defaults) from the workload's launcher, the GPU's memory from the
catalog, and the formulas from trainstack.core.memory. `trainstack validate`, `plan` and `diff` use it;
`trainstack:workload.memoryCheck` decides whether a misfit is an error, a warning or ignored
(off: not a word).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from trainstack.core import catalog, memory, models
from trainstack.core.errors import CatalogError, Problem
from trainstack.workloads import launchers
from trainstack.workloads.spec import WorkloadSpec

# Kept free of the estimate (the peak by phase, the allowances outside the allocator and for
# fragmentation): the estimate's own error, which its measurement test bounds at 5% under.
HEADROOM = memory.HEADROOM


def estimate(workload: WorkloadSpec, machine: catalog.Machine) -> memory.Estimate:
    """The most loaded GPU's memory for `workload` on `machine`."""
    return memory.estimate(models.model_shape(workload.model), launchers.training(workload, machine), machine.gpu.memory_bytes, HEADROOM)


def summary(result: memory.Estimate) -> dict[str, float | bool | str | None]:
    """The estimate as plans and `metrics memory` show it: decimal GB per GPU, and the headroom."""
    headroom = result.headroom_bytes
    return {**result.as_json(), "headroom": None if headroom is None else round(headroom / memory.GB, 2)}


def problems(workload: WorkloadSpec, machine: catalog.Machine) -> list[Problem]:
    """A workload that would not fit, as an error naming the workload keys that would help,
    unless `memoryCheck` says warn or off."""
    if workload.memory_check != "error":
        return []
    try:
        result = estimate(workload, machine)
    except CatalogError as exc:
        return [Problem(("trainstack:workload", "model"), workload.model, f"has no shape to estimate its memory from: {exc}")]
    if result.fits is not False:
        return []
    return [Problem(("trainstack:workload",), f"{workload.model} on {machine.gpus(workload.nodes)} x {machine.gpu.name}", misfit(result, workload, machine))]


def warnings(result: memory.Estimate, workload: WorkloadSpec, machine: catalog.Machine) -> list[str]:
    """What `validate` warns of a job that would not fit: nothing under memoryCheck off."""
    if result.fits is not False or workload.memory_check == "off":
        return []
    return [misfit(result, workload, machine)]


def misfit(result: memory.Estimate, workload: WorkloadSpec, machine: catalog.Machine) -> str:
    """What does not fit, in which phase of the step, by how much, and what would make it fit."""
    gb = result.as_json()
    phase = result.peak_phase
    helps = "; ".join(f"trainstack:workload.{key}: {text}" for key, text in advice(result, workload, machine))
    escape = "; or set trainstack:workload.memoryCheck: warn" if workload.memory_check == "error" else ""
    return (
        f"needs about {gb['total']} GB per GPU, peaking in the {phase.name} at {gb['peak']} GB ({phase.what}; weights {gb['weights']}, "
        f"gradients {gb['gradients']}, optimizer {gb['optimizer']}, stored activations {gb['activations']}), plus {gb['allowance']} outside "
        f"PyTorch's allocator and {gb['fragmentation']} fragmentation, but a {machine.gpu.name} leaves {(result.limit or 0) / memory.GB:.1f} GB "
        f"after {result.headroom:.0%} headroom; would help: {helps or 'more GPUs'}{escape}"
    )


def advice(result: memory.Estimate, workload: WorkloadSpec, machine: catalog.Machine) -> list[tuple[str, str]]:
    """memory.advice for `workload`: only the changes its config and its framework's launcher accept."""
    return memory.advice(result, launchers.training(workload, machine), accepts(workload, machine))


def accepts(workload: WorkloadSpec, machine: catalog.Machine) -> Callable[[memory.Changes], bool]:
    """Whether `workload` with a change (key paths under trainstack:workload) still passes its
    section's rules and its launcher's (the rules `validate` applies to these keys)."""

    def accepted(changes: memory.Changes) -> bool:
        raw: dict[str, Any] = workload.model_dump(by_alias=True)
        for path, value in changes.items():
            *parents, leaf = path.split(".")
            section = raw
            for key in parents:  # a section the workload leaves to the framework starts empty
                if section.get(key) is None:
                    section[key] = {}
                section = section[key]
            section[leaf] = value
        try:
            changed = WorkloadSpec.model_validate(raw)
        except ValidationError:
            return False
        return not launchers.problems(changed, machine)

    return accepted
