"""Why an admitted job is not running, how a running one is doing, and why a job failed: from
its pods' container states, the kubelet's, scheduler's and autoscaler's events, the nodes' taints
and labels, the JobSet's failure policy decision and the log tails the dump holds.
The vocabulary and its sources: sources.py.

The preflight hook: a container (init or not) whose name contains PREFLIGHT is a node check
run before training; when it fails, the job is reported as stopped (or, once JobSet gives up,
failed) by its preflight, with the container's termination message and the last lines of its log;
a node taint whose key contains PREFLIGHT marks a node that failed it. Any preflight that names its
containers and taints so is recognised; nothing else about it is assumed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from trainstack.app.metrics import mfu
from trainstack.app.status import sources as src
from trainstack.app.status.facts import ADMITTED, FAILED, FINISHED, RUNNING, Why, ago, brief, condition, is_true, name_of, namespace_of, parse_time, utc
from trainstack.app.status.snapshot import Cluster, meta
from trainstack.core.errors import TrainstackError

PREFLIGHT = "preflight"
LOG_LINES = 3  # lines of a log tail quoted in a cause's detail

VOLUME_FIXES = {
    "gcsfuse": "check the bucket exists and the job's Kubernetes service account may read it (Workload Identity: roles/storage.objectUser), and the gcsfuse sidecar's log",
    "lustre": "check the Managed Lustre instance is READY, in the cluster's VPC and zone, and the Lustre CSI driver runs on the node",
    "filestore": "check the Filestore instance is READY and reachable from the cluster's VPC (its IP range and firewall)",
}


def pods_of(cluster: Cluster, job: dict[str, Any]) -> list[dict[str, Any]]:
    label = src.JOBSET_NAME_LABEL if job.get("kind") == "JobSet" else src.JOB_NAME_LABEL
    return [p for p in cluster.of("Pod") if namespace_of(p) == namespace_of(job) and (meta(p).get("labels") or {}).get(label) == name_of(job)]


def statuses(pod: dict[str, Any]) -> list[dict[str, Any]]:
    status = pod.get("status") or {}
    return [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]


def terminated(container: dict[str, Any]) -> dict[str, Any] | None:
    """The container's last termination: now, or the one before its restart."""
    return (container.get("state") or {}).get("terminated") or (container.get("lastState") or {}).get("terminated")


# ---------------------------------------------------------------------------------------------
# Admitted


def admitted(cluster: Cluster, job: dict[str, Any], workload: dict[str, Any] | None, now: datetime) -> Why:
    """Admitted by Kueue: running when every pod is, else the first thing holding it back."""
    pods = pods_of(cluster, job)
    expected = sum(int(ps.get("count", 0)) for ps in ((workload or {}).get("spec") or {}).get("podSets") or []) or len(pods)
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    facts: dict[str, Any] = {"pods": {"expected": expected, "found": len(pods), "running": len(running)}}
    for check in (_preflight, _image, _volumes, _crash, _unschedulable, _pulling):
        if why := check(cluster, pods, now):
            why.facts = facts | why.facts
            return why
    if pods and len(running) >= expected and (workload is None or is_true(workload, src.PODS_READY) or all(_ready(p) for p in running)):
        return _running(cluster, job, workload, pods, now, facts)
    if not pods:
        suspended = (job.get("spec") or {}).get("suspend")
        return Why(
            ADMITTED,
            "admitted by Kueue; its pods are not created yet" + (" (the job is still suspended)" if suspended else ""),
            "nothing to do: the JobSet controller creates them within seconds; if not, check the jobset-controller-manager's log",
            facts=facts,
        )
    return Why(ADMITTED, f"{len(running)} of {expected} pods running", "nothing to do yet: the rest are starting", facts=facts)


def _ready(pod: dict[str, Any]) -> bool:
    return is_true(pod, "Ready")


def _preflight(cluster: Cluster, pods: list[dict[str, Any]], now: datetime) -> Why | None:
    for pod in pods:
        for container in statuses(pod):
            if verdict := preflight_verdict(cluster, pod, container):
                cause, fix, facts = verdict
                return Why(ADMITTED, cause, fix, facts=facts)
    return None


