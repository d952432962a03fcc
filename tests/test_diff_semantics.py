"""What `trainstack diff` predicts against what the pinned providers and the engine do.

The replacement table (app/review/replacement_data.py) is generated from the providers' source by
app/review/replacement_gen.py; these tests check it against the installed SDKs and the shipped plans,
drive every ForceNew property through the diff, and rerun the day-2 audit's experiments
(reference/audits/day2.md, rows cited) on the real stacks.
"""

from __future__ import annotations

import copy
import functools
import importlib
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import named, raw_config
from trainstack.app.deploy.stack_file import PLATFORM_NAME
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.ops.cli import diff_command
from trainstack.app.plan.plan import render
from trainstack.app.review import baseline, semantics
from trainstack.app.review.diff import DATA, DELETES, FAILS_CLASS, JOB, REPLACES, SAFETY, DiffReport, StackDiff, diff_plans, resource_changes
from trainstack.app.review.replacement_data import GCP, KUBERNETES, PLAN_TYPES, SOURCES
from trainstack.app.review.semantics import FAILS, IGNORED, REPLACE, UPDATE

GOLDEN = Path(__file__).resolve().parent / "golden"

# Custom types with no replacement table, and why: a Command's input change runs its update (or create)
# command again in place (https://www.pulumi.com/registry/packages/command/api-docs/local/command/);
# a StackReference is read, never created or replaced; a Helm release upgrades in place.
NOT_IN_TABLE = {"command:local:Command", "pulumi:pulumi:StackReference", "kubernetes:helm.sh/v3:Release"}


def shipped_types() -> set[str]:
    """Every custom resource type of the shipped plans (the golden plans are `trainstack plan --all`)."""
    types: set[str] = set()
    for path in GOLDEN.glob("*.json"):
        types |= {r["type"] for r in json.loads(path.read_text())["resources"] if r["custom"]}
    return types


# ---------------------------------------------------------------------------------------------
# The table


def test_the_table_covers_every_resource_type_of_the_shipped_plans() -> None:
    types = shipped_types()
    assert types <= set(PLAN_TYPES), f"regenerate app/review/replacement_data.py: new types {sorted(types - set(PLAN_TYPES))}"
    for rtype in types - NOT_IN_TABLE:
        if rtype.startswith("gcp:"):
            assert GCP[rtype]["forceNew"], rtype  # every GCP resource has at least its project or name
        else:
            assert semantics.force_new_paths({"type": rtype, "custom": True, "options": {}}), rtype


def test_the_table_was_generated_for_the_installed_providers() -> None:
    """A bump of pulumi_gcp or pulumi_kubernetes fails here until the table is regenerated from the
    provider sources that version bridges."""
    assert SOURCES["pulumi-gcp"]["installed"] == version("pulumi_gcp")
    assert SOURCES["pulumi-kubernetes"]["installed"] == version("pulumi_kubernetes")
    for source in SOURCES.values():
        assert len(source["commit"]) == 40


def _sdk_names(cls: type) -> set[str]:
    return {v.fget._pulumi_name for v in vars(cls).values() if isinstance(v, property) and v.fget is not None and hasattr(v.fget, "_pulumi_name")}


@pytest.mark.parametrize("rtype", sorted(GCP))
def test_every_forcenew_path_names_an_input_of_the_installed_sdk(rtype: str) -> None:
    module, name = rtype.split(":")[1:]
    inputs = _sdk_names(getattr(importlib.import_module(f"pulumi_gcp.{module.split('/')[0]}"), f"{name}Args"))
    for path in (*GCP[rtype]["forceNew"], *GCP[rtype]["forceNewBlocks"]):
        assert path.split(".")[0] in inputs, (rtype, path)


