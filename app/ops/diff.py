"""The difference between two offline plans of a stack, as Markdown for a pull request and JSON.

A pure function of two plan dicts (plan.json's shape): resources are matched by URN; inputs
and resource options are compared property by property down to leaf paths such as
`nodeConfig.machineType` or `spec.replicatedJobs[0].replicas`. Each changed property carries
its effect on the live resource: an in-place `update`, a `replace` (the provider must delete
and create the resource again), or `recreate-nodes` (updated in place by GKE, but only by
recreating every node of the pool, which interrupts any job running on it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trainstack.core import catalog
from trainstack.app.reports.cost import estimate

UPDATE, REPLACE, RECREATE_NODES = "update", "replace", "recreate-nodes"

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"

# Properties of the node config (shared by a cluster's default pool and a node pool) that the
# provider marks ForceNew: a change deletes and recreates the whole resource.
# Source: hashicorp/terraform-provider-google (v7, the provider pulumi-gcp 10 bridges),
# google/services/container/node_config.go, schemaNodeConfig: fields with `ForceNew: true`.
_NODE_CONFIG_FORCE_NEW = tuple(
    f"nodeConfig.{field}"
    for field in (
        "advancedMachineFeatures",
        "bootDiskKmsKey",
        "confidentialNodes.confidentialInstanceType",
        "enableConfidentialStorage",
        "ephemeralStorageLocalSsdConfig",
        "flexStart",
        "guestAccelerators",
        "hostMaintenancePolicy",
        "localNvmeSsdBlockConfig",
        "localSsdCount",
        "localSsdEncryptionMode",
        "maxRunDuration",
        "metadata",
        "minCpuPlatform",
        "nodeGroup",
        "oauthScopes",
        "preemptible",
        "reservationAffinity",
        "sandboxConfig",
        "secondaryBootDisks",
        "serviceAccount",
        "shieldedInstanceConfig",
        "soleTenantConfig",
        "spot",
    )
)

# Replacement-forcing properties by resource type, as recorded input paths (camelCase). A path
# covers everything under it. Sources (terraform-provider-google v7, `ForceNew: true`):
# resource_container_cluster.go and resource_container_node_pool.go.
FORCE_NEW: dict[str, tuple[str, ...]] = {
    CLUSTER: (
        "clusterAutoscaling.autoProvisioningDefaults.bootDiskKmsKey",
        "clusterIpv4Cidr",
        "confidentialNodes",
        "datapathProvider",
        "dataplaneOptimizationMode",
        "defaultMaxPodsPerNode",
        "description",
        "enableAutopilot",
        "enableKubernetesAlpha",
        "enableTpu",
        "initialNodeCount",
        "ipAllocationPolicy.clusterIpv4CidrBlock",
        "ipAllocationPolicy.clusterSecondaryRangeName",
        "ipAllocationPolicy.podCidrOverprovisionConfig",
        "ipAllocationPolicy.servicesIpv4CidrBlock",
        "ipAllocationPolicy.servicesSecondaryRangeName",
        "location",
        "masterAuth.clientCertificateConfig",
        "name",
        "network",
        "networkingMode",
        "nodePools",
        "privateClusterConfig.masterIpv4CidrBlock",
        "privateClusterConfig.privateEndpointSubnetwork",
        "project",
        "subnetwork",
        "userManagedKeysConfig.aggregationCa",
        "userManagedKeysConfig.clusterCa",
        "userManagedKeysConfig.etcdApiCa",
        "userManagedKeysConfig.etcdPeerCa",
        *_NODE_CONFIG_FORCE_NEW,
    ),
    NODE_POOL: (
        "cluster",
        "initialNodeCount",
        "location",
        "maxPodsPerNode",
        "name",
        "namePrefix",
        "networkConfig.acceleratorNetworkProfile",
        "networkConfig.additionalNodeNetworkConfigs",
        "networkConfig.additionalPodNetworkConfigs",
        "networkConfig.createPodRange",
        "networkConfig.podCidrOverprovisionConfig",
        "networkConfig.podIpv4CidrBlock",
        "networkConfig.podRange",
        "networkConfig.subnetwork",
        "placementPolicy",
        "project",
        "queuedProvisioning",
        *_NODE_CONFIG_FORCE_NEW,
    ),
}

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

# pulumi-kubernetes replaces an object whose name or namespace changes.
_KUBERNETES_FORCE_NEW = ("metadata.name", "metadata.namespace")

MARKDOWN_LIMIT = 60_000  # GitHub rejects comments over 65,536 characters
_CHANGES_SHOWN = 25  # property changes listed per resource in Markdown
_LIST_OPEN = 10  # added/removed lists longer than this fold into <details>
_VALUE_WIDTH = 80


class _Absent:
    """A property one side does not set (distinct from null)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Any = _Absent()