def preflight_verdict(cluster: Cluster, pod: dict[str, Any], container: dict[str, Any]) -> tuple[str, str, dict[str, Any]] | None:
    """A preflight container that failed (or keeps failing): what it said, and the fix."""
    if PREFLIGHT not in str(container.get("name", "")):
        return None
    ended = terminated(container)
    waiting = (container.get("state") or {}).get("waiting") or {}
    if not ((ended and ended.get("exitCode", 0) != 0) or waiting.get("reason") == src.CRASH_LOOP):
        return None
    node = (pod.get("spec") or {}).get("nodeName", "?")
    message = str((ended or {}).get("message") or "").strip() or _tail(cluster.log(pod))
    code = (ended or {}).get("exitCode")
    return (
        f"the preflight ({container['name']}) failed on node {node}" + (f" (exit {code})" if code is not None else "") + (f": {message}" if message else ""),
        (
            f"the node failed its check: cordon and repair or replace it (kubectl cordon {node}); "
            f"read the check's log: kubectl logs {name_of(pod)} -n {namespace_of(pod)} -c {container['name']}"
        ),
        {"preflight": {"pod": name_of(pod), "node": node, "container": container["name"], "terminated": ended}},
    )


def _image(cluster: Cluster, pods: list[dict[str, Any]], now: datetime) -> Why | None:
    stuck = [(p, c) for p in pods for c in statuses(p) if ((c.get("state") or {}).get("waiting") or {}).get("reason") in src.IMAGE_PULL_FAILURES]
    if not stuck:
        return None
    pod, container = stuck[0]
    waiting = container["state"]["waiting"]
    message = str(waiting.get("message", ""))
    if message.endswith("not found") or "not found" in message or "manifest unknown" in message.lower():
        fix = "push the image or fix its tag (trainstack:image); `trainstack up` builds and pushes an image the stack builds"
    elif any(word in message for word in ("403", "denied", "Forbidden", "Unauthorized", "401", "permission")):
        fix = "let the nodes' service account read the registry: grant it roles/artifactregistry.reader on the repository"
    else:
        fix = "check the image name and that the nodes reach the registry (Private Google Access or Cloud NAT)"
    nodes = sorted({(p.get("spec") or {}).get("nodeName", "?") for p, _ in stuck})
    return Why(
        ADMITTED,
        f"{waiting.get('reason')}: image {container.get('image', '?')} cannot be pulled on {len(stuck)} container(s): {message}",
        fix,
        detail=[f"nodes: {', '.join(nodes)}"],
        facts={"image": container.get("image"), "waiting": waiting, "pod": name_of(pod)},
    )


def _volumes(cluster: Cluster, pods: list[dict[str, Any]], now: datetime) -> Why | None:
    for pod in pods:
        if (pod.get("status") or {}).get("phase") != "Pending":
            continue
        failed = [e for e in cluster.events("Pod", name_of(pod), namespace_of(pod)) if e.get("reason") == src.FAILED_MOUNT]
        if failed:
            message = str(failed[-1].get("message", ""))
            kind = next(
                (
                    k
                    for k, words in (("gcsfuse", ("gcsfuse",)), ("lustre", ("lustre",)), ("filestore", ("filestore", "nfs")))
                    if any(w in message.lower() for w in words)
                ),
                None,
            )
            affected = sum(1 for p in pods if any(e.get("reason") == src.FAILED_MOUNT for e in cluster.events("Pod", name_of(p), namespace_of(p))))
            return Why(
                ADMITTED,
                f"a volume does not mount on {affected} pod(s)" + (f" ({kind})" if kind else "") + f": {message}",
                VOLUME_FIXES.get(kind or "", "check the volume's PersistentVolumeClaim is Bound and its storage reachable (kubectl describe pvc)"),
                facts={"pod": name_of(pod), "event": _event(failed[-1]), "storage": kind},
            )
    return None


def _crash(cluster: Cluster, pods: list[dict[str, Any]], now: datetime) -> Why | None:
    for pod in pods:
        for container in statuses(pod):
            if ((container.get("state") or {}).get("waiting") or {}).get("reason") != src.CRASH_LOOP:
                continue
            ended = terminated(container) or {}
            return Why(
                ADMITTED,
                f"container {container.get('name')} of pod {name_of(pod)} keeps crashing ({_ending(ended)}; {container.get('restartCount', 0)} restarts)",
                _fix_for(ended, cluster.log(pod), name_of(pod), namespace_of(pod)),
                detail=_log_detail(cluster.log(pod)),
                facts={"pod": name_of(pod), "terminated": ended},
            )
    return None


