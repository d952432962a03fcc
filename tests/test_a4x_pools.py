"""A4X pools: placed by the NVL72 workload policy (Cluster Toolkit 1047080 examples/gke-a4x/
gke-a4x.yaml: a google-beta compute resource policy with workload_policy HIGH_THROUGHPUT,
accelerator_topology 1x72, named by the pool's COMPACT placement policy), sized in whole NVLink
domains (18 nodes), on GKE 1.34 or newer; each rule is the pool's spec's, which GpuNodePool takes."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from helpers import construct, merge, of_type, one, raw_config, render
from trainstack.app.deploy.stack_file import load
from trainstack.components import GpuNodePool, GpuNodePoolArgs
from trainstack.components.node_pools import GpuPoolSpec
from trainstack.core import catalog, rules
from trainstack.core.errors import ConfigError

A4X = catalog.machine("a4x-highgpu-4g")
POOL = {"name": "a4x", "machineType": "a4x-highgpu-4g", "nodeCount": 18}


def a4x_raw(pool: dict[str, Any] | None = None, **changes: Any) -> dict[str, Any]:
    """recipe 000's stack on one A4X pool (its job shrunk to fit), with `changes`."""
    base = raw_config(
        trainstack_gpuPool={**POOL, **(pool or {})},
        trainstack_cluster={"versionPrefix": "1.35."},
        trainstack_image={"prebuilt": catalog.image("nemo-26.02").ref},  # published for arm64
        trainstack_workload={"nodes": 16, "parallelism": None, "resiliency": {"enabled": False}, "memoryCheck": "off"},
    )
    return merge(base, {k.replace("_", ":", 1): v for k, v in changes.items()})


def problems(raw: dict[str, Any]) -> list[str]:
    try:
        load("a4x", raw)
    except ConfigError as error:
        return error.problems
    return []


@pytest.mark.parametrize("nodes", [18, 36])
def test_whole_nvlink_domains_are_accepted(nodes: int) -> None:
    assert problems(a4x_raw({"nodeCount": nodes})) == []


@pytest.mark.parametrize(("nodes", "use"), [(17, "18"), (19, "18 or 36"), (35, "18 or 36"), (37, "36 or 54")])
def test_a_pool_just_off_a_whole_domain_is_refused_naming_key_value_and_rule(nodes: int, use: str) -> None:
    assert problems(a4x_raw({"nodeCount": nodes})) == [
        (f"trainstack:gpuPool.nodeCount = {nodes}: must be a whole number of NVLink domains: a4x-highgpu-4g has 18 nodes in each (1x72 GPUs); use {use}")
    ]


def test_autoscaling_bounds_are_whole_domains_too() -> None:
    raw = a4x_raw({"nodeCount": None, "autoscaling": {"minNodes": 18, "maxNodes": 40}})
    assert problems(raw) == [
        (
            "trainstack:gpuPool.autoscaling.maxNodes = 40: must be a whole number of NVLink domains: a4x-highgpu-4g has 18 "
            "nodes in each (1x72 GPUs); use 36 or 54"
        )
    ]


def test_no_placement_is_refused() -> None:
    assert problems(a4x_raw({"placement": "none"})) == [
        (
            "trainstack:gpuPool.placement = 'none': a4x-highgpu-4g pools are placed by their NVLink domain's workload policy "
            "(accelerator topology 1x72); place the pool compact"
        )
    ]


@pytest.mark.parametrize("prefix", [None, "1.33."])
def test_gke_older_than_dra_is_refused(prefix: str | None) -> None:
    shown = "None" if prefix is None else repr(prefix)
    assert problems(a4x_raw(trainstack_cluster={"versionPrefix": prefix})) == [
        (
            f"trainstack:cluster.versionPrefix = {shown}: a4x-highgpu-4g needs GKE 1.34 or newer; set a version prefix of 1.34. "
            "or later (trainstack:gpuPool.machineType)"
        )
    ]


