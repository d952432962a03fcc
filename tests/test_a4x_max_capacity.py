"""A4X Max capacity: "You must use the reservation-bound provisioning model. Other provisioning models
are not supported" (docs.cloud.google.com/ai-hypercomputer/docs/create/create-a4xmax-mig, Limitations,
read 2026-11-28; catalog `reservation_only`). Validate, through the shipped stack file, and GpuNodePool
refuse spot, flex-start and queued A4X Max pools with that rule, and accept the stack's own pool."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from helpers import construct, raw_config
from test_a4x_pools import ARGS
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.components import GpuNodePool, Reservation
from trainstack.core import catalog, rules
from trainstack.core.errors import ConfigError
from trainstack.infra.stack import load

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


@pytest.mark.parametrize("provisioning", ["spot", "flex-start", "queued"])
def test_gpu_node_pool_refuses_them_too(provisioning: str) -> None:
    args = dataclasses.replace(ARGS, machine_type=MAX.name, provisioning=provisioning, reservation=Reservation(affinity="none"))
    error, registered = construct(GpuNodePool, args)
    (rule,) = [r for k, r in rules.reserved_capacity(MAX, provisioning, "none") if k == ("provisioning",)]
    assert registered == [] and error is not None and (("provisioning",), provisioning, rule) in error.problems
