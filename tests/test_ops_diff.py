"""The plan diff: a pure function of two plan dicts, its Markdown (golden) and JSON."""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

from helpers import present, raw_config
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.plan.plan import render
from trainstack.app.review.diff import (
    ABSENT,
    NODE_POOL,
    RECREATE_NODES,
    REPLACE,
    UPDATE,
    DiffReport,
    diff_plans,
    failed,
    resource_changes,
)
from trainstack.core import catalog

GOLDEN = Path(__file__).resolve().parent / "golden" / "diff-representative.md"
STACK = "a3ultra-405b"
CLUSTER_COMPONENT = "trainstack:gcp:GkeCluster"
POOLS_COMPONENT = "trainstack:gcp:NodePools"


def resource(rtype: str, name: str, inputs: dict[str, Any], parent: str | None = None, **extra: Any) -> dict[str, Any]:
    """A resource shaped exactly like plan.json's."""
    chain = f"{parent}${rtype}" if parent else rtype
    return {
        "urn": f"urn:pulumi:{STACK}::trainstack::{chain}::{name}",
        "type": rtype,
        "name": name,
        "custom": not rtype.startswith("trainstack:"),
        "parent": None,
        "provider": extra.get("provider"),
        "dependencies": [],
        "propertyDependencies": {},
        "inputs": inputs,
        "options": extra.get("options", {}),
    }


