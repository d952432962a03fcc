"""What the pinned providers and the Pulumi engine do with a change: the rules `trainstack diff` applies.

Generated facts come from `replacement_data` (the providers' ForceNew fields, with its generator and
sources); the rules the schema does not show are ported here, each with its source:

- terraform-plugin-sdk `helper/schema/schema.go` `schemaMap.diffList`/`diffMap`: a field's ForceNew
  applies to every change of a value, a map or a list of values; on a list of blocks to the count only.
- TPG-beta `services/container/resource_container_cluster.go` `containerClusterEnableK8sBetaApisCustomizeDiff`:
  removing an enabled beta API forces a new cluster.
- TPG-beta `services/compute/resource_compute_disk.go`: `customdiff.ForceNewIfChange("size", IsDiskShrinkage)`.
- GKE, https://cloud.google.com/kubernetes-engine/docs/how-to/data-container-image-preloading,
  Requirements: a changed disk image needs a new node pool; GKE does not update the disk image of
  existing nodes (the provider's ForceNew on `secondary_boot_disks` says the same, without the reason).
- Managed Lustre, https://cloud.google.com/managed-lustre/docs/increase-capacity: "Capacity cannot be
  decreased" (the provider updates `capacity_gib` in place; the service refuses a decrease).
- kubernetes `plugin/pkg/admission/storage/persistentvolume/resize/admission.go`: only a dynamically
  provisioned claim (with a StorageClass) can be resized; a static claim's storage request is refused.
- pulumi-kubernetes `provider/pkg/provider/provider.go` `DiffConfig`: a provider whose `kubeconfig`,
  `context` or `cluster` is unknown or whose active cluster changes, or whose `clusterIdentifier`
  changes, is replaced; `Diff`: a named object replaced under the same name and namespace is deleted first.
- pulumi-terraform-bridge `pkg/tfbridge/schema.go` `nameRequiresDeleteBeforeReplace` with pulumi-gcp's
  `SetAutonaming(255, "-")`: a replaced resource whose autonamed field the program set is deleted first.
- pulumi/pulumi `pkg/resource/deploy/step_generator.go`: `ignoreChanges` drops a change, `replaceOnChanges`
  forces one; a replacement whose dependents take a replaced resource's output through a
  replacement-forcing input replaces them too (`calculateDependentReplacements`), as does a replaced
  provider for its resources; replacing a protected resource is refused (unless the same update
  turns protect off); `step.go`: `retainOnDelete` skips the provider's delete.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from trainstack.app.review.replacement_data import GCP, KUBERNETES

UPDATE, REPLACE, RECREATE_NODES, IGNORED, FAILS = "update", "replace", "recreate-nodes", "ignored", "fails"

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
BUCKET = "gcp:storage/bucket:Bucket"
DISK = "gcp:compute/disk:Disk"
LUSTRE = "gcp:lustre/instance:Instance"
FILESTORE = "gcp:filestore/instance:Instance"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
K8S_PROVIDER = "pulumi:providers:kubernetes"

# Resources that hold a job's bytes (a PersistentVolume only while bound: it points at one of them).
DATA_STORES = {BUCKET: "bucket", FILESTORE: "Filestore instance", LUSTRE: "Lustre instance", DISK: "disk", PV: "bound PersistentVolume"}

# pulumi-kubernetes DiffConfig (see the module docstring): the provider inputs whose change replaces it.
_PROVIDER_REPLACES = ("kubeconfig", "context", "cluster", "clusterIdentifier")

# Node pool properties the provider updates in place, but which GKE applies by recreating every
# node (a surge or blue-green rollout of the whole pool): the resource stays, its nodes do not.
# Sources: the provider's in-place node pool update (node_config.go, nodePoolNodeConfigUpdate)
# and GKE's "Manage cluster lifecycle changes to minimize disruption" (changes that recreate
# nodes), https://cloud.google.com/kubernetes-engine/docs/concepts/managing-clusters
RECREATES_NODES: dict[str, tuple[str, ...]] = {
    NODE_POOL: (
        "nodeConfig.bootDisk",
        "nodeConfig.confidentialNodes",
        "nodeConfig.diskSizeGb",
        "nodeConfig.diskType",
        "nodeConfig.fastSocket",
        "nodeConfig.gcfsConfig",
        "nodeConfig.gvnic",
        "nodeConfig.imageType",
        "nodeConfig.kubeletConfig",
        "nodeConfig.linuxNodeConfig",
        "nodeConfig.machineType",
        "nodeConfig.workloadMetadataConfig",
        "networkConfig.networkPerformanceConfig",
        "nodeLocations",
    ),
}


class _Absent:
    """A property one side does not set (distinct from null)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Effect:
    """What one property change does, and why (empty: the providers' ForceNew table or an update)."""

    kind: str
    reason: str = ""


