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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from trainstack.app.plan import aliases
from trainstack.app.plan.cost import estimate
from trainstack.app.review import semantics
from trainstack.app.review.semantics import ABSENT, FAILS, IGNORED, RECREATE_NODES, REPLACE, UPDATE
from trainstack.core import catalog

CLUSTER, NODE_POOL = semantics.CLUSTER, semantics.NODE_POOL
MULTIKUEUE_CLUSTER = f"kubernetes:{catalog.KUEUE_API}:MultiKueueCluster"

# The classes of what a reviewer must not miss, in the order the report lists them.
DATA, JOB, FAILS_CLASS, SAFETY, REPLACES, NODES, DELETES = "data", "job", "fails", "safety", "replace", "recreate-nodes", "delete"
_CLASS_ORDER = (DATA, JOB, FAILS_CLASS, SAFETY, REPLACES, NODES, DELETES)
_CLASS_FLAG = {
    DATA: "🛑 **DATA**",
    JOB: "🛑 **RUNNING JOB**",
    FAILS_CLASS: "❌ **APPLY FAILS**",
    SAFETY: "🔓 **SAFETY**",
    REPLACES: "⚠️ **REPLACES**",
    NODES: "⚠️ **RECREATES NODES**",
    DELETES: "⚠️ **DELETES**",
}
# What `--fail-on` stops: data loses a store's bytes (or the job's view of them); replace is any replacement.
FAIL_ON = {"data": {DATA}, "replace": {DATA, REPLACES}}

IDENTITY = "(identity)"  # the path of a replacement's name clash in JSON: no input of its own, what identifies the resource
MARKDOWN_LIMIT = 60_000  # GitHub rejects comments over 65,536 characters
_CHANGES_SHOWN = 25  # property changes listed per resource in Markdown
_LIST_OPEN = 10  # added/removed lists longer than this fold into <details>
_VALUE_WIDTH = 80


# ---------------------------------------------------------------------------------------------
# The structured diff


@dataclass(frozen=True)
class PropertyChange:
    """One leaf property that differs: `old`/`new` are ABSENT where a side does not set it.

    `kind` is `input`, `option` (a resource option such as protect), `provider`, `identity` (the
    replacement takes the name the live resource holds: no property of its own), or `cascade` (an
    input the resource takes from a replaced resource); `reason` names a rule beyond the
    providers' ForceNew table (app/review/semantics.py)."""

    path: str
    old: Any
    new: Any
    effect: str = UPDATE
    kind: str = "input"
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "kind": self.kind, "effect": self.effect}
        if self.reason:
            out["reason"] = self.reason
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
        """The strongest effect of its changes: fails > replace > recreate-nodes > update > ignored."""
        effects = {c.effect for c in self.changes}
        return next((e for e in (FAILS, REPLACE, RECREATE_NODES, UPDATE) if e in effects), IGNORED)

    @property
    def replaces(self) -> bool:
        """Whether the engine replaces the resource (a replacement that would fail included)."""
        return any(c.effect == REPLACE for c in self.changes)

    def to_dict(self) -> dict[str, Any]:
        return {**self.resource.to_dict(), "effect": self.effect, "changes": [c.to_dict() for c in self.changes]}