def test_the_pool_is_placed_by_a_1x72_workload_policy_even_on_a_specific_reservation() -> None:
    rendered = render("a3ultra-405b", a4x_raw())  # recipe 000's specific reservation
    policy = one(rendered, "gcp:compute/resourcePolicy:ResourcePolicy")
    assert policy.inputs["workloadPolicy"] == {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "1x72"}
    assert policy.inputs["region"] == "us-central1" and policy.inputs["name"] == "a3ultra-405b-a4x-nvlink"
    pool = next(p for p in of_type(rendered, "gcp:container/nodePool:NodePool") if p.inputs["name"] == "a4x")
    assert pool.inputs["placementPolicy"] == {"type": "COMPACT", "policyName": "a3ultra-405b-a4x-nvlink"}
    assert pool.inputs["nodeConfig"]["reservationAffinity"]["consumeReservationType"] == "SPECIFIC_RESERVATION"
    assert pool.inputs["nodeConfig"]["guestAccelerators"][0] | {} == {**pool.inputs["nodeConfig"]["guestAccelerators"][0], "type": "nvidia-gb200", "count": 4}
    cluster = one(rendered, "gcp:container/cluster:Cluster")
    assert cluster.inputs["enableK8sBetaApis"]["enabledApis"] == list(catalog.DRA_BETA_APIS)


def test_other_machines_get_no_workload_policy_and_no_beta_apis() -> None:
    rendered = render("a3ultra-405b")
    assert of_type(rendered, "gcp:compute/resourcePolicy:ResourcePolicy") == []
    assert "enableK8sBetaApis" not in one(rendered, "gcp:container/cluster:Cluster").inputs


ARGS = GpuNodePoolArgs(
    spec=GpuPoolSpec.model_validate(
        {
            "name": "a4x",
            "zones": ["us-central1-b"],
            "machineType": "a4x-highgpu-4g",
            "nodeCount": 18,
            "reservation": {"affinity": "specific", "name": "a4x-reservation"},
        }
    ),
    project="my-project",
    location="us-central1",
    cluster="projects/my-project/locations/us-central1/clusters/c",
    service_account="n@my-project.iam.gserviceaccount.com",
)


@pytest.mark.parametrize("nodes", [18, 36])
def test_gpu_node_pool_places_whole_domains_by_the_workload_policy(nodes: int) -> None:
    """The component takes the spec (its rules, the stack file's, refuse 17 and 19 above) and places the pool."""
    error, registered = construct(GpuNodePool, dataclasses.replace(ARGS, spec=ARGS.spec.model_copy(update={"node_count": nodes})))
    assert error is None and "gcp:compute/resourcePolicy:ResourcePolicy" in registered


def test_flex_start_and_queued_pools_are_refused_as_toolkit_refuses_their_compact_placement() -> None:
    """Toolkit's gke-node-pool allows compact placement with flex-start only on ^(a3-ultragpu-|a4-|h4d-)
    and never with queued provisioning; an A4X pool is always compact (its workload policy)."""
    dws = {"nodeCount": None, "autoscaling": {"minNodes": 0, "maxNodes": 18}, "reservation": {"affinity": "none", "name": None}}
    assert (
        "trainstack:gpuPool.provisioning = 'flex-start': GKE allows compact placement with flex-start on A3 Ultra and newer, not on a4x-highgpu-4g"
        in problems(a4x_raw({**dws, "provisioning": "flex-start"}))
    )
    assert problems(a4x_raw({**dws, "provisioning": "queued"}))[0].startswith(
        "trainstack:gpuPool.provisioning = 'queued': queued provisioning takes no compact placement policy"
    )


@pytest.mark.parametrize(
    ("pool", "key", "value"),
    [
        ({"provisioning": "spot", "reservation": {"affinity": "none", "name": None}}, ("provisioning",), "spot"),
        ({"reservation": {"affinity": "none", "name": None}}, ("reservation", "affinity"), "none"),
    ],
)
def test_a4x_capacity_is_reserved_only(pool: dict[str, Any], key: tuple[str, ...], value: str) -> None:
    """Cluster Director's consumption options (docs.cloud.google.com/cluster-director/docs/
    choose-consumption-option): A4X only from blocks of a future reservation. Spot, and on-demand
    consuming no reservation, are refused by the pool's spec (the stack file's and GpuNodePool's)."""
    (rule,) = [r for k, r in rules.reserved_capacity(A4X, pool.get("provisioning", "on-demand"), pool["reservation"]["affinity"]) if k == key]
    assert f"trainstack:gpuPool.{'.'.join(key)} = '{value}': {rule}" in problems(a4x_raw(pool))


def test_a4x_takes_any_matching_reservation_too() -> None:
    assert rules.reserved_capacity(A4X, "on-demand", "any") == [] == rules.reserved_capacity(A4X, "on-demand", "specific")
    assert rules.reserved_capacity(catalog.machine("a4-highgpu-8g"), "spot", "none") == []