def _with(path: str, value: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    node = out
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return out


def _resource(rtype: str, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"urn": f"urn:pulumi:s::p::{rtype}::r", "type": rtype, "name": "r", "custom": True, "provider": None, "inputs": inputs, "options": {}}


@pytest.mark.parametrize("rtype", sorted(GCP) + sorted(t for t in KUBERNETES if t != "*"))
def test_a_change_of_each_forcenew_property_is_a_replacement(rtype: str) -> None:
    paths = GCP[rtype]["forceNew"] if rtype in GCP else [p.replace("[*]", "") for p in KUBERNETES[rtype]]
    for path in paths:
        old, new = _resource(rtype, _with(path, "before")), _resource(rtype, _with(path, "after"))
        effects = {c.effect for c in resource_changes(old, new)}
        assert REPLACE in effects or FAILS in effects, (rtype, path)


@pytest.mark.parametrize("rtype", sorted(t for t in GCP if GCP[t]["forceNewBlocks"]))
def test_adding_a_forcenew_block_is_a_replacement_and_a_change_inside_follows_its_fields(rtype: str) -> None:
    for block in GCP[rtype]["forceNewBlocks"]:
        old, new = _resource(rtype, {}), _resource(rtype, _with(block, {"x": 1}))
        assert REPLACE in {c.effect for c in resource_changes(old, new)}, (rtype, block)
        inside = _resource(rtype, _with(block, {"x": 2}))  # `x` is no field of the block: not ForceNew
        assert {c.effect for c in resource_changes(new, inside)} == {UPDATE}, (rtype, block)


def test_a_field_that_is_not_forcenew_updates_in_place() -> None:
    """Facts the audit cites from the provider source: each updatable in place."""
    for rtype, path in [
        ("gcp:lustre/instance:Instance", "capacityGib"),  # TPG-LU:145 (a decrease is refused by the service: below)
        ("gcp:filestore/instance:Instance", "fileShares.capacityGb"),  # TPG-FS:1083
        ("gcp:container/cluster:Cluster", "releaseChannel.channel"),  # TPG-CL:2374
        ("gcp:container/nodePool:NodePool", "nodeCount"),
    ]:
        assert not any(p == path or p.startswith(path + ".") for p in GCP[rtype]["forceNew"]), (rtype, path)
        old, new = _resource(rtype, _with(path, 2)), _resource(rtype, _with(path, 3))
        assert [c.effect for c in resource_changes(old, new)] == [UPDATE], (rtype, path)


# ---------------------------------------------------------------------------------------------
# The audit's experiments on the real stacks


@functools.cache
def _base(stack: str) -> str:
    return json.dumps(render(stack, raw_stack_config(stack)).to_dict())


def diff_of(stack: str, base_changes: dict[str, Any] | None = None, **changes: Any) -> StackDiff:
    """The diff of `stack` from its file (or the file with `base_changes`) to the file with `changes`."""
    base = render(stack, raw_config(stack, **base_changes)).to_dict() if base_changes else json.loads(_base(stack))
    head = render(stack, raw_config(stack, **{**(base_changes or {}), **changes})).to_dict()
    return diff_plans(stack, base, head)


def classes(diff: StackDiff) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in diff.findings:
        out.setdefault(f.cls, []).append(f"{f.resource}: {f.text}")
    return out


def change_of(diff: StackDiff, rtype: str, name: str | None = None) -> Any:
    return next(c for c in diff.changed if c.resource.type == rtype and (name is None or named(c.resource.name, name)))


def test_bucket_rename_is_data_and_fails_the_data_gate() -> None:
    """Row 49, A2: `name` ForceNew; the bucket is retained and forgotten, a new empty one made."""
    diff = diff_of("a3ultra-405b", trainstack_storage={"bucket": {"name": "a3ultra-405b-ckpt-2"}})
    assert change_of(diff, semantics.BUCKET).effect == REPLACE
    [data, *pv] = classes(diff)[DATA]
    assert "bucket" in data and "outside the stack and still billed" in data and "empty store" in data
    assert any("PersistentVolume" in p for p in pv)
    assert DiffReport("main", (diff,)).crosses("data")
    markdown = DiffReport("main", (diff,)).to_markdown()
    assert markdown.index("🛑 **DATA**") < markdown.index("| | base |")  # above everything else


def test_a_pool_resize_passes_the_data_gate_but_not_a_shrink_under_the_job() -> None:
    """Rows 1 and 3, B7."""
    grow = diff_of("a3ultra-405b", trainstack_gpuPool={"nodeCount": 60})
    assert not grow.findings and not DiffReport("main", (grow,)).crosses("data") and not DiffReport("main", (grow,)).crosses("replace")
    shrink = diff_of("a3ultra-405b", trainstack_gpuPool={"nodeCount": 40}, trainstack_workload={"nodes": 36})
    [pool] = [f for f in classes(shrink)[JOB] if "gpu-pool" in f]
    assert "54 to 40" in pool


def test_reordering_pools_reorders_the_flavors_and_replaces_or_deletes_no_pool() -> None:
    """Row 23 (A4): the README's way to set the flavor order. Pools are known by name, so the swap
    touches the ClusterQueue's flavor order and no pool."""
    first, second, *rest = raw_stack_config("a3mega-capacity-platform")["trainstack:gpuPools"]
    diff = diff_of("a3mega-capacity-platform", trainstack_gpuPools=[second, first, *rest])
    assert not diff.added and not diff.removed and not diff.findings
    assert {c.resource.type for c in diff.changed} == {"kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"}
    assert all(c.effect == UPDATE for c in diff.changed)
    assert not DiffReport("main", (diff,)).crosses("replace")


def test_zone_change_under_lustre_replaces_the_store_and_the_rdma_network() -> None:
    """Rows 29 and 31, A3/B3: Lustre `location` and the RDMA VPC's `networkProfile` are ForceNew."""
    diff = diff_of("a4-llama3-70b", gcp_zone="us-central1-ai1a")
    assert change_of(diff, semantics.LUSTRE).effect == REPLACE
    assert any("Lustre instance" in f for f in classes(diff)[DATA])
    network = next(c for c in diff.changed if c.resource.type == "gcp:compute/network:Network" and any(p.path == "networkProfile" for p in c.changes))
    assert network.effect == REPLACE
    assert change_of(diff, semantics.NODE_POOL, "gpu-pool-a4").effect == REPLACE  # its NIC networks are replaced under it


def test_zone_change_under_a_zonal_filestore_and_under_the_nfs_disk() -> None:
    """Rows 33 and 84."""
    filestore = {"kind": "filestore", "mountPath": "/nfs", "filestore": {"tier": "ZONAL", "capacityGib": 1024}, "bucket": None}
    diff = diff_of("a3ultra-405b", base_changes={"trainstack_storage": filestore}, gcp_zone="us-central1-c")
    assert any("Filestore instance" in f for f in classes(diff)[DATA]), classes(diff)
    nfs = diff_of("a2-gpt2-deepspeed", gcp_zone="us-central1-c")
    assert any("`gcp:compute/disk:Disk`" in f and "still billed" in f for f in classes(nfs)[DATA]), classes(nfs)


def test_lustre_throughput_and_shrink_fail_at_apply() -> None:
    """Rows 47, 48 (B1, B2): a same-id create-before-delete collides; capacity cannot decrease."""
    throughput = diff_of("a4-llama3-70b", trainstack_storage={"lustre": {"throughput": 1000}})
    assert change_of(throughput, semantics.LUSTRE).effect == FAILS
    assert any("ALREADY_EXISTS" in f for f in classes(throughput)[FAILS_CLASS])
    assert DATA not in classes(throughput)  # the old instance is never deleted
    shrink = diff_of("a4-llama3-70b", trainstack_storage={"lustre": {"capacityGib": 18000}})
    assert any("cannot be decreased" in f for f in classes(shrink)[FAILS_CLASS])


def test_nfs_disk_shrink_is_a_replacement_that_collides() -> None:
    """Row 85: ForceNewIfChange(size, IsDiskShrinkage) on a retained disk of the same name."""
    diff = diff_of("a2-gpt2-deepspeed", trainstack_storage={"nfs": {"diskSizeGb": 500}})
    disk = change_of(diff, semantics.DISK)
    assert {c.effect for c in disk.changes} >= {REPLACE, FAILS}
    assert any("retainOnDelete" in f for f in classes(diff)[FAILS_CLASS])


def test_the_markdown_counts_replacements_apart_and_a_name_clash_is_no_property_line() -> None:
    """The header says what is replaced, not only "changed"; a replacement that collides with the
    live resource's name fails for a reason of no one property: it reads as that, not as a
    `(identity)` property going from nothing to nothing."""
    diff = diff_of("a2-gpt2-deepspeed", trainstack_storage={"nfs": {"diskSizeGb": 500}})
    markdown = DiffReport("main", (diff,)).to_markdown()
    replaced = [c for c in diff.effective if c.replaces]
    assert replaced and f"{len(diff.effective) - len(replaced)} to change in place, {len(replaced)} to replace" in markdown
    assert "`(identity)`" not in markdown and "  - the apply fails: " in markdown


def test_filestore_resize_fails_at_the_static_claim() -> None:
    """Row 44 (B1): the instance grows in place with its volume; the static claim, which Kubernetes
    would refuse to resize, ignores its request (components/storage/volume.py), so nothing fails."""
    diff = diff_of("a3high-nemo-gpt5b", trainstack_storage={"filestore": {"capacityGib": 2048}})
    assert change_of(diff, "gcp:filestore/instance:Instance").effect == UPDATE
    assert change_of(diff, semantics.PV).effect == UPDATE
    assert change_of(diff, semantics.PVC).effect == IGNORED
    assert FAILS_CLASS not in classes(diff) and not diff.findings


def test_a_static_claims_resize_fails_where_it_is_not_ignored() -> None:
    """The rule behind it (K8S-RESIZE): a static claim whose request changes is refused."""
    base = json.loads(_base("a3high-nemo-gpt5b"))
    head = render("a3high-nemo-gpt5b", raw_config("a3high-nemo-gpt5b", trainstack_storage={"filestore": {"capacityGib": 2048}})).to_dict()
    for r in head["resources"]:
        if r["type"] == semantics.PVC:
            r["options"].pop("ignoreChanges")
    diff = diff_plans("a3high-nemo-gpt5b", base, head)
    assert change_of(diff, semantics.PVC).effect == FAILS
    assert any("static claim" in f for f in classes(diff)[FAILS_CLASS])


@pytest.mark.parametrize(("disposable", "fate"), [(False, "still billed"), (True, "deleted")])
def test_storage_kind_switch_removes_the_bucket(disposable: bool, fate: str) -> None:
    """Rows 38 and 43 (A5, B8): retained and forgotten, or deleted with every object."""
    base = {"trainstack_storage": {"disposable": disposable}}
    diff = diff_of(
        "a3ultra-405b", base_changes=base, trainstack_storage={"kind": "filestore", "filestore": {"tier": "ZONAL", "capacityGib": 1024}, "bucket": None}
    )
    [bucket] = [f for f in classes(diff)[DATA] if "`gcp:storage/bucket:Bucket`" in f]
    assert "leaves the stack" in bucket and fate in bucket
    assert any("same Kubernetes object under a new URN" in f for f in classes(diff)[FAILS_CLASS])  # the shared PV and claim


def test_pool_removal_is_flagged() -> None:
    """Row 18."""
    pools = raw_stack_config("a3mega-capacity-platform")["trainstack:gpuPools"]
    diff = diff_of("a3mega-capacity-platform", trainstack_gpuPools=pools[:2])
    assert any("nodePool" in f and "deleted" in f for f in classes(diff)[DELETES])


def test_a4x_to_a4_replaces_the_protected_cluster_and_up_is_refused() -> None:
    """Row 86 (A6, C1): the beta APIs go, which forces a new cluster; the cluster is protected."""
    diff = diff_of(
        "a4x-llama3-70b", trainstack_gpuPool={"machineType": "a4-highgpu-8g", "nodeCount": 16, "networking": None}, trainstack_workload={"memoryCheck": "off"}
    )
    cluster = change_of(diff, semantics.CLUSTER)
    assert cluster.effect == REPLACE
    assert any("beta APIs" in c.reason for c in cluster.changes)
    [finding] = [f for f in classes(diff)[REPLACES] if "container/cluster:Cluster" in f]
    assert "`pulumi up` will be refused" in finding


def test_a_cluster_replacement_cascades_to_its_pools_provider_and_objects() -> None:
    """Row 81 (B5): the pools take `cluster` from it, the provider its kubeconfig; objects run on the provider."""
    diff = diff_of("a3high-nemo-gpt5b", trainstack_cluster={"masterIpv4Cidr": "172.16.8.0/28"})
    replaced = {c.resource.type for c in diff.changed if c.effect == REPLACE}
    assert {semantics.CLUSTER, semantics.NODE_POOL, semantics.K8S_PROVIDER, semantics.JOBSET} <= replaced
    assert any(f"resources on **{PLATFORM_NAME}-cluster**" in f for f in classes(diff)[REPLACES])
    assert sum(c.effect == REPLACE for c in diff.changed) > 20


def test_version_prefix_is_a_no_op_under_ignore_changes() -> None:
    """Rows 55-58 (B4): the cluster ignores minMasterVersion."""
    diff = diff_of("a4-llama3-70b", trainstack_cluster={"versionPrefix": "1.34."})
    cluster = change_of(diff, semantics.CLUSTER)
    assert {c.effect for c in cluster.changes} == {IGNORED}
    assert diff.status == "unchanged" and not diff.findings


def test_raising_an_autoscaled_minimum_is_not_a_replacement() -> None:
    """Row 82 (B4): the pool ignores initialNodeCount."""
    pools = copy.deepcopy(raw_stack_config("a3mega-capacity-platform")["trainstack:gpuPools"])
    pools[2]["autoscaling"]["minNodes"] = 2
    diff = diff_of("a3mega-capacity-platform", trainstack_gpuPools=pools)
    assert all(c.effect != REPLACE for c in diff.changed), [(c.resource.name, c.changes) for c in diff.changed]
    assert not DiffReport("main", (diff,)).crosses("replace")


def test_turning_protection_off_is_shown_with_the_destroy_line() -> None:
    """Rows 63 and 67 (C3)."""
    diff = diff_of("a3ultra-405b", trainstack_cluster={"deletionProtection": False})
    safety = classes(diff)[SAFETY]
    assert any("`protect` turned off" in f for f in safety)
    assert any("`pulumi destroy`" in f and "was: refused" in f for f in safety)
    disposable = diff_of("a3ultra-405b", trainstack_storage={"disposable": True})
    safety = classes(disposable)[SAFETY]
    assert any("`retainOnDelete` turned off" in f for f in safety) and any("`forceDestroy` turned on" in f for f in safety)


def test_steps_change_restarts_the_job_and_replaces_its_configmap() -> None:
    """Rows 68-70 (C2): the ConfigMap's data forces replacement (pulumi-kubernetes, not mutable by default)."""
    diff = diff_of("a4-llama3-70b", trainstack_workload={"steps": 130})
    assert any("stopped and started again" in f for f in classes(diff)[JOB])
    assert change_of(diff, "kubernetes:core/v1:ConfigMap").effect == REPLACE
    assert DiffReport("main", (diff,)).crosses("replace") and not DiffReport("main", (diff,)).crosses("data")


@pytest.mark.parametrize(
    ("changes", "fail_on", "code"),
    [
        ({"trainstack_storage": {"bucket": {"name": "a3ultra-405b-ckpt-2"}}}, "data", 4),
        ({"trainstack_gpuPool": {"nodeCount": 60}}, "data", 0),
        ({"trainstack_gpuPool": {"nodeCount": 60}}, "replace", 0),
        ({"trainstack_workload": {"steps": 600}}, "replace", 4),
        ({"trainstack_workload": {"steps": 600}}, None, 0),
    ],
)
def test_the_ci_gate_exit_code(changes: dict[str, Any], fail_on: str | None, code: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """`trainstack diff --fail-on`: 4 when the change crosses the gate (2 stays bad input), the report written either way."""
    report = DiffReport("origin/main", (diff_of("a3ultra-405b", **changes),))
    monkeypatch.setattr(baseline, "compare", lambda root, base_ref, stacks: report)
    result = CliRunner().invoke(diff_command, ["--base", "origin/main", *(["--fail-on", fail_on] if fail_on else [])])
    assert result.exit_code == code, result.output
    assert "## trainstack diff against `origin/main`" in result.output