def _unschedulable(cluster: Cluster, pods: list[dict[str, Any]], now: datetime) -> Why | None:
    pending = [p for p in pods if (condition(p, "PodScheduled") or {}).get("reason") == "Unschedulable"]
    if not pending:
        return None
    pod = pending[0]
    message = str((condition(pod, "PodScheduled") or {}).get("message", ""))
    events = cluster.events("Pod", name_of(pod), namespace_of(pod))
    pool = ((pod.get("spec") or {}).get("nodeSelector") or {}).get(src.NODE_POOL_LABEL)
    nodes = [n for n in cluster.of("Node") if pool is None or (meta(n).get("labels") or {}).get(src.NODE_POOL_LABEL) == pool]
    ready = [n for n in nodes if is_true(n, "Ready")]
    facts: dict[str, Any] = {"unschedulable": len(pending), "scheduler": message, "nodePool": pool, "nodes": {"ready": len(ready), "needed": len(pods)}}
    tainted = _tainted(nodes, pod)
    if tainted:
        cause, fix, detail = tainted
        return Why(ADMITTED, cause, fix, detail=[*detail, message], facts=facts)
    scale = [e for e in events if e.get("reason") == src.TRIGGERED_SCALE_UP]
    if scale:
        groups = [
            f"{m['group'].rsplit('/', 1)[-1]} {m['current']}->{m['new']} (max {m['max']})" for m in src.SCALE_UP.finditer(str(scale[-1].get("message", "")))
        ]
        since = parse_time(scale[0].get("firstTimestamp") or scale[0].get("lastTimestamp"))
        return Why(
            ADMITTED,
            f"nodes scaling up: {len(ready)} of {len(pods)} ready"
            + (f"; {', '.join(groups)}" if groups else "")
            + (f", for {ago(since, now)}" if since else ""),
            "nothing to do: a GPU node takes minutes to boot and get its GPUs ready; waitForPodsReady evicts the job if it takes longer than its timeout",
            facts=facts | {"scaleUp": _event(scale[-1])},
        )
    refused = [e for e in events if e.get("reason") == src.NOT_TRIGGER_SCALE_UP]
    if refused:
        return Why(
            ADMITTED,
            f"{len(pending)} pod(s) cannot be scheduled and the autoscaler will not add nodes: {refused[-1].get('message', '')}",
            f"the pool is at its maximum or no node of it would fit the pods: raise the GPU pool's size, or check the pods' requests against the machine; scheduler: {message}",
            facts=facts | {"notTriggerScaleUp": _event(refused[-1])},
        )
    return Why(
        ADMITTED, f"{len(pending)} pod(s) cannot be scheduled: {message}", "read the scheduler's reasons above: each names what the nodes lack", facts=facts
    )


def _tainted(nodes: list[dict[str, Any]], pod: dict[str, Any]) -> tuple[str, str, list[str]] | None:
    tolerated = (pod.get("spec") or {}).get("tolerations") or []
    blocking: dict[str, list[str]] = {}
    for node in nodes:
        for taint in (node.get("spec") or {}).get("taints") or []:
            if taint.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(tolerated, taint):
                blocking.setdefault(str(taint.get("key")), []).append(name_of(node))
    terminating = [name_of(n) for n in nodes if _terminating(n)]
    maintenance = _maintenance(nodes)
    if not blocking and not terminating:
        return None
    detail = [f"taint {key}: {', '.join(names)}" for key, names in blocking.items()] + maintenance
    if terminating:
        return (
            f"{len(terminating)} node(s) are being terminated by GKE ({src.IMPENDING_TERMINATION_TAINT}: host maintenance or preemption): {', '.join(terminating)}",
            "wait: the pods are placed once the node is replaced (spot and flex-start nodes) or back from maintenance (the time in the detail); the JobSet restarts a running job its failure policy allows",
            detail,
        )
    key, names = next(iter(blocking.items()))
    if PREFLIGHT in key:
        return (
            f"{len(names)} node(s) failed the preflight and are tainted {key}: {', '.join(names)}",
            f"repair or replace them (the taint keeps the job off them; replacements come from the pool); once repaired: kubectl taint nodes {names[0]} {key}-",
            detail,
        )
    return (
        f"{len(names)} node(s) carry taint {key} that the pods do not tolerate: {', '.join(names)}",
        f"remove the taint (kubectl taint nodes {names[0]} {key}-) if it is left over, or repair the node that set it",
        detail,
    )


def _terminating(node: dict[str, Any]) -> bool:
    return any(t.get("key") == src.IMPENDING_TERMINATION_TAINT for t in (node.get("spec") or {}).get("taints") or [])