# ---------------------------------------------------------------------------------------------
# The structured diff


@dataclass(frozen=True)
class PropertyChange:
    """One leaf property that differs: `old`/`new` are ABSENT where a side does not set it.

    `kind` is `input`, `option` (a resource option such as protect) or `provider`."""

    path: str
    old: Any
    new: Any
    effect: str = UPDATE
    kind: str = "input"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "kind": self.kind, "effect": self.effect}
        if self.old is not ABSENT:
            out["old"] = self.old
        if self.new is not ABSENT:
            out["new"] = self.new
        return out


@dataclass(frozen=True)
class ResourceRef:
    urn: str
    type: str
    name: str

    def to_dict(self) -> dict[str, Any]:
        return {"urn": self.urn, "type": self.type, "name": self.name}


@dataclass(frozen=True)
class ResourceChange:
    """A resource on both sides whose inputs, options or provider differ."""

    resource: ResourceRef
    changes: tuple[PropertyChange, ...]

    @property
    def effect(self) -> str:
        """The strongest effect of its changes: replace > recreate-nodes > update."""
        effects = {c.effect for c in self.changes}
        return next((e for e in (REPLACE, RECREATE_NODES) if e in effects), UPDATE)

    def to_dict(self) -> dict[str, Any]:
        return {**self.resource.to_dict(), "effect": self.effect, "changes": [c.to_dict() for c in self.changes]}


@dataclass(frozen=True)
class PoolTotal:
    """One GPU pool of a side: its machine, capacity, GPU nodes and USD per hour at full size."""

    name: str
    machine_type: str
    capacity: str
    gpu_nodes: int
    usd_at_max: float | None  # None: the machine is not priced

    def label(self) -> str:
        return f"{self.machine_type}, {self.capacity}"

    def to_dict(self) -> dict[str, Any]:
        return {"machineType": self.machine_type, "capacity": self.capacity, "gpuNodes": self.gpu_nodes, "usdPerHourAtMax": self.usd_at_max}


@dataclass(frozen=True)
class Totals:
    """What a side costs: GPU nodes and GPUs at full size, estimated USD per hour; and the job's
    estimated memory per GPU (GB) and whether it fits (None: no job, or a plan without it)."""

    gpu_nodes: int
    gpus: int
    usd_at_max: float
    usd_at_min: float
    memory_gb: float | None = None
    fits: bool | None = None
    pools: tuple[PoolTotal, ...] = ()

    @classmethod
    def of(cls, plan: dict[str, Any] | None) -> Totals:
        cost = estimate(plan["resources"] if plan else [])
        memory = ((plan or {}).get("summary") or {}).get("memory") or {}
        pools = tuple(
            PoolTotal(p.name, p.machine_type, p.capacity, p.max_nodes, None if p.hourly_usd is None else round(p.max_nodes * p.hourly_usd, 2))
            for p in cost.pools
            if p.gpus_per_node
        )
        return cls(cost.gpu_nodes, cost.gpus, cost.max_usd, cost.min_usd, memory.get("total"), memory.get("fits"), pools)

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpuNodes": self.gpu_nodes,
            "gpus": self.gpus,
            "usdPerHourAtMax": self.usd_at_max,
            "usdPerHourAtMin": self.usd_at_min,
            "gpuMemoryGb": self.memory_gb,
            "fits": self.fits,
            **({"pools": {p.name: p.to_dict() for p in self.pools}} if self.pools else {}),
        }


