"""The deploy critical path on a small synthetic plan whose longest path is worked out by hand."""

from __future__ import annotations

import json
from typing import Any

import pytest

from trainstack.app.plan.cost import NODE_POOL
from trainstack.app.plan.creation_times import (
    CREATION_TIMES,
    DEFAULT,
    EMPTY_NODE_POOL,
    GPU_NODE_POOL,
    KUBERNETES_OBJECT,
    PROVIDER,
)
from trainstack.app.plan.critical_path import (
    CLUSTER,
    HELM_RELEASE,
    JOBSET,
    NETWORK,
    SUBNETWORK,
    critical_path,
    weight_keys,
)
from trainstack.core import catalog
from trainstack.core.errors import ReportError

REPOSITORY = "gcp:artifactregistry/repository:Repository"
COMMAND = "command:local:Command"
BUCKET = "gcp:storage/bucket:Bucket"
LOCAL_QUEUE = f"kubernetes:{catalog.KUEUE_API}:LocalQueue"

WEIGHTS = {
    NETWORK: 30,
    SUBNETWORK: 30,
    CLUSTER: 480,
    GPU_NODE_POOL: 900,
    NODE_POOL: 240,
    PROVIDER: 2,
    HELM_RELEASE: 90,
    KUBERNETES_OBJECT: 2,
    REPOSITORY: 15,
    COMMAND: 600,
    BUCKET: 3,
}