def _tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for t in tolerations:
        if t.get("effect") not in (None, "", taint.get("effect")):
            continue
        if t.get("operator") == "Exists" and t.get("key") in (None, "", taint.get("key")):
            return True
        if t.get("key") == taint.get("key") and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _maintenance(nodes: list[dict[str, Any]]) -> list[str]:
    lines = []
    for node in nodes:
        stamp = (meta(node).get("labels") or {}).get(src.SCHEDULED_MAINTENANCE_LABEL)
        if stamp and str(stamp).isdigit():
            lines.append(f"node {name_of(node)}: maintenance scheduled at {utc(datetime.fromtimestamp(int(stamp), UTC))}")
    return lines


def _pulling(cluster: Cluster, pods: list[dict[str, Any]], now: datetime) -> Why | None:
    pulling: dict[str, datetime | None] = {}
    image = ""
    for pod in pods:
        events = cluster.events("Pod", name_of(pod), namespace_of(pod))
        if any(e.get("reason") == src.PULLING for e in events) and not any(e.get("reason") == src.PULLED for e in events):
            first = next(e for e in events if e.get("reason") == src.PULLING)
            pulling[(pod.get("spec") or {}).get("nodeName", "?")] = parse_time(first.get("firstTimestamp") or first.get("lastTimestamp"))
            image = str(first.get("message", "")).removeprefix("Pulling image ").strip('"')
    if not pulling:
        return None
    oldest = min((t for t in pulling.values() if t), default=None)
    return Why(
        ADMITTED,
        f"pulling image {image} on {len(pulling)} node(s) for {ago(oldest, now)}: {', '.join(sorted(pulling))}",
        "nothing to do: a large training image takes minutes; image streaming or a smaller image makes it shorter",
        facts={"pulling": sorted(pulling), "image": image},
    )


# ---------------------------------------------------------------------------------------------
# Running


def _running(cluster: Cluster, job: dict[str, Any], workload: dict[str, Any] | None, pods: list[dict[str, Any]], now: datetime, facts: dict[str, Any]) -> Why:
    ready = condition(workload, src.PODS_READY) if workload else None
    started = parse_time((ready or {}).get("lastTransitionTime")) or min(
        (t for p in pods if (t := parse_time((p.get("status") or {}).get("startTime")))), default=None
    )
    restarts = int((job.get("status") or {}).get("restarts", 0))
    container_restarts = sum(int(c.get("restartCount", 0)) for p in pods for c in statuses(p))
    cause = f"running since {utc(started)} ({ago(started, now)}); JobSet restarts {restarts}, container restarts {container_restarts}"
    detail: list[str] = []
    first = leader(pods)
    log = cluster.log(first) if first else None
    rate = _step_rate(log)
    if rate:
        cause += f"; step {rate['step']} at {rate['seconds']:.2f} s/step"
    elif log is None:
        detail.append("step rate: no log of the leader pod in the dump")
    if log and (errors := _nccl(log)):
        detail += [f"NCCL: {line}" for line in errors[-LOG_LINES:]]
    on = {(p.get("spec") or {}).get("nodeName") for p in pods}
    nodes = [n for n in cluster.of("Node") if name_of(n) in on]
    detail += [f"node {name_of(n)} is being terminated ({src.IMPENDING_TERMINATION_TAINT})" for n in nodes if _terminating(n)] + _maintenance(nodes)
    return Why(
        RUNNING,
        cause,
        "nothing to do",
        detail=detail,
        facts=facts | {"since": utc(started), "restarts": restarts, "containerRestarts": container_restarts, "stepRate": rate, "podsReady": brief(ready)},
    )


def leader(pods: list[dict[str, Any]]) -> dict[str, Any] | None:
    for pod in pods:
        labels = meta(pod).get("labels") or {}
        if labels.get(src.COMPLETION_INDEX_LABEL) == "0" and labels.get(src.JOB_INDEX_LABEL, "0") == "0":
            return pod
    return None


def _step_rate(log: str | None) -> dict[str, Any] | None:
    """The last steps' mean time from the leader's log (NeMo's dllogger or text lines: app/metrics/mfu.py)."""
    if not log:
        return None
    try:
        times = mfu.parse_step_times(log)
    except TrainstackError:
        return None
    last = sorted(times)[-10:]
    return {"step": last[-1], "seconds": sum(times[s] for s in last) / len(last), "steps": len(last)}


# ---------------------------------------------------------------------------------------------
# Failed or finished


