"""A plan's summary for people (table, Markdown) and machines (JSON)."""

from __future__ import annotations

import json
from pathlib import Path

from trainstack.app.plan.cost import PoolSize
from trainstack.app.plan.plan import Plan
from trainstack.core import catalog


def _rows(plan: Plan) -> list[tuple[str, str]]:
    if plan.job is not None:
        return _job_rows(plan, plan.job)
    cost = plan.cost
    gpu_pools = [p for p in cost.pools if p.gpus_per_node]
    usd = f"${cost.max_usd:,.2f}"
    if cost.min_usd != cost.max_usd:
        usd = f"${cost.min_usd:,.2f} (scaled in) to ${cost.max_usd:,.2f} (full size)"
    return [
        ("resources", str(len(plan.resources))),
        ("GPU nodes", str(cost.gpu_nodes)),
        ("GPUs", str(cost.gpus)),
        ("CPU nodes", str(cost.cpu_nodes)),
        ("est. cost per hour", f"{usd} ({_price_basis(cost.pools)}, an estimate){_not_priced(cost.not_priced)}"),
        *((f"  pool {p.name}", _pool(p)) for p in gpu_pools if len(gpu_pools) > 1),
        *((("GPU memory", _memory(plan.memory)),) if plan.memory else ()),
        *(("preflight", f"{job}: {entry['summary'] if entry else 'off'}") for job, entry in (plan.preflight or {}).items()),
        *((("fleet workers", _fleet(plan.fleet)),) if plan.fleet is not None else ()),
        *(("admits fleet", _admitted(f)) for f in plan.admitted_fleets() or []),
        ("pulumi destroy", plan.destroy_effect()),
        *(("WARNING", w) for w in plan.warnings()),
    ]


def _admitted(entry: dict) -> str:
    """A fleet this platform admits: its manager's egress, or what makes it known."""
    if entry["egress"]:
        return f"{entry['stack']}: its manager's egress {', '.join(entry['egress'])}, read from the fleet stack at each up"
    return f"{entry['stack']}: no egress yet (the fleet is not deployed): up the fleet, then this stack again"


def _job_rows(plan: Plan, job: dict) -> list[tuple[str, str]]:
    """A workload stack's summary: its job's nodes, GPUs and cost on its platform (the stack makes no pool)."""
    usd = "not priced" if job["usdPerHour"] is None else f"${job['usdPerHour']:,.2f}"
    bound = ", an upper bound" if job.get("priceIsUpperBound") else ""
    return [
        ("resources", str(len(plan.resources))),
        ("job GPU nodes", f"{job['nodes']} x {job['machineType']} of its platform's ({job['capacity']})"),
        ("job GPUs", str(job["gpus"])),
        ("est. cost per hour", f"{usd} while the job runs (its nodes, billed to the platform's project; an estimate{bound})"),
        *((("GPU memory", _memory(plan.memory)),) if plan.memory else ()),
        *((("fleet workers", _fleet(plan.fleet)),) if plan.fleet is not None else ()),
        ("pulumi destroy", plan.destroy_effect()),
        *(("WARNING", w) for w in plan.warnings()),
    ]


def _not_priced(pools: list[PoolSize]) -> str:
    """The pools the estimate leaves out, for want of a list price."""
    return f"; NOT PRICED, no list price: {', '.join(f'{p.name} ({p.max_nodes} x {p.machine_type})' for p in pools)}" if pools else ""


def _price_basis(pools: list[PoolSize]) -> str:
    """Where the figure's prices come from: the list prices, and a billing-catalog snapshot for
    the machines priced from it (A4; spot)."""
    snapshot = sorted({f"{p.machine_type}{' spot' if p.capacity == 'spot' else ''}" for p in pools if p.price_source != catalog.PRICES_SOURCE})
    basis = f"list prices as of {catalog.PRICES_AS_OF}"
    return f"{basis}; {', '.join(snapshot)} from a billing-catalog snapshot" if snapshot else basis


def _pool(pool: PoolSize) -> str:
    """One GPU pool of several: size, capacity and its share of the cost."""
    nodes = f"{pool.max_nodes}" if pool.min_nodes == pool.max_nodes else f"{pool.min_nodes}-{pool.max_nodes}"
    if pool.hourly_usd is None:
        return f"{nodes} x {pool.machine_type}, {pool.capacity}, not priced"
    usd = f"${pool.max_nodes * pool.hourly_usd:,.2f}/h at full size"
    if pool.dws_floor_usd is not None:
        low = pool.max_nodes * pool.dws_floor_usd
        bound = f" (at the on-demand list price: an upper bound; ${low:,.2f}/h at DWS's largest stated discount)"
    elif pool.upper_bound:
        bound = " (at the on-demand list price: an upper bound)"
    elif pool.capacity == "spot":
        bound = " (spot price of a billing-catalog snapshot: it changes up to daily)"
    else:
        bound = ""
    return f"{nodes} x {pool.machine_type}, {pool.capacity}, {usd}{bound}"


def _fleet(candidates: list[dict]) -> str:
    """The worker pools a job on a fleet could run on, in dispatch order, with its cost there."""
    if not candidates:
        return "none can hold the job"

    def usd(c: dict) -> str:
        figure = "not priced" if c["usdPerHour"] is None else f"${c['usdPerHour']:,.2f}/h"
        return f"{figure}, an upper bound" if c.get("priceIsUpperBound") else figure

    return "; ".join(f"{c['worker']}/{c['pool']} ({c['zone']}, {c['capacity']}, {usd(c)})" for c in candidates)


def _memory(memory: dict) -> str:
    fits = "fits" if memory["fits"] else "DOES NOT FIT"
    peak = f" (peak in the {memory['phase']})" if memory.get("phase") else ""
    return f"{memory['total']} of {memory['gpu_memory']} GB per GPU{peak}, {memory['headroom']} GB to spare after headroom ({fits}; estimate)"


def describe(plan: Plan, out: Path, fmt: str) -> str:
    """The summary of `plan`, written to `out`, in `fmt` (table, json or markdown)."""
    summary = plan.summary()
    if fmt == "json":
        return json.dumps({"stack": plan.stack, "out": str(out), "summary": summary, "outputs": plan.outputs}, indent=2, sort_keys=True)
    by_type = summary["byType"]
    if fmt == "markdown":
        lines = [f"### Plan of `{plan.stack}`", "", "| | |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in _rows(plan)]
        lines += ["", "| resource type | count |", "|---|---:|"]
        lines += [f"| `{t}` | {n} |" for t, n in by_type.items()]
        ttfs = ["", plan.first_step.to_markdown()] if plan.first_step else []
        return "\n".join([*lines, "", plan.critical_path.to_markdown(), *ttfs])
    width = max(len(t) for t in by_type) if by_type else 10
    lines = [f"plan of {plan.stack} -> {out}", ""]
    lines += [f"  {k:<20} {v}" for k, v in _rows(plan)]
    lines += ["", f"  {'resource type':<{width}}  count"]
    lines += [f"  {t:<{width}}  {n:>5}" for t, n in by_type.items()]
    ttfs = ["", plan.first_step.to_table()] if plan.first_step else []
    return "\n".join([*lines, "", plan.critical_path.to_table(), *ttfs])
