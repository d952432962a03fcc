"""A4X Max capacity: "You must use the reservation-bound provisioning model. Other provisioning models
are not supported" (docs.cloud.google.com/ai-hypercomputer/docs/create/create-a4xmax-mig, Limitations,
read 2026-11-28; catalog `reservation_only`). The pool's spec (the stack file's and GpuNodePool's)
refuses spot, flex-start and queued A4X Max pools with that rule, and accepts the stack's own pool."""

from __future__ import annotations

from typing import Any

import pytest

from helpers import raw_config
from trainstack.app.deploy.stack_file import load
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.core import catalog, rules
from trainstack.core.errors import ConfigError

STACK = "a4xmax-llama31-405b"
MAX = catalog.machine("a4x-maxgpu-4g-metal")
DWS = {"nodeCount": None, "autoscaling": {"minNodes": 0, "maxNodes": 18}}


def problems(raw: dict[str, Any]) -> list[str]:
    try:
        load(STACK, raw)
    except ConfigError as error:
        return error.problems
    return []


def test_the_rule_is_the_providers_cited() -> None:
    ((key, rule),) = rules.reserved_capacity(MAX, "spot", "specific")
    assert key == ("provisioning",)
    assert "reservation-bound provisioning model" in rule and "create-a4xmax-mig" in rule


def test_the_shipped_stack_consumes_its_reservation_and_is_accepted() -> None:
    assert problems(raw_stack_config(STACK)) == []


@pytest.mark.parametrize("provisioning", ["spot", "flex-start", "queued"])
@pytest.mark.parametrize("reservation", [{"affinity": "specific", "name": "a4x-max-reservation"}, {"affinity": "none", "name": None}])
def test_validate_refuses_other_provisioning_models(provisioning: str, reservation: dict[str, Any]) -> None:
    pool = {"provisioning": provisioning, "reservation": reservation, **(DWS if provisioning != "spot" else {})}
    (rule,) = [r for k, r in rules.reserved_capacity(MAX, provisioning, reservation["affinity"]) if k == ("provisioning",)]
    assert f"trainstack:gpuPool.provisioning = '{provisioning}': {rule}" in problems(raw_config(STACK, trainstack_gpuPool=pool))
