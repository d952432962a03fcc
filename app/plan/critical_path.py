"""The deploy critical path of a plan: the longest chain of resources `pulumi up` must create one
after another, weighted by typical creation times (`creation_times`), and how it compares with
the floor every stack pays: network -> cluster -> GPU pool -> workload.

Works on plan resources (the dicts of plan.json). What a resource waits for:

- each URN in its `dependencies`; a dependency on a component resource waits for all of the
  component's descendants (Pulumi: depending on a component waits for its children);
- its `provider` (a Kubernetes object needs its provider, whose kubeconfig needs the cluster);
- its parent, when the parent is a custom resource (its URN resolves once it is created).

Component resources take no time and are not on any path. Providers not in the plan (the
engine's default providers) and the stack root are not waited for.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trainstack.app.plan.cost import NODE_POOL
from trainstack.app.plan.creation_times import (
    COMMAND,
    CREATION_TIMES,
    DEFAULT,
    EMPTY_NODE_POOL,
    GPU_NODE_POOL,
    KUBERNETES_OBJECT,
    PRELOAD_BUILD,
    PROVIDER,
)
from trainstack.core import catalog
from trainstack.core.errors import ReportError

NETWORK = "gcp:compute/network:Network"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
CLUSTER = "gcp:container/cluster:Cluster"
JOBSET = f"kubernetes:{catalog.JOBSET_API}:JobSet"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
ESSENTIAL_CHAIN = "network -> cluster -> GPU pool -> workload"
NEGLIGIBLE_SECONDS = 30.0
"""A step on the path that takes less than this is negligible for the verdict."""


@dataclass(frozen=True)
class PathStep:
    """One resource on the critical path: its time and when it starts and finishes (seconds from
    the start of `pulumi up`); `essential` if it is on the essential chain."""

    urn: str
    type: str
    name: str
    seconds: float
    start: float
    finish: float
    essential: bool

    @property
    def negligible(self) -> bool:
        return self.seconds < NEGLIGIBLE_SECONDS


@dataclass(frozen=True)
class PoolReady:
    """A GPU node pool's own creation time and when it is ready (seconds from the start of
    `pulumi up`): a job on that pool can start no earlier."""

    name: str
    seconds: float
    ready: float


@dataclass(frozen=True)
class CriticalPath:
    """The longest chain of creations (`total_seconds`, `steps` in order), the floor (the longest
    chain of essential resources present: primary network and subnetwork, cluster, GPU node pool,
    JobSet), and the custom resource types timed by the default figure."""

    total_seconds: float
    steps: tuple[PathStep, ...]
    floor_seconds: float
    floor_urns: tuple[str, ...]
    defaulted_types: tuple[str, ...]
    pools: tuple[PoolReady, ...] = ()
    jobset_ready: float | None = None  # when the last JobSet is applied (its job's pods are then created); None: no JobSet
    platform: bool = True
    """Whether the stack makes a cluster: a workload stack makes none, nor a network or pool, so
    it has no essential chain to compare with."""

    @property
    def ratio(self) -> float | None:
        """Critical path over floor (1.0: the path is the essential chain); None with no floor."""
        return self.total_seconds / self.floor_seconds if self.floor_seconds else None

    @property
    def off_chain(self) -> tuple[PathStep, ...]:
        """Steps on the path that are neither essential nor negligible."""
        return tuple(s for s in self.steps if not s.essential and not s.negligible)

    @property
    def only_essential(self) -> bool:
        return not self.off_chain

    def verdict(self) -> str:
        if not self.steps:
            return "Nothing to create: the plan has no custom resources."
        if not self.platform:
            return (
                f"No verdict: the stack makes no network, cluster or GPU pool (it runs on a platform stack), so {ESSENTIAL_CHAIN} is not its to compare with."
            )
        if self.only_essential:
            return f"Only {ESSENTIAL_CHAIN} lies on the critical path (every other step on it takes under {NEGLIGIBLE_SECONDS:g} s)."
        others = ", ".join(f"{s.name} ({s.type}, {_minutes(s.seconds)} min)" for s in self.off_chain)
        return f"Not only {ESSENTIAL_CHAIN}: the critical path also waits on {others}."

    def _summary(self) -> str:
        if not self.platform:
            return f"{_minutes(self.total_seconds)} min (a workload stack: no {ESSENTIAL_CHAIN} of its own)"
        ratio = f"{self.ratio:.2f}" if self.ratio is not None else "n/a"
        return f"{_minutes(self.total_seconds)} min; floor ({ESSENTIAL_CHAIN}) {_minutes(self.floor_seconds)} min; ratio {ratio}"

    def _footnote(self) -> str:
        note = "Typical creation times (trainstack.app.plan.creation_times): an estimate, not a measurement."
        if self.defaulted_types:
            seconds = CREATION_TIMES[DEFAULT].seconds
            note += f" Timed by the default ({seconds:g} s): {', '.join(self.defaulted_types)}."
        return note

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": True,
            "totalSeconds": round(self.total_seconds, 1),
            "floorSeconds": round(self.floor_seconds, 1),
            "ratio": round(self.ratio, 3) if self.ratio is not None else None,
            "negligibleSeconds": NEGLIGIBLE_SECONDS,
            "onlyEssential": self.only_essential if self.platform else None,
            "verdict": self.verdict(),
            "path": [
                {
                    "urn": s.urn,
                    "type": s.type,
                    "name": s.name,
                    "seconds": round(s.seconds, 1),
                    "start": round(s.start, 1),
                    "finish": round(s.finish, 1),
                    "essential": s.essential,
                }
                for s in self.steps
            ],
            "floor": list(self.floor_urns),
            "defaultedTypes": list(self.defaulted_types),
            "pools": {p.name: {"seconds": round(p.seconds, 1), "readyAt": round(p.ready, 1)} for p in self.pools},
        }

    def to_markdown(self) -> str:
        lines = ["### Deploy critical path", "", f"**{self._summary()}**", ""]
        for number, s in enumerate(self.steps, 1):
            mark = "" if s.essential or s.negligible or not self.platform else " (off the essential chain)"
            lines.append(f"{number}. `{s.name}` `{s.type}`: {_minutes(s.seconds)} min, cumulative {_minutes(s.finish)} min{mark}")
        lines += [f"- GPU pool `{p.name}` ready at {_minutes(p.ready)} min" for p in self._several_pools()]
        lines += ["", f"**Verdict:** {self.verdict()}", "", self._footnote()]
        return "\n".join(lines)

    def _several_pools(self) -> tuple[PoolReady, ...]:
        """The GPU pools, when there are several (with one, the path says it)."""
        return self.pools if len(self.pools) > 1 else ()

    def to_table(self) -> str:
        lines = [f"deploy critical path: {self._summary()}", ""]
        if self.steps:
            width = max(len("resource"), *(len(s.name) for s in self.steps))
            lines.append(f"  {'#':>3}  {'min':>6}  {'cum. min':>8}  {'resource':<{width}}  type")
            for number, s in enumerate(self.steps, 1):
                mark = "" if s.essential or s.negligible or not self.platform else "  (off the essential chain)"
                lines.append(f"  {number:>3}  {_minutes(s.seconds):>6}  {_minutes(s.finish):>8}  {s.name:<{width}}  {s.type}{mark}")
            lines.append("")
        lines += [f"  GPU pool {p.name} ready at {_minutes(p.ready)} min" for p in self._several_pools()]
        lines += [f"verdict: {self.verdict()}", self._footnote()]
        return "\n".join(lines)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


# ---------------------------------------------------------------------------------------------
# Weights


def is_gpu_pool(resource: dict[str, Any]) -> bool:
    """A node pool of GPUs: accelerators in its nodeConfig, or a GPU machine from the catalog."""
    node_config = resource["inputs"].get("nodeConfig") or {}
    return bool(node_config.get("guestAccelerators")) or node_config.get("machineType") in catalog.MACHINES


def _created_empty(resource: dict[str, Any]) -> bool:
    """A node pool created with zero nodes (GKE's initial count is initialNodeCount or nodeCount, else 0)."""
    inputs = resource["inputs"]
    return not inputs.get("nodeCount", inputs.get("initialNodeCount", 0))


def _skips_await(resource: dict[str, Any]) -> bool:
    inputs = resource["inputs"]
    if resource["type"] == HELM_RELEASE:
        return inputs.get("skipAwait") is True
    annotations = (inputs.get("metadata") or {}).get("annotations") or {}
    return annotations.get("pulumi.com/skipAwait") == "true"


def weight_keys(resource: dict[str, Any]) -> tuple[str, ...]:
    """The keys a custom resource's creation time is looked up by, most specific first."""
    kind = resource["type"]
    if kind == NODE_POOL:
        if _created_empty(resource):
            return EMPTY_NODE_POOL, NODE_POOL
        return (GPU_NODE_POOL, NODE_POOL) if is_gpu_pool(resource) else (NODE_POOL,)
    if kind.startswith("kubernetes:"):
        return (KUBERNETES_OBJECT,) if _skips_await(resource) else (kind, KUBERNETES_OBJECT)
    if kind.startswith("pulumi:providers:"):
        return kind, PROVIDER
    if kind == COMMAND and catalog.DISK_IMAGE_BUILDER_REPOSITORY in str(resource["inputs"].get("create", "")):
        return PRELOAD_BUILD, COMMAND
    return (kind,)


# ---------------------------------------------------------------------------------------------
# Graph


def _predecessors(resources: list[dict[str, Any]]) -> dict[str, set[str]]:
    """What each custom resource waits for (custom resources only), per the module docstring."""
    by_urn = {r["urn"]: r for r in resources}
    if len(by_urn) != len(resources):
        raise ReportError("the plan lists a resource URN more than once")
    children: dict[str, list[str]] = defaultdict(list)
    for r in resources:
        if r.get("parent"):
            children[r["parent"]].append(r["urn"])

    def descendants(component: str) -> set[str]:
        found: set[str] = set()
        pending = list(children[component])
        while pending:
            urn = pending.pop()
            if by_urn[urn]["custom"]:
                found.add(urn)
            pending.extend(children[urn])
        return found

    preds: dict[str, set[str]] = {}
    for r in resources:
        if not r["custom"]:
            continue
        urn, waits = r["urn"], set[str]()
        for dep in r.get("dependencies") or []:
            if dep not in by_urn:
                raise ReportError(f"{urn} depends on {dep}, which is not in the plan")
            waits |= {dep} if by_urn[dep]["custom"] else descendants(dep) - {urn}
        for other in (r.get("provider"), r.get("parent")):
            if other is not None and other in by_urn and by_urn[other]["custom"]:
                waits.add(other)
        preds[urn] = waits
    return preds


def _cycle(preds: dict[str, set[str]], stuck: set[str]) -> list[str]:
    """One cycle among `stuck` (every one of them waits on another one of them)."""
    seen: dict[str, int] = {}
    walk: list[str] = []
    urn = min(stuck)
    while urn not in seen:
        seen[urn] = len(walk)
        walk.append(urn)
        urn = min(preds[urn] & stuck)
    return [*walk[seen[urn] :], urn]


def _topological(preds: dict[str, set[str]]) -> list[str]:
    """URNs with every resource after all it waits for (ties in URN order), or ReportError on a cycle."""
    waiting = {urn: len(p) for urn, p in preds.items()}
    followers: dict[str, list[str]] = defaultdict(list)
    for urn, p in preds.items():
        for before in p:
            followers[before].append(urn)
    ready = [urn for urn, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        urn = heapq.heappop(ready)
        order.append(urn)
        for after in followers[urn]:
            waiting[after] -= 1
            if waiting[after] == 0:
                heapq.heappush(ready, after)
    if len(order) < len(preds):
        cycle = _cycle(preds, set(preds) - set(order))
        raise ReportError("the plan's dependencies form a cycle, which no Pulumi program can register (a malformed plan?): " + " -> waits for -> ".join(cycle))
    return order


def _essential(resources: dict[str, dict[str, Any]], ancestors: dict[str, set[str]]) -> set[str]:
    """Clusters, the networks and subnetworks they wait for, GPU node pools and JobSets."""
    clusters = {u for u, r in resources.items() if r["type"] == CLUSTER}
    networks = {a for c in clusters for a in ancestors[c] if resources[a]["type"] in (NETWORK, SUBNETWORK)}
    pools = {u for u, r in resources.items() if r["type"] == NODE_POOL and is_gpu_pool(r)}
    jobsets = {u for u, r in resources.items() if r["type"] == JOBSET}
    return clusters | networks | pools | jobsets


def _longest_chain(order: list[str], members: set[str], ancestors: dict[str, set[str]], seconds: dict[str, float]) -> list[str]:
    """The chain of `members`, each waiting (transitively) on the one before, of greatest total time."""
    best: dict[str, float] = {}
    before: dict[str, str | None] = {}
    for urn in (u for u in order if u in members):
        top = max(sorted(ancestors[urn] & members), key=best.__getitem__, default=None)
        before[urn] = top
        best[urn] = seconds[urn] + (best[top] if top else 0.0)
    chain: list[str] = []
    last = max(sorted(best), key=best.__getitem__, default=None)
    while last is not None:
        chain.append(last)
        last = before[last]
    return chain[::-1]


def critical_path(resources: list[dict[str, Any]], weights: Mapping[str, float] | None = None) -> CriticalPath:
    """The critical path of plan `resources`, timed by `weights` (keys as in `creation_times`;
    default: its typical figures). A custom resource no key matches takes `weights[DEFAULT]`,
    else the table's default, and its type is listed in `defaulted_types`."""
    table = {key: t.seconds for key, t in CREATION_TIMES.items()} if weights is None else dict(weights)
    fallback = table.get(DEFAULT, CREATION_TIMES[DEFAULT].seconds)
    preds = _predecessors(resources)
    custom = {r["urn"]: r for r in resources if r["custom"]}

    seconds: dict[str, float] = {}
    defaulted: set[str] = set()
    for urn, r in custom.items():
        key = next((k for k in weight_keys(r) if k in table), None)
        if key is None:
            defaulted.add(r["type"])
        seconds[urn] = table[key] if key else fallback
        if seconds[urn] < 0:
            raise ReportError(f"creation time of {r['type']} is negative ({seconds[urn]} s)")

    order = _topological(preds)
    start: dict[str, float] = {}
    finish: dict[str, float] = {}
    ancestors: dict[str, set[str]] = {}
    for urn in order:
        start[urn] = max((finish[p] for p in preds[urn]), default=0.0)
        finish[urn] = start[urn] + seconds[urn]
        ancestors[urn] = set(preds[urn]).union(*(ancestors[p] for p in preds[urn]))

    path: list[str] = []
    urn = max(sorted(custom), key=finish.__getitem__, default=None)
    while urn is not None:
        path.append(urn)
        urn = max(sorted(preds[urn]), key=finish.__getitem__, default=None)
    path.reverse()

    essential = _essential(custom, ancestors)
    floor = _longest_chain(order, essential, ancestors, seconds)
    steps = tuple(PathStep(u, custom[u]["type"], custom[u]["name"], seconds[u], start[u], finish[u], u in essential) for u in path)
    pools = tuple(
        PoolReady(r["inputs"].get("name") or r["name"], seconds[u], finish[u]) for u, r in sorted(custom.items()) if r["type"] == NODE_POOL and is_gpu_pool(r)
    )
    return CriticalPath(
        total_seconds=finish[path[-1]] if path else 0.0,
        steps=steps,
        floor_seconds=sum(seconds[u] for u in floor),
        floor_urns=tuple(floor),
        defaulted_types=tuple(sorted(defaulted)),
        pools=pools,
        jobset_ready=max((finish[u] for u, r in custom.items() if r["type"] == JOBSET), default=None),
        platform=any(r["type"] == CLUSTER for r in custom.values()),
    )
