"""The offline plan of a stack: every resource with its inputs, the Kubernetes manifests, and a
summary (resources by type, GPU nodes, GPUs, estimated cost per hour). Rendered deterministically:
the same config gives byte-identical files."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from trainstack.app.deploy.stack_file import JobContext
from trainstack.app.plan import engine, first_step, inputcheck
from trainstack.app.plan.cost import CostEstimate, estimate, gpu_node_hour
from trainstack.app.plan.critical_path import CriticalPath, critical_path
from trainstack.app.plan.recorder import Registration
from trainstack.components.storage import KINDS
from trainstack.core import catalog
from trainstack.core.errors import TrainstackError
from trainstack.infra import fleet_stack as fleet
from trainstack.infra.contract import OUTPUT
from trainstack.infra.stack import ANY_ADDRESS
from trainstack.workloads import fit, preflight

PLAN_FORMAT = 1
_NOT_OBJECTS = ("kubernetes:helm.sh/", "pulumi:providers:")
# What a person calls the resources destroy refuses for or leaves behind.
_KINDS = {
    "gcp:container/cluster:Cluster": "the cluster",
    **{rtype: called for kind in KINDS.values() for rtype, called in kind.kept.items()},
    "gcp:compute/network:Network": "the VPC",
}


class PlanError(TrainstackError):
    """The program registered something a real preview would reject."""


@dataclass(frozen=True)
class Plan:
    """A rendered stack: `resources` are plan.json's resource dicts, sorted by URN."""

    stack: str
    resources: list[dict[str, Any]]
    outputs: dict[str, Any]
    memory: dict[str, Any] | None = None  # the job's GPU memory estimate (workloads.fit.summary)
    fleet: list[dict[str, Any]] | None = None  # a job on a fleet: the worker pools that could take it (fleet_candidates)
    preflight: dict[str, Any] | None = None  # per job, what its preflight runs (workloads.preflight.entries)
    first_step: first_step.FirstStepModel | None = None  # the job's modelled time to first step (first_step.model)
    job: dict[str, Any] | None = None  # a workload stack's job: its nodes, GPUs and cost on its platform's pool (job_figures)

    @cached_property
    def cost(self) -> CostEstimate:
        return estimate(self.resources)

    @cached_property
    def critical_path(self) -> CriticalPath:
        return critical_path(self.resources)

    def _kinds(self, option: str) -> list[str]:
        return sorted({_KINDS.get(r["type"], r["name"]) for r in self.resources if r["options"].get(option)})

    def destroy_effect(self) -> str:
        """What `pulumi destroy` does to this stack, read from the resources' options: Pulumi
        refuses the whole destroy, before deleting anything, if a resource is protected; it
        forgets but leaves a retained one (with its data) in the project."""
        protected = self._kinds("protect")
        if protected:
            return f"refused before anything is deleted: {' and '.join(protected)} is protected (trainstack:cluster.deletionProtection)"
        kept = self._kinds("retainOnDelete")
        if kept:
            listed = kept[0] if len(kept) == 1 else f"{', '.join(kept[:-1])} and {kept[-1]}"
            return f"deletes every resource but leaves {listed} in the project, with the data (trainstack:storage.disposable: false)"
        return "deletes every resource"

    def warnings(self) -> list[str]:
        """What a reviewer should not miss in this plan."""
        found = []
        for r in self.resources:
            blocks = (r["inputs"].get("masterAuthorizedNetworksConfig") or {}).get("cidrBlocks") or []
            if r["type"] == "gcp:container/cluster:Cluster" and any(b.get("cidrBlock") == ANY_ADDRESS for b in blocks):
                found.append(f"the control plane of {r['inputs'].get('name')} accepts connections from any address ({ANY_ADDRESS})")
        return found

    def admitted_fleets(self) -> list[dict[str, Any]] | None:
        """The fleets whose manager this platform's control plane admits (`trainstack:cluster.admitFleets`,
        from its contract), each with the egress CIDRs its plan read from the fleet stack: none yet
        while the fleet is not deployed (`up` this stack again after the fleet's). None: no fleet."""
        terms = self.outputs.get(OUTPUT)
        names = terms.get("admittedFleets") if isinstance(terms, dict) else None
        if not names:
            return None
        blocks = [
            b
            for r in self.resources
            if r["type"] == "gcp:container/cluster:Cluster"
            for b in (r["inputs"].get("masterAuthorizedNetworksConfig") or {}).get("cidrBlocks") or []
        ]
        return [{"stack": n, "egress": [b["cidrBlock"] for b in blocks if b.get("displayName") == fleet.egress_name(n)]} for n in names]

    def summary(self) -> dict[str, Any]:
        return {
            "resources": len(self.resources),
            "byType": dict(sorted(Counter(r["type"] for r in self.resources).items())),
            "cost": self.cost.to_dict(),
            "criticalPath": self.critical_path.to_dict(),
            "destroy": self.destroy_effect(),
            "warnings": self.warnings(),
            "memory": self.memory,
            "preflight": self.preflight,
            **({"fleet": self.fleet} if self.fleet is not None else {}),
            **({"admitsFleets": admitted} if (admitted := self.admitted_fleets()) is not None else {}),
            **({"timeToFirstStep": self.first_step.to_dict()} if self.first_step is not None else {}),
            **({"job": self.job} if self.job is not None else {}),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": PLAN_FORMAT,
            "stack": self.stack,
            "project": engine.PROJECT,
            "resources": self.resources,
            "outputs": self.outputs,
            "summary": self.summary(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def kubernetes_objects(self) -> list[dict[str, Any]]:
        """Every Kubernetes object the stack applies (not Helm releases or providers)."""
        return [r["inputs"] for r in self.resources if r["type"].startswith("kubernetes:") and not r["type"].startswith(_NOT_OBJECTS) and r["custom"]]

    def manifests(self) -> dict[str, str]:
        """`manifests/<kind>-<namespace>-<name>.yaml` -> YAML text, for every Kubernetes object."""
        files: dict[str, str] = {}
        for obj in self.kubernetes_objects():
            meta = obj.get("metadata") or {}
            parts = [obj.get("kind", "object").lower(), meta.get("namespace", ""), meta.get("name", "")]
            files[f"{'-'.join(p for p in parts if p)}.yaml"] = yaml.safe_dump(obj, sort_keys=True)
        return dict(sorted(files.items()))

    def write(self, out: Path) -> list[Path]:
        """Write plan.json and manifests/ under `out` (stale manifests removed); return the files."""
        out.mkdir(parents=True, exist_ok=True)
        manifest_dir = out / "manifests"
        manifest_dir.mkdir(exist_ok=True)
        for stale in manifest_dir.glob("*.yaml"):
            stale.unlink()
        written = [out / "plan.json"]
        written[0].write_text(self.to_json())
        for name, text in self.manifests().items():
            (manifest_dir / name).write_text(text)
            written.append(manifest_dir / name)
        return written


def _resource(reg: Registration) -> dict[str, Any]:
    return {
        "urn": reg.urn,
        "type": reg.type,
        "name": reg.name,
        "custom": reg.custom,
        "parent": reg.parent,
        "provider": reg.provider,
        "dependencies": reg.dependencies,
        "propertyDependencies": reg.property_dependencies,
        "inputs": reg.inputs,
        "options": reg.options,
    }


def resources_of(stack: str, registrations: list[Registration]) -> list[dict[str, Any]]:
    """A mock run's registrations as plan resources, sorted by URN; PlanError listing inputs the
    SDK schemas do not know."""
    problems = inputcheck.check(registrations)
    if problems:
        raise PlanError(f"stack {stack!r} sets inputs the providers do not accept:\n" + "\n".join(f"  - {p}" for p in problems))
    return sorted((_resource(r) for r in registrations), key=lambda r: r["urn"])


def from_rendered(rendered: engine.Rendered) -> Plan:
    """Shape a mock run into a plan, or PlanError listing inputs the SDK schemas do not know."""
    resources = resources_of(rendered.stack, rendered.registrations)
    ctx = rendered.context
    memory = fit.summary(fit.estimate(ctx.workload, ctx.machine)) if ctx.workload else None
    gate = preflight.gate(ctx.workload.preflight, ctx.machine, ctx.workload.nodes) if ctx.workload else None
    started = first_step.model(resources, critical_path(resources), ctx, gate.seconds if gate else 0.0)
    checks = preflight.entries(ctx.workload.name, gate) if ctx.workload else None
    fleet_pools = fleet_candidates(ctx)
    return Plan(rendered.stack, resources, rendered.outputs, memory, fleet_pools, checks, started, job_figures(ctx, fleet_pools))


def fleet_candidates(ctx: JobContext) -> list[dict[str, Any]] | None:
    """For a job on a fleet: each worker pool of its queue that can hold it, in dispatch order,
    with the job's cost per hour there (its nodes at the pool's node-hour price); else None."""
    terms, workload = ctx.contract, ctx.workload
    if terms is None or workload is None or not fleet.of_fleet(terms):
        return None
    found = []
    for pool in fleet.candidates(terms, workload.nodes):
        price, _, upper_bound = gpu_node_hour(catalog.machine(pool["machineType"]), pool["capacity"])
        usd = round(workload.nodes * price, 2) if price is not None else None
        found.append({**pool, "usdPerHour": usd, **({"priceIsUpperBound": True} if upper_bound else {})})
    return found


def job_figures(ctx: JobContext, fleet_pools: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """For a workload stack (it makes no pool of its own): what its job holds of its platform's
    nodes while it runs, and what those nodes cost an hour (at the price of the pool its queue
    tries first; on a fleet, of the first worker pool that can take it); else None."""
    terms, workload = ctx.contract, ctx.workload
    if terms is None or workload is None:
        return None
    machine = ctx.machine
    figures: dict[str, Any] = {"nodes": workload.nodes, "gpus": machine.gpus(workload.nodes), "machineType": machine.name}
    if fleet_pools is not None:
        first = fleet_pools[0] if fleet_pools else None
        usd, capacity, upper = (first["usdPerHour"], first["capacity"], bool(first.get("priceIsUpperBound"))) if first else (None, None, False)
    else:
        pool = (terms.pools or [{}])[0]
        provisioning = pool.get("provisioning", "on-demand")
        capacity = "reservation" if provisioning == "on-demand" and pool.get("reservation", "any") != "none" else provisioning
        price, _, upper = gpu_node_hour(machine, capacity)
        usd = round(workload.nodes * price, 2) if price is not None else None
    return {**figures, "capacity": capacity, "usdPerHour": usd, **({"priceIsUpperBound": True} if upper else {})}


def render(stack: str, raw: dict[str, Any]) -> Plan:
    """Validate, run offline and shape the plan of `stack` with raw config `raw`."""
    return from_rendered(engine.run(stack, raw))
