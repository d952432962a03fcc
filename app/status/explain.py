"""Each training job of a cluster or a fleet, explained: a Finding per job.

A job is a JobSet or an Indexed Job (trainstack's two controllers). Its Workload is the one it
controls (Kueue v0.19.2 pkg/controller/jobframework: SetControllerReference). In the order Kueue
and the controllers apply them: a finished or failed job; a job Kueue has not made a Workload for;
a Workload not admitted (queued.py); an admitted one, its pods (pods.py).

On a fleet, the manager's Workload names the worker that admitted the job (`status.clusterName`)
or the workers it is offered to (`status.nominatedClusterNames`), and the job is explained there;
the manager's JobSet carries the worker's status once it has finished (the copy on the worker is
deleted then)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from trainstack.app.status import pods, queued
from trainstack.app.status import sources as src
from trainstack.app.status.facts import QUEUED, Finding, Why, brief, condition, is_true, name_of, namespace_of
from trainstack.app.status.snapshot import Cluster, Fleet, meta

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
MANAGED_BY = "app.kubernetes.io/managed-by"
JOB_KINDS = ("JobSet", "Job")


def jobs(cluster: Cluster, name: str | None = None) -> list[dict[str, Any]]:
    """The training jobs, by namespace and name: the JobSets and the Jobs no JobSet controls (a
    JobSet's children are its own) that are submitted to a Kueue queue, made by trainstack, or
    have a Workload (other Jobs of the cluster are not training jobs); with `name`, those so named."""
    found = list(cluster.of("JobSet"))
    found += [j for j in cluster.of("Job") if not any(r.get("kind") == "JobSet" and r.get("controller") for r in meta(j).get("ownerReferences") or [])]
    chosen = [j for j in found if name_of(j) == name] if name is not None else [j for j in found if _training(cluster, j)]
    return sorted(chosen, key=lambda j: (namespace_of(j), name_of(j)))


def _training(cluster: Cluster, job: dict[str, Any]) -> bool:
    labels = meta(job).get("labels") or {}
    return QUEUE_LABEL in labels or labels.get(MANAGED_BY) == "trainstack" or bool(cluster.owned_by("Workload", job))


def workload_of(cluster: Cluster, job: dict[str, Any]) -> dict[str, Any] | None:
    owned = cluster.owned_by("Workload", job)
    # Several only while a job is replaced: the newest is the job's.
    return max(owned, key=lambda w: str(meta(w).get("creationTimestamp", "")), default=None)


def explain(cluster: Cluster, job: dict[str, Any], now: datetime) -> Finding:
    """One job on one cluster."""
    return _finding(job, _why(cluster, job, now))


def _why(cluster: Cluster, job: dict[str, Any], now: datetime) -> Why:
    if done := pods.finished(cluster, job, now):
        return done
    workload = workload_of(cluster, job)
    if workload is None:
        return _unmanaged(job)
    if not is_true(workload, src.ADMITTED):
        return queued.explain(cluster, workload, now)
    why = pods.admitted(cluster, job, workload, now)
    why.facts["workload"] = name_of(workload)
    return why


def _unmanaged(job: dict[str, Any]) -> Why:
    queue = (meta(job).get("labels") or {}).get(QUEUE_LABEL)
    if queue is None:
        return Why(
            QUEUED,
            f"Kueue does not manage it: it has no {QUEUE_LABEL} label",
            "submit it with the label naming the platform's LocalQueue",
            facts={"queue": None},
        )
    return Why(
        QUEUED,
        f"Kueue has not created a Workload for it (queue {queue})",
        "check Kueue runs (kubectl get pods -n kueue-system) and manages JobSets in this namespace",
        facts={"queue": queue},
    )


def _finding(job: dict[str, Any], why: Why, worker: str | None = None) -> Finding:
    return Finding(name_of(job), namespace_of(job), str(job.get("kind")), why.state, why.cause, why.fix, why.detail, why.facts, worker)


def explain_all(source: Cluster | Fleet, now: datetime, name: str | None = None) -> list[Finding]:
    """Every job of a cluster, or every job a fleet's manager holds, each explained where it runs."""
    if isinstance(source, Cluster):
        return [explain(source, job, now) for job in jobs(source, name)]
    return [explain_on_fleet(source, job, now) for job in jobs(source.manager, name)]


def explain_on_fleet(fleet: Fleet, job: dict[str, Any], now: datetime) -> Finding:
    manager = fleet.manager
    if done := pods.finished(manager, job, now):
        return _finding(job, done, _worker_of(manager, job))
    workload = workload_of(manager, job)
    if workload is None:
        return _finding(job, _unmanaged(job))
    status = workload.get("status") or {}
    facts: dict[str, Any] = {"managerWorkload": name_of(workload), "managerConditions": [brief(c) for c in status.get("conditions") or []]}
    worker = status.get("clusterName")
    if worker:
        return _on_worker(fleet, job, worker, now, facts)
    nominated = status.get("nominatedClusterNames") or []
    if nominated:
        findings = [_on_worker(fleet, job, w, now, facts) for w in nominated]
        lines = [f"{f.worker}: {f.cause}" for f in findings]
        return Finding(
            name_of(job),
            namespace_of(job),
            str(job.get("kind")),
            QUEUED,
            f"offered to worker(s) {', '.join(nominated)}; none has admitted it: " + "; ".join(lines),
            findings[0].fix if len({f.fix for f in findings}) == 1 else "see each worker's fix in the detail",
            [f"{f.worker}: fix: {f.fix}" for f in findings] + [d for f in findings for d in f.detail],
            facts | {"nominated": nominated, "workers": {f.worker: f.to_dict() for f in findings}},
        )
    why = queued.explain(manager, workload, now) if not is_true(workload, src.QUOTA_RESERVED) else queued.checks(manager, workload, now)
    why.facts |= facts
    return _finding(job, why)


def _on_worker(fleet: Fleet, job: dict[str, Any], worker: str, now: datetime, facts: dict[str, Any]) -> Finding:
    facts = facts | {"worker": worker}
    unreachable = _unreachable(fleet.manager, worker)
    cluster = fleet.workers.get(worker)
    if cluster is None:
        why = Why(
            QUEUED,
            f"on worker {worker}, whose objects the dump lacks" + (f"; the manager cannot reach it: {unreachable}" if unreachable else ""),
            f"add worker-{worker}.json to the dump (trainstack status --dump reads every worker of the fleet)",
            facts=facts,
        )
        return _finding(job, why, worker)
    copy = cluster.get(str(job.get("kind")), name_of(job), namespace_of(job))
    if copy is None:
        why = Why(QUEUED, f"worker {worker} holds no copy of the job yet", "nothing to do: MultiKueue creates it when it dispatches the job", facts=facts)
        return _finding(job, why, worker)
    found = explain(cluster, copy, now)
    found.worker = worker
    found.cause = f"on worker {worker}: {found.cause}"
    if unreachable:
        found.detail.append(f"the manager reports worker {worker} inactive: {unreachable}")
    found.facts = facts | found.facts
    return found


def _unreachable(manager: Cluster, worker: str) -> str | None:
    """The MultiKueueCluster's Active=False message (Kueue v0.19.2 multikueuecluster.go), if so."""
    cluster = manager.get("MultiKueueCluster", worker)
    active = condition(cluster, "Active") if cluster else None
    if active is not None and active.get("status") != "True":
        return f"{active.get('reason', '')}: {active.get('message', '')}"
    return None


def _worker_of(manager: Cluster, job: dict[str, Any]) -> str | None:
    workload = workload_of(manager, job)
    return ((workload or {}).get("status") or {}).get("clusterName")