def res(
    kind: str,
    name: str,
    *,
    parent: dict[str, Any] | None = None,
    deps: tuple[dict[str, Any], ...] = (),
    provider: dict[str, Any] | None = None,
    custom: bool = True,
    inputs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A plan resource dict; the URN qualifies the type with its parents' types, as Pulumi's does."""
    qualified = kind if parent is None else f"{parent['urn'].split('::')[2]}${kind}"
    return {
        "urn": f"urn:pulumi:test::trainstack::{qualified}::{name}",
        "type": kind,
        "name": name,
        "custom": custom,
        "parent": parent["urn"] if parent else None,
        "provider": provider["urn"] if provider else None,
        "dependencies": sorted(d["urn"] for d in deps),
        "propertyDependencies": {},
        "inputs": inputs or {},
        "options": {},
    }


def component(kind: str, name: str, parent: dict[str, Any] | None = None) -> dict[str, Any]:
    return res(kind, name, parent=parent, custom=False)


def synthetic() -> dict[str, dict[str, Any]]:
    """network -> subnet -> cluster -> GPU pool, provider -> Kueue release -> LocalQueue, JobSet; off to
    the side an RDMA network, a CPU pool, a bucket, and a registry whose image build sits in a nested
    component. The JobSet depends on the Kueue and registry components, not on their children."""
    r: dict[str, dict[str, Any]] = {}
    r["net"] = component("trainstack:gcp:Network", "net")
    r["vpc"] = res(NETWORK, "vpc", parent=r["net"])
    r["subnet"] = res(SUBNETWORK, "vpc-subnet", parent=r["net"], deps=(r["vpc"],))
    r["rdma"] = res(NETWORK, "rdma-0", parent=r["net"])
    r["rdma-subnet"] = res(SUBNETWORK, "rdma-0-subnet", parent=r["net"], deps=(r["rdma"],))
    r["gke"] = component("trainstack:gcp:GkeCluster", "gke")
    r["cluster"] = res(CLUSTER, "cluster", parent=r["gke"], deps=(r["vpc"], r["subnet"]))
    r["gpu-pool"] = res(
        NODE_POOL,
        "gpu-pool",
        parent=r["gke"],
        deps=(r["cluster"], r["rdma-subnet"]),
        inputs={"nodeCount": 2, "nodeConfig": {"guestAccelerators": [{"type": "nvidia-h200-141gb", "count": 8}]}},
    )
    r["cpu-pool"] = res(
        NODE_POOL,
        "cpu-pool",
        parent=r["gke"],
        deps=(r["cluster"],),
        inputs={"nodeCount": 1, "nodeConfig": {"machineType": "e2-standard-8"}},
    )
    r["k8s"] = res("pulumi:providers:kubernetes", "k8s", parent=r["gke"], deps=(r["cluster"],))
    r["kueue"] = component("trainstack:k8s:Kueue", "kueue")
    r["release"] = res(HELM_RELEASE, "kueue", parent=r["kueue"], provider=r["k8s"], deps=(r["cpu-pool"],))
    r["queue"] = res(LOCAL_QUEUE, "queue", parent=r["kueue"], provider=r["k8s"], deps=(r["release"],))
    r["registry"] = component("trainstack:gcp:Registry", "registry")
    r["repo"] = res(REPOSITORY, "repo", parent=r["registry"])
    r["image"] = component("trainstack:gcp:ImageBuild", "image", parent=r["registry"])
    r["build"] = res(COMMAND, "build", parent=r["image"], deps=(r["repo"],))
    r["bucket"] = res(BUCKET, "data")
    r["train"] = component("trainstack:workload:TrainingJob", "train")
    r["jobset"] = res(JOBSET, "train", parent=r["train"], provider=r["k8s"], deps=(r["kueue"], r["gpu-pool"], r["registry"]))
    return r


def plan(resources: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(resources.values(), key=lambda r: r["urn"])


def test_longest_path_is_the_essential_chain() -> None:
    r = synthetic()
    # By hand: vpc 0-30, vpc-subnet 30-60, cluster 60-540, gpu-pool 540-1440 (rdma-0-subnet done at 60);
    # cpu-pool 540-780, k8s 540-542, kueue release 780-870, queue 870-872; repo 0-15, build 15-615;
    # the JobSet waits for all of those: starts at max(542, 870, 872, 1440, 15, 615) = 1440, done at 1442.
    path = critical_path(plan(r), WEIGHTS)
    assert [s.urn for s in path.steps] == [r[k]["urn"] for k in ("vpc", "subnet", "cluster", "gpu-pool", "jobset")]
    assert [(s.start, s.finish) for s in path.steps] == [(0, 30), (30, 60), (60, 540), (540, 1440), (1440, 1442)]
    assert path.total_seconds == 1442
    assert path.floor_seconds == 30 + 30 + 480 + 900 + 2
    assert path.floor_urns == tuple(s.urn for s in path.steps)
    assert path.ratio == 1.0
    assert path.only_essential and all(s.essential for s in path.steps)
    assert path.defaulted_types == ()


def test_depending_on_a_component_waits_for_all_its_descendants() -> None:
    # The JobSet names only the registry component; the build is its grandchild (inside a nested
    # component). At 3000 s the build ends at 15 + 3000, so the JobSet starts at 3015.
    r = synthetic()
    path = critical_path(plan(r), {**WEIGHTS, COMMAND: 3000})
    assert [s.urn for s in path.steps] == [r["repo"]["urn"], r["build"]["urn"], r["jobset"]["urn"]]
    assert path.total_seconds == 15 + 3000 + 2
    assert path.floor_seconds == 1442
    assert path.ratio == pytest.approx(3017 / 1442)
    assert not path.only_essential
    assert [s.name for s in path.off_chain] == ["build"]  # the 15 s repository is negligible


def test_with_typical_times_a_nemo_image_build_outlasts_cluster_and_gpu_pool() -> None:
    r = synthetic()
    path = critical_path(plan(r))
    assert [s.urn for s in path.steps][-2:] == [r["build"]["urn"], r["jobset"]["urn"]]
    assert path.total_seconds > path.floor_seconds
    del r["build"], r["image"]  # a prebuilt image: the essential chain is the longest again
    path = critical_path(plan(r))
    assert path.only_essential and path.ratio == 1.0
    assert [s.type for s in path.steps] == [NETWORK, SUBNETWORK, CLUSTER, NODE_POOL, JOBSET]


def test_a_kubernetes_object_waits_for_its_provider() -> None:
    cluster = res(CLUSTER, "cluster")
    provider = res("pulumi:providers:kubernetes", "k8s", deps=(cluster,))
    namespace = res("kubernetes:core/v1:Namespace", "ns", provider=provider)
    path = critical_path([cluster, provider, namespace], WEIGHTS)
    assert [s.name for s in path.steps] == ["cluster", "k8s", "ns"]
    assert path.total_seconds == 480 + 2 + 2


def test_a_child_waits_for_its_custom_parent() -> None:
    bucket = res(BUCKET, "data")
    binding = res("gcp:storage/bucketIAMMember:BucketIAMMember", "reader", parent=bucket)
    path = critical_path([bucket, binding], {BUCKET: 3, "gcp:storage/bucketIAMMember:BucketIAMMember": 10})
    assert [s.name for s in path.steps] == ["data", "reader"]
    assert path.total_seconds == 13


def test_floor_sums_the_essential_chain_present() -> None:
    r = synthetic()
    del r["jobset"], r["train"]
    path = critical_path(plan(r), WEIGHTS)
    assert path.floor_urns == tuple(r[k]["urn"] for k in ("vpc", "subnet", "cluster", "gpu-pool"))
    assert path.floor_seconds == 1440
    assert critical_path([], WEIGHTS).ratio is None


def test_a_cycle_is_reported_clearly() -> None:
    a = res(NETWORK, "a")
    b = res(SUBNETWORK, "b", deps=(a,))
    a["dependencies"] = [b["urn"]]
    with pytest.raises(ReportError, match="cycle") as caught:
        critical_path([a, b, res(BUCKET, "fine")], WEIGHTS)
    assert a["urn"] in str(caught.value) and b["urn"] in str(caught.value)
    assert "fine" not in str(caught.value)


def test_a_dependency_outside_the_plan_is_reported() -> None:
    orphan = res(CLUSTER, "cluster")
    orphan["dependencies"] = ["urn:pulumi:test::trainstack::gcp:compute/network:Network::gone"]
    with pytest.raises(ReportError, match=r"depends on .*::gone, which is not in the plan"):
        critical_path([orphan], WEIGHTS)


def test_weight_keys_refine_node_pools_and_kubernetes_objects() -> None:
    gpu = {"machineType": next(iter(catalog.MACHINES))}  # A3 machines need no guestAccelerators to be GPU pools
    cpu = {"machineType": "e2-standard-8"}
    assert weight_keys(res(NODE_POOL, "p", inputs={"nodeCount": 4, "nodeConfig": gpu})) == (GPU_NODE_POOL, NODE_POOL)
    assert weight_keys(res(NODE_POOL, "p", inputs={"initialNodeCount": 1, "nodeConfig": cpu})) == (NODE_POOL,)
    from_zero = {"autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 4}, "nodeConfig": gpu}
    assert weight_keys(res(NODE_POOL, "p", inputs=from_zero)) == (EMPTY_NODE_POOL, NODE_POOL)
    deployment = res("kubernetes:apps/v1:Deployment", "d")
    assert weight_keys(deployment) == ("kubernetes:apps/v1:Deployment", KUBERNETES_OBJECT)
    deployment["inputs"] = {"metadata": {"annotations": {"pulumi.com/skipAwait": "true"}}}
    assert weight_keys(deployment) == (KUBERNETES_OBJECT,)
    assert weight_keys(res(HELM_RELEASE, "r", inputs={"skipAwait": True})) == (KUBERNETES_OBJECT,)
    assert weight_keys(res("pulumi:providers:kubernetes", "k")) == ("pulumi:providers:kubernetes", PROVIDER)


def test_unknown_types_take_the_default_and_are_named() -> None:
    odd = res("gcp:foo/bar:Baz", "odd")
    crd = res("kubernetes:example.com/v1:Widget", "w")
    path = critical_path([odd, crd])
    assert path.defaulted_types == ("gcp:foo/bar:Baz",)
    assert path.total_seconds == CREATION_TIMES[DEFAULT].seconds
    assert "Timed by the default (60 s): gcp:foo/bar:Baz." in path.to_markdown()
    assert critical_path([odd], {DEFAULT: 7}).total_seconds == 7


def test_every_typical_time_has_a_basis() -> None:
    assert all(t.seconds > 0 and len(t.basis) > 10 for t in CREATION_TIMES.values())
    t = {k: v.seconds for k, v in CREATION_TIMES.items()}
    assert t[COMMAND] > t[GPU_NODE_POOL] > t[CLUSTER] > t[NODE_POOL] > t[EMPTY_NODE_POOL] > t[NETWORK] > t[KUBERNETES_OBJECT]


def test_markdown_rendering() -> None:
    text = critical_path(plan(synthetic()), WEIGHTS).to_markdown()
    assert "**24.0 min; floor (network -> cluster -> GPU pool -> workload) 24.0 min; ratio 1.00**" in text
    assert "1. `vpc` `gcp:compute/network:Network`: 0.5 min, cumulative 0.5 min" in text
    assert "3. `cluster` `gcp:container/cluster:Cluster`: 8.0 min, cumulative 9.0 min" in text
    assert f"5. `train` `{JOBSET}`: 0.0 min, cumulative 24.0 min" in text
    assert "**Verdict:** Only network -> cluster -> GPU pool -> workload lies on the critical path (every other step on it takes under 30 s)." in text


def test_table_and_json_name_what_is_off_the_chain() -> None:
    path = critical_path(plan(synthetic()), {**WEIGHTS, COMMAND: 3000})
    table = path.to_table()
    assert table.startswith("deploy critical path: 50.3 min; floor (network -> cluster -> GPU pool -> workload) 24.0 min; ratio 2.09")
    build_line = next(line for line in table.splitlines() if line.split()[:4] == ["2", "50.0", "50.2", "build"])
    assert build_line.endswith("(off the essential chain)")
    verdict = "Not only network -> cluster -> GPU pool -> workload: the critical path also waits on build (command:local:Command, 50.0 min)."
    assert f"verdict: {verdict}" in table
    data = json.loads(json.dumps(path.to_dict()))
    assert data["totalSeconds"] == 3017 and data["floorSeconds"] == 1442 and data["ratio"] == 2.092
    assert data["onlyEssential"] is False and data["verdict"] == verdict
    assert [(p["name"], p["start"], p["finish"], p["essential"]) for p in data["path"]] == [
        ("repo", 0, 15, False),
        ("build", 15, 3015, False),
        ("train", 3015, 3017, True),
    ]