@dataclass(frozen=True)
class Finding:
    """One thing a reviewer must not miss: its class (DATA, JOB, ...), the resource and what happens."""

    cls: str
    resource: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"class": self.cls, "resource": self.resource, "text": self.text}


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
    first_step_s: float | None = None  # the job's modelled time to first step, as configured (app/plan/first_step.py)

    @classmethod
    def of(cls, plan: dict[str, Any] | None) -> Totals:
        cost = estimate(plan["resources"] if plan else [])
        memory = ((plan or {}).get("summary") or {}).get("memory") or {}
        job = ((plan or {}).get("summary") or {}).get("job")
        if job and not cost.gpus:  # a workload stack: its job's share of its platform's nodes
            usd = job["usdPerHour"] or 0.0
            return cls(job["nodes"], job["gpus"], usd, usd, memory.get("total"), memory.get("fits"))
        pools = tuple(
            PoolTotal(p.name, p.machine_type, p.capacity, p.max_nodes, None if p.hourly_usd is None else round(p.max_nodes * p.hourly_usd, 2))
            for p in cost.pools
            if p.gpus_per_node
        )
        first_step = (((plan or {}).get("summary") or {}).get("timeToFirstStep") or {}).get("seconds")
        return cls(cost.gpu_nodes, cost.gpus, cost.max_usd, cost.min_usd, memory.get("total"), memory.get("fits"), pools, first_step)

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpuNodes": self.gpu_nodes,
            "gpus": self.gpus,
            "usdPerHourAtMax": self.usd_at_max,
            "usdPerHourAtMin": self.usd_at_min,
            "gpuMemoryGb": self.memory_gb,
            "fits": self.fits,
            **({"pools": {p.name: p.to_dict() for p in self.pools}} if self.pools else {}),
            **({"timeToFirstStepSeconds": self.first_step_s} if self.first_step_s is not None else {}),
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
    findings: tuple[Finding, ...] = ()

    @property
    def status(self) -> str:
        if self.error:
            return "error"
        if self.base is None:
            return "new"
        if self.head is None:
            return "deleted"
        return "changed" if self.added or self.removed or self.effective or self.findings else "unchanged"

    @property
    def effective(self) -> tuple[ResourceChange, ...]:
        """The changed resources the engine acts on (not those whose changes are all ignored)."""
        return tuple(c for c in self.changed if c.effect != IGNORED)

    def crosses(self, fail_on: str) -> bool:
        """Whether this stack's change is of a class `--fail-on fail_on` stops."""
        return any(f.cls in FAIL_ON[fail_on] for f in self.findings)

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
            "findings": [f.to_dict() for f in sorted(self.findings, key=_finding_order)],
            "totals": {"base": base.to_dict(), "head": head.to_dict(), "delta": _delta(base, head).to_dict()},
        }


@dataclass(frozen=True)
class DiffReport:
    """Every compared stack against one base ref."""

    base_ref: str
    stacks: tuple[StackDiff, ...]

    def crosses(self, fail_on: str) -> bool:
        """Whether any stack's change is of a class `--fail-on fail_on` stops."""
        return any(s.crosses(fail_on) for s in self.stacks)

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
    removed_urns = _ordered(old.keys() - set(was.values()), old)
    renamed = {before: after for after, before in was.items()}
    changes = {urn: resource_changes(old[was[urn]], new[urn], renamed) for urn in was}
    _cascade(changes, new, old, was)
    changed = tuple(ResourceChange(_ref(new[u]), changes[u]) for u in _ordered(was.keys(), new) if changes[u])
    findings = _findings(changed, new, old, was, removed_urns, base or {}, head or {})
    return StackDiff(
        stack,
        added,
        tuple(_ref(old[u]) for u in removed_urns),
        changed,
        Totals.of(base) if base is not None else None,
        Totals.of(head) if head is not None else None,
        findings=findings,
    )


def failed(stack: str, side: str, message: str) -> StackDiff:
    """A stack that could not be compared because `side` ("base" or "head") did not render."""
    return StackDiff(stack, error=message, error_in=side)


def _previous_urns(old: dict[str, Any], new: dict[str, Any]) -> dict[str, str]:
    """Each head resource's URN -> the base resource it is, as the engine matches them: its own
    URN, else the first of its aliases, own or derived from its parent's, the base has
    (app/plan/aliases.py)."""
    return aliases.claims(old, new.values()).was


def _live_options(resource: dict[str, Any]) -> dict[str, Any]:
    """A resource's options that act on the live resource: not its aliases, which only tell the
    engine which earlier URNs in the state are this resource (matched by `_previous_urns`)."""
    return {k: v for k, v in (resource.get("options") or {}).items() if k != "aliases"}