@dataclass(frozen=True)
class StackDiff:
    """One stack's difference. `base`/`head` are None where the stack does not exist on that side."""

    stack: str
    added: tuple[ResourceRef, ...] = ()
    removed: tuple[ResourceRef, ...] = ()
    changed: tuple[ResourceChange, ...] = ()
    base: Totals | None = None
    head: Totals | None = None
    error: str | None = None
    error_in: str | None = None  # "base" or "head": the side that did not render

    @property
    def status(self) -> str:
        if self.error:
            return "error"
        if self.base is None:
            return "new"
        if self.head is None:
            return "deleted"
        return "changed" if self.added or self.removed or self.changed else "unchanged"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stack": self.stack, "status": self.status}
        if self.error:
            return {**out, "error": self.error, "errorIn": self.error_in}
        base, head = self.base or Totals.of(None), self.head or Totals.of(None)
        return {
            **out,
            "added": [r.to_dict() for r in self.added],
            "removed": [r.to_dict() for r in self.removed],
            "changed": [c.to_dict() for c in self.changed],
            "totals": {"base": base.to_dict(), "head": head.to_dict(), "delta": _delta(base, head).to_dict()},
        }


@dataclass(frozen=True)
class DiffReport:
    """Every compared stack against one base ref."""

    base_ref: str
    stacks: tuple[StackDiff, ...]

    @property
    def head_failed(self) -> bool:
        """Whether a stack of the working tree does not render (a base that does not is only reported)."""
        return any(s.error_in == "head" for s in self.stacks)

    def to_dict(self) -> dict[str, Any]:
        return {"base": self.base_ref, "stacks": [s.to_dict() for s in self.stacks]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_markdown(self, limit: int = MARKDOWN_LIMIT) -> str:
        text = "\n".join(_report_markdown(self)) + "\n"
        if len(text) <= limit:
            return text
        note = "\n\n_… truncated: the full diff is longer than a comment can be; run `trainstack diff --format json`._\n"
        return text[: limit - len(note)].rsplit("\n", 1)[0] + note


def diff_plans(stack: str, base: dict[str, Any] | None, head: dict[str, Any] | None) -> StackDiff:
    """The difference from plan `base` to plan `head` (None: the stack is absent on that side)."""
    old = {r["urn"]: r for r in (base or {}).get("resources", [])}
    new = {r["urn"]: r for r in (head or {}).get("resources", [])}
    was = _previous_urns(old, new)
    added = tuple(_ref(new[u]) for u in _ordered(new.keys() - was.keys(), new))
    removed = tuple(_ref(old[u]) for u in _ordered(old.keys() - set(was.values()), old))
    renamed = {before: after for after, before in was.items()}
    changed = []
    for urn in _ordered(was.keys(), new):
        changes = resource_changes(old[was[urn]], new[urn], renamed)
        if changes:
            changed.append(ResourceChange(_ref(new[urn]), changes))
    return StackDiff(
        stack,
        added,
        removed,
        tuple(changed),
        Totals.of(base) if base is not None else None,
        Totals.of(head) if head is not None else None,
    )


def failed(stack: str, side: str, message: str) -> StackDiff:
    """A stack that could not be compared because `side` ("base" or "head") did not render."""
    return StackDiff(stack, error=message, error_in=side)


def _previous_urns(old: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """Each head resource's URN -> the base resource it is: the same URN, or (as the engine
    matches them) the first of its aliases the base has."""
    found = {}
    for urn, resource in new.items():
        candidates = [urn, *(resource.get("options") or {}).get("aliases", [])]
        match = next((c for c in candidates if c in old), None)
        if match is not None:
            found[urn] = match
    return found


def resource_changes(old: dict[str, Any], new: dict[str, Any], renamed: dict[str, str] | None = None) -> tuple[PropertyChange, ...]:
    """Every differing leaf of one resource's inputs, options and provider, with its effect;
    `renamed` maps base URNs to the head URNs they became by alias (a renamed provider is the
    same provider)."""
    rtype = new["type"]
    force_new = [*FORCE_NEW.get(rtype, ()), *(new.get("options") or {}).get("replaceOnChanges", [])]
    if rtype.startswith("kubernetes:") and new.get("custom"):
        force_new += _KUBERNETES_FORCE_NEW
    recreates = RECREATES_NODES.get(rtype, ())
    out: list[PropertyChange] = []
    for path, before, after in _leaves(old.get("inputs") or {}, new.get("inputs") or {}, ""):
        effect = REPLACE if _covered(path, force_new) else RECREATE_NODES if _covered(path, recreates) else UPDATE
        out.append(PropertyChange(path, before, after, effect))
    for path, before, after in _leaves(old.get("options") or {}, new.get("options") or {}, ""):
        out.append(PropertyChange(path, before, after, UPDATE, "option"))
    old_provider = (renamed or {}).get(old.get("provider") or "", old.get("provider"))
    if old_provider != new.get("provider"):
        # The engine replaces a resource whose provider reference moves to another provider.
        out.append(PropertyChange("provider", old.get("provider") or ABSENT, new.get("provider") or ABSENT, REPLACE, "provider"))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Walking values


def _same(a: Any, b: Any) -> bool:
    """Equal with types: 1, 1.0 and True are three different values in a plan."""
    return type(a) is type(b) and a == b


def _leaves(old: Any, new: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """(path, old, new) for each differing leaf; a list element present on one side only is one leaf."""
    maps = (isinstance(old, dict) or old is ABSENT) and (isinstance(new, dict) or new is ABSENT)
    one_sided_empty = (old is ABSENT and new == {}) or (new is ABSENT and old == {})
    if maps and not one_sided_empty:
        before = old if isinstance(old, dict) else {}
        after = new if isinstance(new, dict) else {}
        for key in sorted(before.keys() | after.keys()):
            yield from _leaves(before.get(key, ABSENT), after.get(key, ABSENT), _join(path, key))
    elif isinstance(old, list) and isinstance(new, list):
        for i in range(max(len(old), len(new))):
            before = old[i] if i < len(old) else ABSENT
            after = new[i] if i < len(new) else ABSENT
            if i < len(old) and i < len(new):
                yield from _leaves(before, after, f"{path}[{i}]")
            else:
                yield f"{path}[{i}]", before, after
    elif not _same(old, new):
        yield path, old, new


_BARE_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


def _join(path: str, key: str) -> str:
    if _BARE_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def _segments(path: str) -> list[str]:
    """`a.b[0]["c.d"]` -> ['a', 'b', 'c.d']: list indices (and `[*]`) dropped, quoted keys kept whole."""
    return [m.group(1) or m.group(2) for m in re.finditer(r'\["((?:[^"\\]|\\.)*)"\]|([^.\[\]]+)', re.sub(r"\[(?:\d+|\*)\]", "", path))]


def _covered(path: str, patterns: list[str] | tuple[str, ...]) -> bool:
    """Whether a change at `path` touches a property a pattern names: the property itself,
    something under it, or a whole block containing it. `*` matches any one segment."""
    parts = _segments(path)
    for pattern in patterns:
        if pattern == "*":
            return True
        wanted = _segments(pattern)
        shared = min(len(parts), len(wanted))
        if all(w in ("*", p) for w, p in zip(wanted[:shared], parts[:shared])):
            return True
    return False


def _ref(resource: dict[str, Any]) -> ResourceRef:
    return ResourceRef(resource["urn"], resource["type"], resource["name"])


def _ordered(urns: set[str], resources: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(urns, key=lambda u: (resources[u]["type"], resources[u]["name"], u))


def _delta(base: Totals, head: Totals) -> Totals:
    return Totals(
        head.gpu_nodes - base.gpu_nodes,
        head.gpus - base.gpus,
        round(head.usd_at_max - base.usd_at_max, 2),
        round(head.usd_at_min - base.usd_at_min, 2),
        round(head.memory_gb - base.memory_gb, 2) if head.memory_gb is not None and base.memory_gb is not None else None,
    )


# ---------------------------------------------------------------------------------------------
# Markdown


def _report_markdown(report: DiffReport) -> Iterator[str]:
    yield f"## trainstack diff against `{report.base_ref}`"
    yield ""
    for stack in report.stacks:
        yield from _stack_markdown(stack)
        yield ""
    yield (
        f"_Offline plans under Pulumi's mock engine. Costs are estimates from list prices as of "
        f"{catalog.PRICES_AS_OF}. Replacements follow the providers' ForceNew properties and each resource's replaceOnChanges._"
    )


def _stack_markdown(diff: StackDiff) -> Iterator[str]:
    name = f"`{diff.stack}`"
    if diff.status == "error":
        yield f"### ❌ {name}: could not be compared"
        yield ""
        yield "```"
        yield (diff.error or "").strip()
        yield "```"
        return
    if diff.status == "unchanged":
        yield f"{name}: no changes"
        return
    counts = f"{len(diff.added)} to add, {len(diff.changed)} to change, {len(diff.removed)} to remove"
    title = {"new": "new stack", "deleted": "stack deleted"}.get(diff.status)
    yield f"### {name}: {title + ', ' if title else ''}{counts}"
    yield ""
    warnings = list(_warnings(diff))
    if warnings:
        yield from warnings
        yield ""
    yield from _totals_table(diff.base or Totals.of(None), diff.head or Totals.of(None))
    for heading, refs in (("Added", diff.added), ("Removed", diff.removed)):
        if refs:
            yield ""
            yield from _ref_list(heading, refs)
    if diff.changed:
        yield ""
        yield "**Changed**"
        yield ""
        for change in diff.changed:
            yield from _change_markdown(change)


def _warnings(diff: StackDiff) -> Iterator[str]:
    base, head = diff.base, diff.head
    if head is not None and head.fits is False and (base is None or base.fits is not False):
        yield f"- ⚠️ **NO LONGER FITS**: the job needs about {head.memory_gb} GB per GPU, more than the GPU holds with headroom (`trainstack validate` says what would help)."
    for change in diff.changed:
        what = f"`{change.resource.type}` **{change.resource.name}**"
        if change.effect == REPLACE:
            yield f"- ⚠️ **REPLACES** {what}: {_paths(change, REPLACE)} cannot change in place; the resource is deleted and created again."
        elif change.effect == RECREATE_NODES:
            yield f"- ⚠️ **RECREATES NODES** {what}: {_paths(change, RECREATE_NODES)} is applied by recreating every node of the pool; running jobs on it are interrupted."
    for ref in diff.removed:
        if ref.type in (CLUSTER, NODE_POOL):
            yield f"- ⚠️ **DELETES** `{ref.type}` **{ref.name}**."


def _paths(change: ResourceChange, effect: str, shown: int = 3) -> str:
    paths = [f"`{c.path}`" for c in change.changes if c.effect == effect]
    more = f" and {len(paths) - shown} more" if len(paths) > shown else ""
    return ", ".join(paths[:shown]) + more


def _totals_table(base: Totals, head: Totals) -> Iterator[str]:
    delta = _delta(base, head)
    yield "| | base | working tree | change |"
    yield "|---|---:|---:|---:|"
    yield f"| GPU nodes | {base.gpu_nodes} | {head.gpu_nodes} | {delta.gpu_nodes:+d} |"
    yield f"| GPUs | {base.gpus} | {head.gpus} | {delta.gpus:+d} |"
    yield f"| est. cost per hour, full size | {_usd(base.usd_at_max)} | {_usd(head.usd_at_max)} | {_usd(delta.usd_at_max, sign=True)} |"
    if base.usd_at_min != base.usd_at_max or head.usd_at_min != head.usd_at_max:
        yield f"| est. cost per hour, scaled in | {_usd(base.usd_at_min)} | {_usd(head.usd_at_min)} | {_usd(delta.usd_at_min, sign=True)} |"
    yield from _pool_rows(base.pools, head.pools)


def _pool_rows(base: tuple[PoolTotal, ...], head: tuple[PoolTotal, ...]) -> Iterator[str]:
    """A row per GPU pool where either side has several, or the pools differ: GPU nodes and cost
    at full size, with the machine and capacity."""
    if max(len(base), len(head)) < 2 and [p.name for p in base] == [p.name for p in head]:
        return
    old, new = {p.name: p for p in base}, {p.name: p for p in head}
    for name in [*old, *(n for n in new if n not in old)]:
        b, h = old.get(name), new.get(name)
        cells = [f"{p.gpu_nodes} x {p.label()}, {'not priced' if p.usd_at_max is None else _usd(p.usd_at_max)}" if p else "none" for p in (b, h)]
        nodes = (h.gpu_nodes if h else 0) - (b.gpu_nodes if b else 0)
        if any(p is not None and p.usd_at_max is None for p in (b, h)):
            yield f"| pool `{name}` | {cells[0]} | {cells[1]} | {nodes:+d} nodes, cost not priced |"
            continue
        usd = (h.usd_at_max if h else 0.0) - (b.usd_at_max if b else 0.0)
        yield f"| pool `{name}` | {cells[0]} | {cells[1]} | {nodes:+d} nodes, {_usd(round(usd, 2), sign=True)} |"


def _usd(value: float, sign: bool = False) -> str:
    text = f"${abs(value):,.2f}"
    if sign:
        return ("-" if value < 0 else "+") + text
    return text


def _ref_list(heading: str, refs: tuple[ResourceRef, ...]) -> Iterator[str]:
    items = [f"- `{r.type}` **{r.name}**" for r in refs]
    if len(items) <= _LIST_OPEN:
        yield f"**{heading}**"
        yield ""
        yield from items
        return
    yield f"<details><summary><b>{heading}</b>: {len(items)} resources</summary>"
    yield ""
    yield from items
    yield ""
    yield "</details>"


def _change_markdown(change: ResourceChange) -> Iterator[str]:
    flag = {REPLACE: " ⚠️ REPLACES", RECREATE_NODES: " ⚠️ RECREATES NODES"}.get(change.effect, "")
    yield f"- `{change.resource.type}` **{change.resource.name}**{flag}"
    for prop in change.changes[:_CHANGES_SHOWN]:
        note = {REPLACE: " (forces replacement)", RECREATE_NODES: " (recreates nodes)"}.get(prop.effect, "")
        kind = {"option": " (resource option)", "provider": ""}.get(prop.kind, "")
        yield f"  - `{prop.path}`{kind}: {_show(prop.old)} → {_show(prop.new)}{note}"
    hidden = len(change.changes) - _CHANGES_SHOWN
    if hidden > 0:
        yield f"  - … and {hidden} more (`trainstack diff --format json` lists them all)"


def _show(value: Any) -> str:
    if value is ABSENT:
        return "_(none)_"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False).replace("`", "'")
    if len(text) > _VALUE_WIDTH:
        text = text[: _VALUE_WIDTH - 1] + "…"
    return f"`{text}`"
