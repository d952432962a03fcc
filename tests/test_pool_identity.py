"""A GPU pool is known by its name, never by its place in `trainstack:gpuPools`.

Before, the first pool's Pulumi name was `gpu-pool` and the others' `gpu-pool-<name>`, so
swapping two pools (the README's way to order Kueue's flavors) moved one pool's config onto the
other's URN: a delete-before-replace of the live first pool (its `name` is ForceNew,
terraform-provider-google e03b762 resource_container_node_pool.go:514) and a 409 on the create
(audits/day2.md rows 20-23).
"""

from __future__ import annotations

from typing import Any

from helpers import raw_config, render
from trainstack.app.deploy import stack_file
from trainstack.app.plan.recorder import Registration
from trainstack.core import names

PLATFORM = "a3mega-capacity-platform"
GCP = "gcp:"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"


def gcp_resources(registrations: list[Registration]) -> dict[str, dict[str, Any]]:
    """Every GCP resource's inputs by URN."""
    return {r.urn: r.inputs for r in registrations if r.type.startswith(GCP)}


def pools_in(raw: dict[str, Any]) -> list[dict[str, Any]]:
    return list(raw["trainstack:gpuPools"])


def test_reordering_pools_changes_the_flavor_order_and_no_gcp_resource() -> None:
    raw = raw_config(PLATFORM)
    swapped = raw_config(PLATFORM)
    first, second, *rest = pools_in(raw)
    swapped["trainstack:gpuPools"] = [second, first, *rest]
    before, after = render(PLATFORM, raw).registrations, render(PLATFORM, swapped).registrations
    assert gcp_resources(before) == gcp_resources(after)
    order = [[f["name"] for f in g["flavors"]] for r in before if r.type == CLUSTER_QUEUE for g in r.inputs["spec"]["resourceGroups"]]
    reordered = [[f["name"] for f in g["flavors"]] for r in after if r.type == CLUSTER_QUEUE for g in r.inputs["spec"]["resourceGroups"]]
    assert [[o[1], o[0], *o[2:]] for o in order] == reordered


def test_removing_the_first_pool_leaves_the_others_urns_and_inputs() -> None:
    raw = raw_config(PLATFORM)
    dropped = raw_config(PLATFORM)
    first, *rest = pools_in(raw)
    dropped["trainstack:gpuPools"] = rest
    before, after = gcp_resources(render(PLATFORM, raw).registrations), gcp_resources(render(PLATFORM, dropped).registrations)
    gone = set(before) - set(after)
    assert gone and all(names.gpu_pool_resource(first["name"]) in urn for urn in gone)
    assert set(after) <= set(before)
    assert all(after[urn] == before[urn] for urn in after if "NodePool" in urn)


def test_only_the_first_pool_and_its_children_carry_the_positional_alias() -> None:
    """The upgrade path from positional names (tests/test_upgrade.py checks every kept release)."""
    raw = raw_config(PLATFORM)
    regs = render(PLATFORM, raw).registrations
    first = pools_in(raw)[0]["name"]
    aliased = {r.name for r in regs if any(a.endswith(f"::{names.FIRST_GPU_POOL_BEFORE}") for a in r.options.get("aliases", []))}
    # Under the TrainingPlatform each pool is `<platform>-<its name>` (infra/platform.py Place).
    assert aliased == {f"{stack_file.PLATFORM_NAME}-{names.gpu_pool_resource(first)}"}
    pools = [r for r in regs if r.type == "trainstack:gcp:GpuNodePool"]
    assert sorted(r.name for r in pools) == sorted(f"{stack_file.PLATFORM_NAME}-{names.gpu_pool_resource(p['name'])}" for p in pools_in(raw))