def plan(resources: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": 1, "stack": STACK, "project": "trainstack", "resources": sorted(resources, key=lambda r: r["urn"]), "outputs": {}}


def gpu_pool(machine_type: str, accelerator: str, nodes: int) -> dict[str, Any]:
    return resource(
        NODE_POOL,
        "gpu-pool",
        {
            "cluster": "a3ultra-405b",
            "location": "us-central1",
            "name": "a3-ultra",
            "nodeCount": nodes,
            "nodeLocations": ["us-central1-b"],
            "placementPolicy": {"type": "COMPACT"},
            "nodeConfig": {
                "machineType": machine_type,
                "guestAccelerators": [{"count": 8, "type": accelerator, "gpuDriverInstallationConfig": {"gpuDriverVersion": "LATEST"}}],
                "reservationAffinity": {
                    "consumeReservationType": "SPECIFIC_RESERVATION",
                    "key": "compute.googleapis.com/reservation-name",
                    "values": ["a3-ultra-reservation"],
                },
                "resourceLabels": {"managed-by": "trainstack", "trainstack-stack": STACK},
            },
        },
        POOLS_COMPONENT,
    )


def base_plan() -> dict[str, Any]:
    return plan(
        [
            resource(CLUSTER_COMPONENT, "cluster", {}),
            resource(
                "gcp:container/cluster:Cluster",
                "cluster",
                {"name": "a3ultra-405b", "location": "us-central1", "network": "a3ultra-405b-net", "removeDefaultNodePool": True, "initialNodeCount": 1},
                CLUSTER_COMPONENT,
            ),
            gpu_pool("a3-megagpu-8g", "nvidia-h100-mega-80gb", 32),
            resource(
                NODE_POOL,
                "cpu-pool",
                {"cluster": "a3ultra-405b", "name": "cpu-pool", "nodeCount": 2, "nodeConfig": {"machineType": "e2-standard-8"}},
                POOLS_COMPONENT,
            ),
            resource(
                "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet",
                "jobset",
                {
                    "apiVersion": "jobset.x-k8s.io/v1alpha2",
                    "kind": "JobSet",
                    "metadata": {"name": "llama31-405b", "namespace": "default"},
                    "spec": {"replicatedJobs": [{"name": "workers", "replicas": 32}]},
                },
            ),
        ]
    )


def head_plan() -> dict[str, Any]:
    """The representative change: more nodes, another machine type (and so accelerator), a new resource."""
    head = base_plan()
    resources = [r for r in head["resources"] if r["name"] != "gpu-pool"]
    resources.append(gpu_pool("a3-ultragpu-8g", "nvidia-h200-141gb", 36))
    jobset = next(r for r in resources if r["name"] == "jobset")
    jobset["inputs"]["spec"]["replicatedJobs"][0]["replicas"] = 36
    resources.append(
        resource("gcp:compute/subnetwork:Subnetwork", "rdma-0", {"name": "a3ultra-405b-rdma-0", "ipCidrRange": "192.168.1.0/24", "region": "us-central1"})
    )
    return plan(resources)


def test_representative_diff_matches_golden_markdown() -> None:
    report = DiffReport("origin/main", (diff_plans(STACK, base_plan(), head_plan()),))
    markdown = report.to_markdown()
    if os.environ.get("TRAINSTACK_REGEN_GOLDEN"):
        GOLDEN.write_text(markdown)
    assert GOLDEN.is_file(), "no golden diff: run TRAINSTACK_REGEN_GOLDEN=1 pytest tests/test_ops_diff.py and review it"
    assert markdown == GOLDEN.read_text(), "the diff Markdown changed; if intended, regenerate with TRAINSTACK_REGEN_GOLDEN=1 and review"


def test_representative_diff_structure() -> None:
    diff = diff_plans(STACK, base_plan(), head_plan())
    assert diff.status == "changed"
    assert [r.name for r in diff.added] == ["rdma-0"] and not diff.removed
    pool = next(c for c in diff.changed if c.resource.name == "gpu-pool")
    effects = {c.path: (c.old, c.new, c.effect) for c in pool.changes}
    assert effects == {
        "nodeConfig.guestAccelerators[0].type": ("nvidia-h100-mega-80gb", "nvidia-h200-141gb", REPLACE),
        "nodeConfig.machineType": ("a3-megagpu-8g", "a3-ultragpu-8g", RECREATE_NODES),
        "nodeCount": (32, 36, UPDATE),
    }
    assert pool.effect == REPLACE
    jobset = next(c for c in diff.changed if c.resource.name == "jobset")
    assert [(c.path, c.old, c.new, c.effect) for c in jobset.changes] == [("spec.replicatedJobs[0].replicas", 32, 36, UPDATE)]
    assert {c.resource.name for c in diff.changed} == {"gpu-pool", "jobset"}
    assert (present(diff.base).gpus, present(diff.head).gpus) == (256, 288)
    assert present(diff.head).usd_at_max > present(diff.base).usd_at_max


def test_no_change_is_one_short_line() -> None:
    report = DiffReport("origin/main", (diff_plans(STACK, base_plan(), base_plan()),))
    assert report.stacks[0].status == "unchanged"
    assert "`a3ultra-405b`: no changes" in report.to_markdown().splitlines()
    assert report.to_dict()["stacks"][0]["changed"] == []


def test_a_stack_on_one_side_only_is_all_added_or_all_removed() -> None:
    new = diff_plans(STACK, None, base_plan())
    assert new.status == "new" and len(new.added) == len(base_plan()["resources"]) and not new.changed
    assert (new.base, present(new.head).gpus) == (None, 256)
    gone = diff_plans(STACK, base_plan(), None)
    assert gone.status == "deleted" and len(gone.removed) == len(base_plan()["resources"])
    markdown = DiffReport("origin/main", (gone,)).to_markdown()
    assert "stack deleted" in markdown and "⚠️ **DELETES** `gcp:container/nodePool:NodePool` **gpu-pool**" in markdown
    assert "| GPUs | 256 | 0 | -256 |" in markdown


def test_forcenew_paths_follow_the_provider_schema() -> None:
    old = gpu_pool("a3-ultragpu-8g", "nvidia-h200-141gb", 4)
    cases = {
        "nodeConfig.reservationAffinity.values[0]": ("new-reservation", REPLACE),
        "placementPolicy.policyName": ("a4x-policy", REPLACE),
        "placementPolicy.type": ("ANY", UPDATE),  # not ForceNew: the block's ForceNew covers adding or removing it
        "nodeLocations[0]": ("us-central1-c", RECREATE_NODES),
        "nodeConfig.resourceLabels.team": ("ml", UPDATE),
        "nodeCount": (8, UPDATE),
    }
    for path, (value, effect) in cases.items():
        new = copy.deepcopy(old)
        _set(new["inputs"], path, value)
        [change] = resource_changes(old, new)
        assert (change.path, change.effect) == (path, effect), path


def test_a_list_or_element_added_under_a_forcenew_field_is_a_replacement() -> None:
    old = gpu_pool("a3-ultragpu-8g", "nvidia-h200-141gb", 4)
    new = copy.deepcopy(old)
    new["inputs"]["networkConfig"] = {"additionalNodeNetworkConfigs": [{"network": "gvnic-1", "subnetwork": "gvnic-1-sub"}]}
    [change] = resource_changes(old, new)
    assert (change.path, change.old, change.effect) == ("networkConfig.additionalNodeNetworkConfigs", ABSENT, REPLACE)
    more = copy.deepcopy(new)
    more["inputs"]["networkConfig"]["additionalNodeNetworkConfigs"].append({"network": "rdma-0", "subnetwork": "rdma-0-sub"})
    [change] = resource_changes(new, more)
    assert (change.path, change.old, change.effect) == ("networkConfig.additionalNodeNetworkConfigs[1]", ABSENT, REPLACE)


def test_replace_on_changes_option_provider_and_kubernetes_names_force_replacement() -> None:
    old = resource("kubernetes:core/v1:ServiceAccount", "sa", {"metadata": {"name": "a", "labels": {"k": "v"}}}, provider="urn:p::one")
    renamed = copy.deepcopy(old)
    renamed["inputs"]["metadata"]["name"] = "b"
    assert [c.effect for c in resource_changes(old, renamed)] == [REPLACE]
    labels = copy.deepcopy(old)
    labels["inputs"]["metadata"]["labels"]["k"] = "w"
    assert [c.effect for c in resource_changes(old, labels)] == [UPDATE]
    labels["options"] = {"replaceOnChanges": ["metadata.labels.*"]}
    changes = {c.path: (c.kind, c.effect) for c in resource_changes(old, labels)}
    assert changes == {"metadata.labels.k": ("input", REPLACE), "replaceOnChanges": ("option", UPDATE)}
    moved = copy.deepcopy(old)
    moved["provider"] = "urn:p::two"
    [change] = resource_changes(old, moved)
    assert (change.kind, change.effect, change.old, change.new) == ("provider", REPLACE, "urn:p::one", "urn:p::two")


def test_types_matter_and_keys_with_dots_are_quoted() -> None:
    old = resource("kubernetes:core/v1:Pod", "p", {"metadata": {"name": "p", "annotations": {"networking.gke.io/interfaces": "[]"}}, "spec": {"x": 1}})
    new = copy.deepcopy(old)
    new["inputs"]["spec"]["x"] = True
    new["inputs"]["metadata"]["annotations"]["networking.gke.io/interfaces"] = "[1]"
    paths = [c.path for c in resource_changes(old, new)]
    assert paths == ['metadata.annotations["networking.gke.io/interfaces"]', "spec.x"]


def test_json_format_lists_every_change_with_effects() -> None:
    report = DiffReport("origin/main", (diff_plans(STACK, base_plan(), head_plan()), failed("broken", "head", "the working tree does not render: boom")))
    data = json.loads(report.to_json())
    ok, bad = data["stacks"]
    assert ok["totals"]["delta"] == {
        "gpuNodes": 4,
        "gpus": 32,
        "usdPerHourAtMax": ok["totals"]["delta"]["usdPerHourAtMax"],
        "usdPerHourAtMin": ok["totals"]["delta"]["usdPerHourAtMin"],
        "gpuMemoryGb": None,  # these hand-made plans carry no memory estimate
        "fits": None,
    }
    assert ok["totals"]["delta"]["usdPerHourAtMax"] > 0
    added = next(c for c in ok["added"])
    assert added["type"] == "gcp:compute/subnetwork:Subnetwork"
    pool = next(c for c in ok["changed"] if c["name"] == "gpu-pool")
    assert pool["effect"] == "replace"
    assert {"path": "nodeCount", "kind": "input", "effect": "update", "old": 32, "new": 36} in pool["changes"]
    assert bad == {"stack": "broken", "status": "error", "error": "the working tree does not render: boom", "errorIn": "head"}
    assert report.head_failed


def test_markdown_stays_within_a_github_comment() -> None:
    big = plan([resource("kubernetes:core/v1:ConfigMap", f"cm-{i:04d}", {"metadata": {"name": f"cm-{i}"}, "data": {"k": "v" * 50}}) for i in range(2000)])
    markdown = DiffReport("origin/main", (diff_plans(STACK, None, big),)).to_markdown(limit=20_000)
    assert len(markdown) <= 20_000 and markdown.rstrip().endswith("--format json`._")
    assert "<details><summary><b>Added</b>: 2000 resources</summary>" in markdown


def test_real_render_diff_of_a3ultra_405b() -> None:
    """The whole program, rendered twice: more nodes and another reservation on the GPU pool."""
    base = render(STACK, raw_config(STACK)).to_dict()
    head = render(
        STACK,
        raw_config(STACK, trainstack_gpuPool={"nodeCount": 56, "reservation": {"affinity": "specific", "name": "other-reservation"}}),
    ).to_dict()
    diff = diff_plans(STACK, base, head)
    assert not diff.added and not diff.removed
    pools = [c for c in diff.changed if c.resource.type == NODE_POOL]
    assert len(pools) == 1
    changes = {c.path: c for c in pools[0].changes}
    assert (changes["nodeCount"].old, changes["nodeCount"].new, changes["nodeCount"].effect) == (54, 56, UPDATE)
    assert any(p.startswith("nodeConfig.reservationAffinity") and c.effect == REPLACE for p, c in changes.items())
    assert (present(diff.base).gpus, present(diff.head).gpus) == (432, 448)
    assert present(diff.head).usd_at_max > present(diff.base).usd_at_max
    assert "⚠️ **REPLACES**" in DiffReport("origin/main", (diff,)).to_markdown()


def _set(tree: dict[str, Any], path: str, value: Any) -> None:
    """Set (or with ABSENT, delete) a dotted path with [i] indices in a nested dict."""
    steps = [int(s[1:-1]) if s.startswith("[") else s for s in re.findall(r"\[\d+\]|[^.\[\]]+", path)]
    node: Any = tree
    for step in steps[:-1]:
        node = node[step]
    if value is ABSENT:
        del node[steps[-1]]
    else:
        node[steps[-1]] = value


def test_a_change_that_makes_the_job_stop_fitting_is_flagged() -> None:
    """The real a3mega stack, then the same with the distributed optimizer off: the estimate
    crosses the GPU's memory and the diff says so."""
    raw = raw_config("a3mega-gpt3-175b")
    base = render("a3mega-gpt3-175b", raw).to_dict()
    worse = {**raw, "trainstack:workload": {**raw["trainstack:workload"], "zeroStage": 0, "memoryCheck": "warn"}}
    head = render("a3mega-gpt3-175b", worse).to_dict()
    diff = diff_plans("a3mega-gpt3-175b", base, head)
    assert diff.base is not None and diff.base.fits is True and diff.head is not None and diff.head.fits is False
    assert "**NO LONGER FITS**" in DiffReport("origin/main", (diff,)).to_markdown()
    assert "NO LONGER FITS" not in DiffReport("origin/main", (diff_plans("a3mega-gpt3-175b", base, base),)).to_markdown()


def test_a_child_renamed_with_an_alias_is_the_same_resource() -> None:
    """As the engine matches by alias: an upgrade that renames a child (with its old name as an
    alias) changes nothing live, never a removal and an addition; its Kubernetes objects keep
    their provider when the provider was renamed the same way."""
    provider_old = resource("pulumi:providers:kubernetes", "gke", {}, CLUSTER_COMPONENT)
    provider_new = resource("pulumi:providers:kubernetes", "cluster-gke", {}, CLUSTER_COMPONENT, options={"aliases": [provider_old["urn"]]})
    queue_inputs = {"metadata": {"name": "q"}, "spec": {}}
    queue_old = resource("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "local-queue", queue_inputs, provider=provider_old["urn"])
    queue_new = resource(
        "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
        "kueue-local-queue",
        queue_inputs,
        provider=provider_new["urn"],
        options={"aliases": [queue_old["urn"]]},
    )
    report = diff_plans(STACK, plan([provider_old, queue_old]), plan([provider_new, queue_new]))
    assert not report.added and not report.removed
    assert not report.changed
    unaliased = dict(queue_new, options={})
    report = diff_plans(STACK, plan([provider_old, queue_old]), plan([provider_new, unaliased]))
    assert [r.name for r in report.added] == ["kueue-local-queue"] and [r.name for r in report.removed] == ["local-queue"]


def test_pool_changes_show_per_pool_with_capacity_and_cost() -> None:
    """Dropping the spot pool of a three-pool platform and growing the reserved one: a row per
    pool, the removed one shown as none on the working tree's side."""
    stack = "a3mega-capacity-platform"
    raw = raw_stack_config(stack)
    head_raw = copy.deepcopy(raw)
    pools = head_raw["trainstack:gpuPools"]
    pools[0]["nodeCount"] = 36
    del pools[2]
    diff = diff_plans(stack, render(stack, raw).to_dict(), render(stack, head_raw).to_dict())
    markdown = DiffReport("origin/main", (diff,)).to_markdown()
    mega = catalog.machine("a3-megagpu-8g")
    hourly, spot = present(mega.hourly_usd), present(mega.spot_hourly_usd)
    assert (
        f"| pool `a3-mega-reserved` | 32 x a3-megagpu-8g, reservation, ${32 * hourly:,.2f} | 36 x a3-megagpu-8g, reservation, ${36 * hourly:,.2f} | +4 nodes, +${4 * hourly:,.2f} |"
        in markdown
    )
    assert f"| pool `a3-mega-spot` | 32 x a3-megagpu-8g, spot, ${32 * spot:,.2f} | none | -32 nodes, -${32 * spot:,.2f} |" in markdown
    assert set(present(diff.base).to_dict()["pools"]) == {"a3-mega-reserved", "a3-mega-queued", "a3-mega-spot"}
    single = diff_plans(STACK, base_plan(), head_plan())
    assert "| pool `" not in DiffReport("origin/main", (single,)).to_markdown()