def resource_changes(old: dict[str, Any], new: dict[str, Any], renamed: dict[str, str] | None = None) -> tuple[PropertyChange, ...]:
    """Every differing leaf of one resource's inputs, options and provider, with its effect;
    `renamed` maps base URNs to the head URNs they became by alias (a renamed provider is the
    same provider)."""
    out: list[PropertyChange] = []
    for path, before, after in _leaves(old.get("inputs") or {}, new.get("inputs") or {}, ""):
        effect = semantics.property_effect(old, new, path, before, after)
        out.append(PropertyChange(path, before, after, effect.kind, reason=effect.reason))
    for path, before, after in _leaves(_live_options(old), _live_options(new), ""):
        out.append(PropertyChange(path, before, after, UPDATE, "option"))
    old_provider = (renamed or {}).get(old.get("provider") or "", old.get("provider"))
    if old_provider != new.get("provider"):
        # The engine replaces a resource whose provider reference moves to another provider.
        out.append(PropertyChange("provider", old.get("provider") or ABSENT, new.get("provider") or ABSENT, REPLACE, "provider"))
    if any(c.effect == REPLACE for c in out) and semantics.replacement_collides(old, new):
        out.append(PropertyChange(IDENTITY, ABSENT, ABSENT, FAILS, "identity", _collision(old)))
    return tuple(out)


def _collision(old: dict[str, Any]) -> str:
    why = "its delete is skipped (retainOnDelete)" if (old.get("options") or {}).get("retainOnDelete") else "the replacement is created first"
    return f"the replacement keeps the same name and location while the old one still exists ({why}): the create fails with ALREADY_EXISTS"


def _cascade(changes: dict[str, tuple[PropertyChange, ...]], new: dict[str, Any], old: dict[str, Any], was: dict[str, str]) -> None:
    """Replace, to a fixed point, what takes a replacement-forcing input from a replaced resource or
    runs on a replaced provider (the engine's dependent replacements; semantics module docstring)."""
    replaced = {u for u, c in changes.items() if any(p.effect == REPLACE for p in c) and not any(p.effect == FAILS for p in c)}
    grew = True
    while grew:
        grew = False
        for urn in _ordered(set(changes) - replaced, new):
            resource = new[urn]
            if not resource.get("custom"):
                continue
            extra = []
            if resource.get("provider") in replaced:
                extra.append(
                    PropertyChange(
                        "provider", resource["provider"], "[replaced]", REPLACE, "cascade", f"its provider {_name(resource['provider'])} is replaced"
                    )
                )
            force_new = semantics.force_new_paths(resource)
            for prop, deps in sorted((resource.get("propertyDependencies") or {}).items()):
                hit = sorted(d for d in deps if d in replaced)
                if hit and semantics.covered(prop, force_new):
                    before = (old[was[urn]].get("inputs") or {}).get(prop, ABSENT)
                    extra.append(PropertyChange(prop, before, "[unknown]", REPLACE, "cascade", f"takes `{prop}` from {_name(hit[0])}, which is replaced"))
            if extra:
                changes[urn] = (*changes[urn], *extra)
                replaced.add(urn)
                grew = True


def _name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


# ---------------------------------------------------------------------------------------------
# What a reviewer must not miss


def _finding_order(finding: Finding) -> tuple[int, str]:
    return (_CLASS_ORDER.index(finding.cls), finding.resource)


