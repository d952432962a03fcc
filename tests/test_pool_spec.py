"""The node pools' specs (components/node_pools.py): each rule between a pool's keys refuses its
value through the one door, the spec's model, which the stack file's `trainstack:gpuPools` /
`trainstack:cpuPool` and the GpuNodePool / CpuNodePool package inputs both are. One case a rule:
with the rule deleted, its case passes the model and the test fails."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from helpers import refuses
from trainstack.components.node_pools import Autoscaling, CpuPoolSpec, GpuNodePool, GpuNodePoolArgs, GpuPoolSpec, Reservation
from trainstack.core import catalog, rules
from trainstack.core.errors import ArgsError

MEGA, ULTRA, A4X = "a3-megagpu-8g", "a3-ultragpu-8g", "a4x-highgpu-4g"


def _zones(machine: str, count: int) -> list[str]:
    """`count` zones of one region that offers `machine` (by the catalog's table, where it lists the machine)."""
    zone = min(catalog.MACHINE_ZONES.get(machine, {"us-central1-a"}))
    region = rules.region_of(zone)
    return [zone, *(f"{region}-{letter}" for letter in "xyz" if f"{region}-{letter}" != zone)][:count]


def pool(machine: str, zones: int = 1, **keys: Any) -> dict[str, Any]:
    """A valid pool of `machine` over `zones` zones (no placement policy), with `keys` changed (None drops one)."""
    base = {"machineType": machine, "zones": _zones(machine, zones), "nodeCount": 2, "placement": "none"}
    return {k: v for k, v in {**base, **keys}.items() if v is not None}


AUTOSCALED: dict[str, Any] = {"nodeCount": None, "autoscaling": {"maxNodes": 2}}
NO_RESERVATION: dict[str, Any] = {"reservation": {"affinity": "none"}}
# (rule, the spec's model, the keys it refuses, the key the problem names, a text of the rule's message)
CASES: list[tuple[str, type[BaseModel], dict[str, Any], tuple[str, ...], str]] = [
    ("pool_size", GpuPoolSpec, pool(MEGA, autoscaling={"maxNodes": 2}), ("nodeCount",), "set exactly one of a fixed node count and autoscaling"),
    ("pool_nodes_per_zone", GpuPoolSpec, pool(MEGA, 2, nodeCount=3), ("nodeCount",), "must be a multiple of the number of zones (2)"),
    (
        "surge_or_unavailable",
        GpuPoolSpec,
        pool(MEGA, upgrade={"maxSurge": 0, "maxUnavailable": 0}),
        ("upgrade", "maxUnavailable"),
        "an upgrade could replace no node",
    ),
    (
        "unavailable_below_size",
        GpuPoolSpec,
        pool(MEGA, upgrade={"maxUnavailable": 2}),
        ("upgrade", "maxUnavailable"),
        "must be less than the pool's node count (2)",
    ),
    ("dws_autoscaled", GpuPoolSpec, pool(MEGA, provisioning="flex-start"), ("autoscaling",), "flex-start provisioning needs autoscaling"),
    (
        "queued",
        GpuPoolSpec,
        pool(MEGA, provisioning="queued", nodeCount=None, autoscaling={"minNodes": 2, "maxNodes": 4}),
        ("provisioning",),
        "queued provisioning needs an autoscaling minimum of 0 nodes",
    ),
    ("run_duration", GpuPoolSpec, pool(MEGA, maxRunDuration="1h"), ("maxRunDuration",), "flex-start"),
    (
        "no_reservation_for_spot_or_dws",
        GpuPoolSpec,
        pool(MEGA, provisioning="spot", reservation={"affinity": "any"}),
        ("reservation", "affinity"),
        "set affinity none",
    ),
    ("compact_one_zone", GpuPoolSpec, pool(MEGA, 2, nodeCount=4, placement="compact"), ("zones",), "compact placement needs exactly one zone"),
    (
        "compact_allowed",
        GpuPoolSpec,
        pool(MEGA, placement="compact", provisioning="flex-start", **AUTOSCALED, **NO_RESERVATION),
        ("provisioning",),
        "GKE allows compact placement with flex-start on A3 Ultra and newer",
    ),
    ("nvlink_placed", GpuPoolSpec, pool(A4X, nodeCount=18), ("placement",), "place the pool compact"),
    (
        "reserved_only",
        GpuPoolSpec,
        pool(A4X, nodeCount=18, placement="compact", **NO_RESERVATION),
        ("reservation", "affinity"),
        "come only from reserved capacity",
    ),
    ("whole_nvlink_domains", GpuPoolSpec, pool(A4X, nodeCount=10, placement="compact"), ("nodeCount",), "must be a whole number of NVLink domains"),
    ("rdma_one_zone", GpuPoolSpec, pool(ULTRA, 2), ("zones",), "needs exactly one zone: its RDMA VPC"),
    ("dranet_networking", GpuPoolSpec, pool(ULTRA, networking="dranet"), ("networking",), rules.dranet_mode(catalog.machine(ULTRA), "dranet") or "?"),
    ("gpudirect_fixed", GpuPoolSpec, pool(MEGA, gpudirect="rdma"), ("gpudirect",), "the catalog fixes it"),
    ("autoscaling_bounds", Autoscaling, {"minNodes": 5, "maxNodes": 4}, ("minNodes",), "must not exceed the maximum (4)"),
    ("reservation_name", Reservation, {"affinity": "specific"}, ("name",), "affinity 'specific' needs the reservation's name"),
    (
        "cpu_nodes_per_zone",
        CpuPoolSpec,
        {"zones": ["us-central1-a", "us-central1-b"], "nodeCount": 3},
        ("nodeCount",),
        "must be a multiple of the number of zones (2)",
    ),
]


@pytest.mark.parametrize(("model", "keys", "key", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_pool_rule_refuses_its_value_naming_the_key_as_written(model: type[BaseModel], keys: dict[str, Any], key: tuple[str, ...], text: str) -> None:
    refuses(model, keys, key, text)


@pytest.mark.parametrize("machine", [MEGA, ULTRA])
def test_the_base_pools_pass(machine: str) -> None:
    """The pools the cases change are valid, so a case's problem is its own change's."""
    assert GpuPoolSpec.model_validate(pool(machine)).node_count == 2
    assert GpuPoolSpec.model_validate(pool(A4X, nodeCount=18, placement="compact")).compact


def test_the_rules_the_audit_deleted_are_guarded() -> None:
    """architecture-turn5.md §4.1: spot/DWS consuming a reservation, DWS without autoscaling,
    max_surge = max_unavailable = 0, and compact placement over several zones."""
    deleted = {"no_reservation_for_spot_or_dws", "dws_autoscaled", "surge_or_unavailable", "compact_one_zone"}
    assert deleted <= {c[0] for c in CASES}


def test_auto_placement_is_compact_wherever_the_old_compact_default_was_accepted() -> None:
    """GpuNodePool's package default was `compact: true`; its spelling now is the stack file's
    `placement`, default `auto`. Every pool the old default accepted gets the same COMPACT policy
    from `auto`, so no package user's live pool changes its placement (a replacement) on upgrade."""
    accepted = []
    for machine in sorted(catalog.MACHINES):
        size = catalog.machine(machine).nvlink_domain_nodes or 2
        for provisioning in ("on-demand", "spot", "flex-start", "queued"):
            sized = {"nodeCount": size} if provisioning == "on-demand" else {"nodeCount": None, "autoscaling": {"maxNodes": size}}
            for reservation in ({"affinity": "any"}, {"affinity": "specific", "name": "r"}, {"affinity": "none"}):
                keys = pool(machine, provisioning=provisioning, reservation=reservation, **sized)
                try:
                    GpuPoolSpec.model_validate({**keys, "placement": "compact"})  # the old default, said outright
                except ValidationError:
                    continue
                accepted.append((machine, provisioning, reservation["affinity"]))
                assert GpuPoolSpec.model_validate({**keys, "placement": "auto"}).compact, accepted[-1]
    assert len(accepted) > len(catalog.MACHINES), accepted


PACKAGE = {"project": "my-project", "location": "us-central1", "cluster": "c", "service_account": "sa", "name": "h100", "zones": ["us-central1-a"]}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"compact": True}, {"placement": "compact"}),
        ({"compact": False}, {"placement": "none"}),
        ({"maxSurge": 1, "maxUnavailable": 0}, {"upgrade": {"maxSurge": 1, "maxUnavailable": 0}}),
        ({"maxSurge": 1, "upgrade": {"maxUnavailable": 2}}, {"upgrade": {"maxSurge": 1, "maxUnavailable": 2}}),
    ],
)
def test_the_packages_deprecated_spelling_reads_as_the_spec(old: dict[str, Any], new: dict[str, Any]) -> None:
    """GpuNodePool's inputs before the spec's spelling (`compact`, `maxSurge`, `maxUnavailable`)
    are read for one release as the spec's keys they became."""
    base = {**PACKAGE, "machineType": "a3-highgpu-8g", "nodeCount": 4}
    assert GpuNodePoolArgs.checked({**base, **old}, GpuNodePool, "h100").spec == GpuNodePoolArgs.checked({**base, **new}, GpuNodePool, "h100").spec


@pytest.mark.parametrize(
    ("given", "key"),
    [({"compact": True, "placement": "compact"}, "compact"), ({"maxSurge": 1, "upgrade": {"maxSurge": 1}}, "maxSurge")],
)
def test_a_deprecated_input_with_its_new_spelling_is_refused(given: dict[str, Any], key: str) -> None:
    with pytest.raises(ArgsError) as refused:
        GpuNodePoolArgs.checked({**PACKAGE, "machineType": "a3-highgpu-8g", "nodeCount": 4, **given}, GpuNodePool, "h100")
    ((found, _, rule),) = refused.value.problems
    assert found == (key,) and rule.startswith("is the deprecated spelling of")