# ---------------------------------------------------------------------------------------------
# Paths


def segments(path: str) -> list[str]:
    """`a.b[0]["c.d"]` -> ['a', 'b', 'c.d']: list indices (and `[*]`) dropped, quoted keys kept whole."""
    return [m.group(1) or m.group(2) for m in re.finditer(r'\["((?:[^"\\]|\\.)*)"\]|([^.\[\]]+)', re.sub(r"\[(?:\d+|\*)\]", "", path))]


def covered(path: str, patterns: list[str] | tuple[str, ...]) -> bool:
    """Whether a change at `path` touches a property a pattern names: the property itself,
    something under it, or a whole block containing it. `*` matches any one segment."""
    parts = segments(path)
    for pattern in patterns:
        if pattern == "*":
            return True
        wanted = segments(pattern)
        shared = min(len(parts), len(wanted))
        if all(w in ("*", p) for w, p in zip(wanted[:shared], parts[:shared], strict=True)):
            return True
    return False


def _under(path: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Whether `path` is a pattern or lies under one (not: a block containing it)."""
    parts = segments(path)
    return any(parts[: len(segments(p))] == segments(p) for p in patterns)


# ---------------------------------------------------------------------------------------------
# One property


def force_new_paths(resource: dict[str, Any]) -> list[str]:
    """The paths whose change replaces `resource` (values, not blocks), with its replaceOnChanges."""
    rtype = resource["type"]
    paths = [*GCP.get(rtype, {}).get("forceNew", ()), *(resource.get("options") or {}).get("replaceOnChanges", [])]
    if rtype.startswith("kubernetes:") and resource.get("custom"):
        paths += [*KUBERNETES["*"], *KUBERNETES.get(rtype, ())]
    if rtype == K8S_PROVIDER:
        paths += _PROVIDER_REPLACES
    return paths


def property_effect(old_resource: dict[str, Any], new_resource: dict[str, Any], path: str, old: Any, new: Any) -> Effect:
    """The effect of one changed input of a resource on both sides."""
    rtype = new_resource["type"]
    options = new_resource.get("options") or {}
    if _under(path, options.get("ignoreChanges", [])):
        return Effect(IGNORED, "ignoreChanges: the engine keeps the live value")
    custom = _customised(rtype, old_resource, new_resource, path, old, new)
    if custom:
        return custom
    if covered(path, force_new_paths(new_resource)):
        return Effect(REPLACE)
    for block in GCP.get(rtype, {}).get("forceNewBlocks", ()):
        if _block_count_changes(old_resource, new_resource, path, block):
            return Effect(REPLACE, f"`{block}` is ForceNew: adding or removing one replaces")
    if covered(path, RECREATES_NODES.get(rtype, ())):
        return Effect(RECREATE_NODES)
    return Effect(UPDATE)


_TOKEN = re.compile(r'\["(?:[^"\\]|\\.)*"\]|\[\d+\]|[^.\[\]]+')


def _block_count_changes(old_resource: dict[str, Any], new_resource: dict[str, Any], path: str, block: str) -> bool:
    """Whether a change at `path`, under ForceNew block `block`, adds or removes an instance of that block."""
    want = segments(block)
    if segments(path)[: len(want)] != want:
        return False
    tokens, named, prefix = _TOKEN.findall(path), 0, []
    for token in tokens:
        if not token.startswith("[") or token.startswith('["'):
            if named == len(want):
                break
            named += 1
        prefix.append(token)
    while prefix and prefix[-1].startswith("[") and not prefix[-1].startswith('["'):
        prefix.pop()  # the list itself, not one element
    return _count(_at(old_resource.get("inputs") or {}, prefix)) != _count(_at(new_resource.get("inputs") or {}, prefix))


def _at(value: Any, tokens: list[str]) -> Any:
    for token in tokens:
        if token.startswith('["'):
            token = token[2:-2]
        elif token.startswith("["):
            index = int(token[1:-1])
            value = value[index] if isinstance(value, list) and index < len(value) else None
            continue
        value = value.get(token) if isinstance(value, dict) else None
    return value


def _count(value: Any) -> int:
    if value is None:
        return 0
    return len(value) if isinstance(value, list) else 1


def _customised(rtype: str, old_resource: dict[str, Any], new_resource: dict[str, Any], path: str, old: Any, new: Any) -> Effect | None:
    """The diff customisations the schema does not show (sources in the module docstring)."""
    if rtype == CLUSTER and segments(path)[:2] == ["enableK8sBetaApis", "enabledApis"]:
        before = set(_get(old_resource["inputs"], "enableK8sBetaApis.enabledApis") or [])
        after = set(_get(new_resource["inputs"], "enableK8sBetaApis.enabledApis") or [])
        if before - after:
            return Effect(
                REPLACE,
                f"removing enabled beta APIs ({', '.join(sorted(before - after))}) forces a new cluster (containerClusterEnableK8sBetaApisCustomizeDiff)",
            )
    disk_image = rtype == NODE_POOL and segments(path)[:2] == ["nodeConfig", "secondaryBootDisks"] and segments(path)[-1] == "diskImage"
    if disk_image and covered(path, force_new_paths(new_resource)):
        return Effect(
            REPLACE, "a new disk image needs a new node pool: GKE does not update the disk image of existing nodes (GKE: data-container-image-preloading)"
        )
    if rtype == DISK and path == "size" and _decreases(old, new):
        return Effect(REPLACE, "a disk shrink forces a new disk (ForceNewIfChange size IsDiskShrinkage)")
    if rtype == LUSTRE and path == "capacityGib" and _decreases(old, new):  # a string in the SDK (an int64)
        return Effect(FAILS, "Managed Lustre capacity cannot be decreased: the service refuses the update")
    if rtype == PVC and segments(path) == ["spec", "resources", "requests", "storage"] and _get(new_resource["inputs"], "spec.storageClassName") == "":
        return Effect(FAILS, "a static claim (no StorageClass) cannot be resized: Kubernetes refuses the patch")
    return None


def _decreases(old: Any, new: Any) -> bool:
    """Whether a number (or a number as a string) goes down."""
    try:
        return float(new) < float(old)
    except (TypeError, ValueError):
        return False


def _get(value: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


# ---------------------------------------------------------------------------------------------
# The resource as a whole


def delete_before_replace(resource: dict[str, Any]) -> bool:
    """Whether the engine deletes the old resource before creating its replacement."""
    rtype, inputs = resource["type"], resource.get("inputs") or {}
    if (resource.get("options") or {}).get("deleteBeforeReplace"):
        return True
    rules = GCP.get(rtype)
    if rules:
        return rules["deleteBeforeReplace"] or any(inputs.get(f) not in (None, "") for f in rules["autonamed"])
    if rtype.startswith("kubernetes:"):
        meta = inputs.get("metadata") or {}
        return bool(meta.get("name"))  # named, not generateName: the same name cannot exist twice
    return False


_SCOPE = ("project", "location", "zone", "region")


def identity(resource: dict[str, Any]) -> tuple[Any, ...] | None:
    """The values that name a GCP resource in its service (its name or id and where it lives), or
    None where the bridge autonames nothing and the provider records no id field."""
    rules = GCP.get(resource["type"])
    if not rules:
        return None
    inputs = resource.get("inputs") or {}
    fields = [*rules["autonamed"], *rules["identity"]]
    if not fields:
        return None
    return tuple(inputs.get(f) for f in [*fields, *_SCOPE])


def replacement_collides(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether a replacement creates a resource under a name that still exists: created before the
    old one is deleted, or after a delete that `retainOnDelete` skips (step.go), with the same identity."""
    ident = identity(new)
    if ident is None or ident != identity(old):
        return False
    return not delete_before_replace(new) or bool((old.get("options") or {}).get("retainOnDelete"))


def data_store(resource: dict[str, Any], plan_resources: list[dict[str, Any]]) -> str | None:
    """What a person calls `resource` if it holds a job's data (a PV only while a claim binds it)."""
    kind = DATA_STORES.get(resource["type"])
    if kind is None or resource["type"] != PV:
        return kind
    spec = (resource.get("inputs") or {}).get("spec") or {}
    name = ((resource.get("inputs") or {}).get("metadata") or {}).get("name")
    claimed = any(((r.get("inputs") or {}).get("spec") or {}).get("volumeName") == name for r in plan_resources if r["type"] == PVC)
    return kind if spec.get("claimRef") or claimed else None


def pool_nodes(resource: dict[str, Any]) -> int | None:
    """A node pool's fixed size, or its autoscaling maximum."""
    inputs = resource.get("inputs") or {}
    auto = inputs.get("autoscaling") or {}
    for key in ("totalMaxNodeCount", "maxNodeCount"):
        if isinstance(auto.get(key), int):
            return int(auto[key])
    count = inputs.get("nodeCount")
    return int(count) if isinstance(count, int) else None