def _findings(
    changed: tuple[ResourceChange, ...],
    new: dict[str, Any],
    old: dict[str, Any],
    was: dict[str, str],
    removed: list[str],
    base: dict[str, Any],
    head: dict[str, Any],
) -> tuple[Finding, ...]:
    """Every finding of one stack's change, data first (the classes in `_CLASS_ORDER`)."""
    out: list[Finding] = []
    base_resources = base.get("resources", [])
    cascaded: dict[str, list[str]] = {}
    for change in changed:
        before, after = old[was[change.resource.urn]], new[change.resource.urn]
        what = f"`{change.resource.type}` **{change.resource.name}**"
        for prop in change.changes:
            if prop.effect == FAILS:
                out.append(Finding(FAILS_CLASS, what, f"`{prop.path}`: {prop.reason}." if prop.kind != "identity" else f"{prop.reason}."))
        out += _safety(what, before, after)
        if change.effect == REPLACE:
            store = semantics.data_store(before, base_resources)
            if store == "bound PersistentVolume" and all(c.kind == "cascade" for c in change.changes if c.effect == REPLACE):
                store = None  # re-created as it was (on a new cluster): it points at the same store
            if store:
                out.append(Finding(DATA, what, f"this {store} is replaced: {_bytes_fate(before)}; the job then sees an empty store."))
            elif change.resource.type == semantics.JOBSET:
                out.append(Finding(JOB, what, "the running job is stopped and started again (it resumes from its last checkpoint while `runId` is kept)."))
            cause = next((c for c in change.changes if c.kind == "cascade"), None)
            if cause and not store:
                cascaded.setdefault(cause.reason.split(", which")[0].split(" from ")[-1].split(" is ")[0].removeprefix("its provider "), []).append(
                    change.resource.name
                )
            else:
                out.append(Finding(REPLACES, what, _replacement(change, before, after)))
        elif change.effect == RECREATE_NODES:
            out.append(
                Finding(NODES, what, f"{_paths(change, RECREATE_NODES)} is applied by recreating every node of the pool; running jobs on it are interrupted.")
            )
        if change.resource.type == NODE_POOL:
            out += _shrink(what, before, after)
    for root, names in sorted(cascaded.items()):
        shown = ", ".join(f"**{n}**" for n in names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
        out.append(
            Finding(
                REPLACES,
                f"{len(names)} resources on **{root}**",
                f"replaced with it (they take a replacement-forcing input from it, or run on its Kubernetes provider): {shown}.",
            )
        )
    added_objects = {_object_key(new[u]): new[u] for u in set(new) - set(was) if _object_key(new[u])}
    for urn in removed:
        resource = old[urn]
        twin = added_objects.get(_object_key(resource))
        if twin:
            out.append(
                Finding(
                    FAILS_CLASS,
                    f"`{resource['type']}` **{resource['name']}** → **{twin['name']}**",
                    "the same Kubernetes object under a new URN: its create runs while the old object still exists (deletes run last), so it "
                    "fails (an immutable field such as a volume's source changed) or lands on it, and the old URN's delete then removes the shared object.",
                )
            )
        what = f"`{resource['type']}` **{resource['name']}**"
        store = semantics.data_store(resource, base_resources)
        if store:
            out.append(Finding(DATA, what, f"this {store} leaves the stack: {_bytes_fate(resource)}; the job no longer sees it."))
        elif resource["type"] == semantics.JOBSET:
            out.append(Finding(JOB, what, "the running job is deleted."))
        elif resource["type"] in (CLUSTER, NODE_POOL):
            out.append(Finding(DELETES, what, "deleted, with every node and what runs on them."))
        elif resource["type"] == MULTIKUEUE_CLUSTER:
            out.append(Finding(JOB, what, _worker_removed(resource["inputs"]["metadata"]["name"])))
    was_destroy, now_destroy = (base.get("summary") or {}).get("destroy"), (head.get("summary") or {}).get("destroy")
    if was_destroy and now_destroy and was_destroy != now_destroy:
        out.append(Finding(SAFETY, "`pulumi destroy`", f"now {now_destroy} (was: {was_destroy})."))
    return tuple(sorted(out, key=_finding_order))


def _worker_removed(worker: str) -> str:
    """What removing a worker from a fleet does to its jobs (Kueue v0.19.2
    pkg/controller/admissionchecks/multikueue/workload.go: a workload whose worker left the
    configuration is requeued; multikueuecluster.go: the worker's client and garbage collection stop)."""
    return (
        f"worker {worker} leaves the fleet: the manager requeues at once every job admitted there, whose copy keeps running on "
        f"{worker} until deleted there, and no longer sees the copies it made there for pending jobs, which {worker} still admits "
        "(a DWS pool buys capacity for them); drain the worker first (README, fleet Day 2)."
    )


def _object_key(resource: dict[str, Any]) -> tuple[str, str, str] | None:
    """A Kubernetes object's identity in its cluster: kind, namespace and name (None for anything else)."""
    if not resource["type"].startswith("kubernetes:") or not resource.get("custom") or resource["type"].startswith("kubernetes:helm.sh/"):
        return None
    meta = (resource.get("inputs") or {}).get("metadata") or {}
    if not meta.get("name"):
        return None
    return (resource["type"].split(":")[-1], meta.get("namespace") or "", meta["name"])


def _bytes_fate(resource: dict[str, Any]) -> str:
    """What happens to a data store's bytes when the engine deletes it."""
    if resource["type"] == semantics.PV:
        return "the volume is a pointer; Kubernetes keeps it while its claim is bound (pv-protection), and pods that start afterwards mount what the new one points at"
    if (resource.get("options") or {}).get("retainOnDelete"):
        return "its bytes stay in the project, outside the stack and still billed (retainOnDelete)"
    if resource["type"] == semantics.BUCKET and not (resource.get("inputs") or {}).get("forceDestroy"):
        return "its delete fails while it holds objects (no forceDestroy)"
    return "its bytes are deleted (`storage.disposable`)"


def _replacement(change: ResourceChange, before: dict[str, Any], after: dict[str, Any]) -> str:
    order = "deleted before its replacement is created" if semantics.delete_before_replace(after) else "its replacement is created before it is deleted"
    reasons = sorted({c.reason for c in change.changes if c.effect == REPLACE and c.reason})
    text = f"{_paths(change, REPLACE)} cannot change in place: {order}" + (f" ({'; '.join(reasons)})" if reasons else "") + "."
    if (before.get("options") or {}).get("protect") and (after.get("options") or {}).get("protect"):
        text += " It is protected: `pulumi up` will be refused (turn protect off first, e.g. `trainstack:cluster.deletionProtection: false`)."
    return text


def _safety(what: str, before: dict[str, Any], after: dict[str, Any]) -> list[Finding]:
    """Protection turned off: protect, retainOnDelete, or a bucket's forceDestroy turned on."""
    was, now = before.get("options") or {}, after.get("options") or {}
    out = []
    if was.get("protect") and not now.get("protect"):
        out.append(Finding(SAFETY, what, "`protect` turned off: `pulumi destroy` and a replacement of it are no longer refused."))
    if was.get("retainOnDelete") and not now.get("retainOnDelete"):
        out.append(Finding(SAFETY, what, "`retainOnDelete` turned off: deleting or replacing it now deletes it, with its data."))
    if after["type"] == semantics.BUCKET and (after.get("inputs") or {}).get("forceDestroy") and not (before.get("inputs") or {}).get("forceDestroy"):
        out.append(Finding(SAFETY, what, "`forceDestroy` turned on: deleting the bucket deletes every object in it."))
    return out


def _shrink(what: str, before: dict[str, Any], after: dict[str, Any]) -> list[Finding]:
    """A node pool made smaller: GKE removes nodes, whichever pods run on them (validate keeps a
    stack's own job within its pool; jobs of other stacks on a platform are not in this plan)."""
    was, now = semantics.pool_nodes(before), semantics.pool_nodes(after)
    if was is None or now is None or now >= was:
        return []
    return [Finding(JOB, what, f"shrinks from {was} to {now} nodes: GKE removes {was - now}, with whatever job pods run on them (a JobSet restarts whole).")]


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


def _ref(resource: dict[str, Any]) -> ResourceRef:
    return ResourceRef(resource["urn"], resource["type"], resource["name"])


def _ordered(urns: Iterable[str], resources: dict[str, dict[str, Any]]) -> list[str]:
    return sorted(urns, key=lambda u: (resources[u]["type"], resources[u]["name"], u))


def _delta(base: Totals, head: Totals) -> Totals:
    return Totals(
        head.gpu_nodes - base.gpu_nodes,
        head.gpus - base.gpus,
        round(head.usd_at_max - base.usd_at_max, 2),
        round(head.usd_at_min - base.usd_at_min, 2),
        round(head.memory_gb - base.memory_gb, 2) if head.memory_gb is not None and base.memory_gb is not None else None,
        first_step_s=round(head.first_step_s - base.first_step_s, 1) if head.first_step_s is not None and base.first_step_s is not None else None,
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
        f"{catalog.PRICES_AS_OF}. Replacements follow the pinned providers' ForceNew fields (app/review/replacement_data.py), "
        "their diff customisations and the engine's ignoreChanges, replaceOnChanges and dependent replacements; "
        "what it cannot know is in the README (Review, benchmark, measure)._"
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
    replaced = [c for c in diff.effective if c.replaces]
    in_place = len(diff.effective) - len(replaced)
    counts = f"{len(diff.added)} to add, {in_place} to change in place, {len(replaced)} to replace, {len(diff.removed)} to remove"
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
    if diff.effective:
        yield ""
        yield "**Changed**"
        yield ""
        for change in diff.effective:
            yield from _change_markdown(change)
    ignored = [c for c in diff.changed if c.effect == IGNORED]
    if ignored:
        yield ""
        yield "**No-ops** (every change is under the resource's `ignoreChanges`: the engine keeps the live value)"
        yield ""
        for change in ignored:
            yield from _change_markdown(change)


def _warnings(diff: StackDiff) -> Iterator[str]:
    base, head = diff.base, diff.head
    for finding in diff.findings:
        yield f"- {_CLASS_FLAG[finding.cls]} {finding.resource}: {finding.text}"
    if head is not None and head.fits is False and (base is None or base.fits is not False):
        yield f"- ⚠️ **NO LONGER FITS**: the job needs about {head.memory_gb} GB per GPU, more than the GPU holds with headroom (`trainstack validate` says what would help)."


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
    if base.first_step_s != head.first_step_s:
        change = "" if delta.first_step_s is None else f"{delta.first_step_s / 60:+.1f} min"
        yield f"| modelled time to first step | {_minutes(base.first_step_s)} | {_minutes(head.first_step_s)} | {change} |"


def _minutes(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds / 60:.1f} min"


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
        base_usd, head_usd = (b.usd_at_max if b else 0.0), (h.usd_at_max if h else 0.0)
        if base_usd is None or head_usd is None:
            yield f"| pool `{name}` | {cells[0]} | {cells[1]} | {nodes:+d} nodes, cost not priced |"
            continue
        usd = head_usd - base_usd
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
    flag = {FAILS: " ❌ APPLY FAILS", REPLACE: " ⚠️ REPLACES", RECREATE_NODES: " ⚠️ RECREATES NODES"}.get(change.effect, "")
    yield f"- `{change.resource.type}` **{change.resource.name}**{flag}"
    for prop in change.changes[:_CHANGES_SHOWN]:
        if prop.kind == "identity":  # no property of its own: the replacement's name is taken
            yield f"  - the apply fails: {prop.reason}"
            continue
        note = {REPLACE: " (forces replacement)", RECREATE_NODES: " (recreates nodes)", IGNORED: " (ignored)", FAILS: " (the apply fails)"}.get(prop.effect, "")
        if prop.reason:
            note += f": {prop.reason}"
        kind = {"option": " (resource option)", "provider": "", "cascade": ""}.get(prop.kind, "")
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