def finished(cluster: Cluster, job: dict[str, Any], now: datetime) -> Why | None:
    """A job in a terminal state: what the JobSet's failure policy (or the Job) decided, and the
    failed pods' reasons: OOMKilled, exit codes, NCCL errors and Xids in the log tail."""
    kinds = (src.JOBSET_COMPLETED, src.JOBSET_FAILED) if job.get("kind") == "JobSet" else ("Complete", "Failed")
    done = next((c for k in kinds if (c := condition(job, k)) and c.get("status") == "True"), None)
    if done is None:
        return None
    when = parse_time(done.get("lastTransitionTime"))
    facts: dict[str, Any] = {"condition": brief(done), "terminalState": (job.get("status") or {}).get("terminalState")}
    if done["type"] in (src.JOBSET_COMPLETED, "Complete"):
        return Why(FINISHED, f"completed at {utc(when)} ({done.get('message', '')})", "nothing to do", facts=facts)
    decision = f"{done.get('reason', 'Failed')}: {done.get('message', '')}"
    failed_pod, container = _first_failure(pods_of(cluster, job), done)
    if failed_pod is None:
        return Why(
            FAILED,
            f"failed at {utc(when)}; {decision}",
            "its pods are gone: read the job's events (kubectl get events -n " + namespace_of(job) + ") and the logs your logging keeps",
            facts=facts,
        )
    if verdict := preflight_verdict(cluster, failed_pod, container or {}):
        cause, fix, found = verdict
        return Why(FAILED, f"failed at {utc(when)}: {cause} (JobSet: {decision})", fix, facts=facts | found)
    ended = terminated(container or {}) or {}
    log = cluster.log(failed_pod)
    node = (failed_pod.get("spec") or {}).get("nodeName", "?")
    cause = f"failed at {utc(when)}: pod {name_of(failed_pod)} on node {node}: {_ending(ended)}"
    xids = sorted({m["code"] for m in src.XID.finditer(log or "")})
    nccl = _nccl(log or "")
    if xids:
        cause += f"; GPU Xid {', '.join(xids)} in its log"
    elif nccl:
        cause += f"; NCCL: {nccl[-1]}"
    cause += f" (JobSet: {decision})"
    return Why(
        FAILED,
        cause,
        _fix_for(ended, log, name_of(failed_pod), namespace_of(failed_pod), node),
        detail=_log_detail(log),
        facts=facts | {"pod": name_of(failed_pod), "node": node, "terminated": ended, "xids": xids, "nccl": nccl[-LOG_LINES:]},
    )


def _first_failure(pods: list[dict[str, Any]], done: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The pod the failure policy names (its first failed job), else any failed pod, and its failed container."""
    named = src.FIRST_FAILED_JOB.search(str(done.get("message", "")))
    ordered = sorted(pods, key=lambda p: (named is None or (meta(p).get("labels") or {}).get(src.JOB_NAME_LABEL) != named["job"], name_of(p)))
    for pod in ordered:
        for container in statuses(pod):
            ended = terminated(container)
            if ended and (ended.get("exitCode", 0) != 0 or ended.get("reason") == src.OOM_KILLED):
                return pod, container
    return None, None


def _ending(ended: dict[str, Any]) -> str:
    if ended.get("reason") == src.OOM_KILLED:
        return f"OOMKilled (exit {ended.get('exitCode', 137)})"
    return f"exit code {ended.get('exitCode', '?')}" + (f" ({ended['reason']})" if ended.get("reason") and ended.get("reason") != "Error" else "")


def _fix_for(ended: dict[str, Any], log: str | None, pod: str, namespace: str, node: str = "?") -> str:
    if ended.get("reason") == src.OOM_KILLED:
        return "the container ran out of host memory: raise its memory request/limit or lower data-loader workers and host-side buffers"
    if xids := sorted({m["code"] for m in src.XID.finditer(log or "")}):
        return f"GPU Xid {', '.join(xids)} on node {node}: a GPU or driver fault; cordon the node and let the job restart on another (kubectl cordon {node})"
    if _nccl(log or ""):
        return "NCCL failed between ranks: check the GPUDirect NICs and networks of the nodes, and that every rank reached rendezvous (the first rank to fail names its peer)"
    return f"read its log: kubectl logs {pod} -n {namespace} --previous"


def _nccl(log: str) -> list[str]:
    return [m.group(0).strip() for m in src.NCCL_ERROR.finditer(log)]


def _tail(log: str | None) -> str:
    return " | ".join(line.strip() for line in (log or "").strip().splitlines()[-LOG_LINES:])


def _log_detail(log: str | None) -> list[str]:
    return [f"log: {line}" for line in (log or "").strip().splitlines()[-LOG_LINES:]]


def _event(event: dict[str, Any]) -> dict[str, Any]:
    return {k: event.get(k) for k in ("reason", "message", "count", "firstTimestamp", "lastTimestamp") if event.get(k) is not None}
