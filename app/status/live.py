"""Reading a deployed stack's clusters, read-only, as a user with credentials reads them.

Which clusters: a platform or recipe stack's own (its `kubeconfig` output); a workload stack's
platform stack's (or, on a cluster trainstack did not make, the user's kubeconfig context that
`gcloud container clusters get-credentials` names `gke_<project>_<location>_<cluster>`); a fleet's
manager (`kubeconfig`) and each worker (`kubeconfig-<worker>`, infra/fleet_stack.py kubeconfig_output).
Stack outputs come through the Automation API (`pulumi stack output --show-secrets`).

What is read, with kubectl only (`get`, `get --raw`, `logs`: nothing is changed):
`kubectl get <resource> -A -o json` for each resource of snapshot.RESOURCES (a resource the
cluster does not serve, such as ProvisioningRequests where no autoscaler installed them, is
skipped); each ClusterQueue's pending workloads from Kueue's visibility API
(`kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/<cq>/pendingworkloads`,
best effort); the last LOG_TAIL lines of each job's leader pod and of every pod with a failed
or restarting container (`kubectl logs --tail`, best effort)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pulumi.automation.errors import StackNotFoundError

from trainstack.app.deploy import stack_file
from trainstack.app.deploy.stacks import raw_stack_config, stack_names
from trainstack.app.ops import automation
from trainstack.app.status import pods as podinfo
from trainstack.app.status.explain import jobs
from trainstack.app.status.snapshot import LOGS_SUFFIX, MANAGER, RESOURCES, VISIBILITY_API, WORKER_PREFIX, Cluster, Fleet, StatusError, checked_items, meta
from trainstack.infra import fleet_stack as fleets
from trainstack.infra.contract import KUBECONFIG_OUTPUT

LOG_TAIL = 200
Runner = Callable[..., subprocess.CompletedProcess[str]]
Outputs = Callable[[str, Path], dict[str, Any]]


@dataclass(frozen=True)
class Access:
    """How kubectl reaches one cluster: a kubeconfig from a stack output, or the user's own
    kubeconfig at `context`."""

    label: str
    kubeconfig: str | None = None
    context: str | None = None


@dataclass(frozen=True)
class Target:
    """A stack's clusters (a fleet: the manager and its workers) and the job it runs, if any."""

    stack: str
    cluster: Access
    workers: dict[str, Access] = field(default_factory=dict)
    job: str | None = None


def stack_outputs(stack: str, root: Path) -> dict[str, Any]:
    """A deployed stack's outputs, secrets shown (the Automation API's `stack output`)."""
    automation.require_pulumi()
    try:
        selected: Any = automation.select(stack, root)
        return {name: value.value for name, value in selected.outputs().items()}
    except StackNotFoundError:
        raise StatusError(f"stack {stack!r} has no live cluster: it was never deployed (`trainstack up {stack}`)") from None
    except Exception as exc:  # the CLI failed: not logged in, no backend, a locked or broken state
        raise StatusError(f"stack {stack!r}: its outputs cannot be read: {automation.brief(exc)}") from None


def target(stack: str, root: Path, outputs: Outputs | None = None) -> Target:
    """The clusters `stack` runs on and its job, or StatusError (`outputs`: how stack outputs are
    read, stack_outputs unless given)."""
    outputs = outputs or stack_outputs
    raw = raw_stack_config(stack, root)
    if fleets.is_fleet(raw):
        workers = [w.name for w in fleets.load(stack, raw).fleet.workers]
        found = _reachable(stack, outputs(stack, root), [KUBECONFIG_OUTPUT, *map(fleets.kubeconfig_output, workers)])
        return Target(stack, Access(MANAGER, found[KUBECONFIG_OUTPUT]), {w: Access(w, found[fleets.kubeconfig_output(w)]) for w in workers})
    if stack_file.kind(raw) is stack_file.WORKLOAD:
        config = stack_file.WORKLOAD.load(stack, raw)
        job: str | None = config.workload.name
        existing = config.platform.existing_cluster
        if existing is not None:
            return Target(stack, Access("cluster", context=f"gke_{existing.project}_{existing.location}_{existing.name}"), job=job)
        reference = str(config.platform.stack)
        local = reference.rsplit("/", 1)[-1]
        platform = target(local, root, outputs) if local in stack_names(root) else _plain(reference, root, outputs)
        return Target(stack, platform.cluster, platform.workers, job)
    workload = stack_file.PLATFORM.load(stack, raw).workload
    job = workload.name if workload is not None else None
    return Target(stack, _plain(stack, root, outputs).cluster, job=job)


def _plain(stack: str, root: Path, outputs: Outputs) -> Target:
    found = _reachable(stack, outputs(stack, root), [KUBECONFIG_OUTPUT])
    return Target(stack, Access("cluster", found[KUBECONFIG_OUTPUT]))


def _reachable(stack: str, values: dict[str, Any], names: list[str]) -> dict[str, str]:
    missing = [n for n in names if not isinstance(values.get(n), str) or not values[n]]
    if missing:
        raise StatusError(
            f"stack {stack!r} has no live cluster: no {', '.join(map(repr, missing))} output "
            f"(outputs: {', '.join(sorted(values)) or 'none'}); deploy it with `trainstack up {stack}`"
        )
    return {n: values[n] for n in names}


# ---------------------------------------------------------------------------------------------
# kubectl


class Kubectl:
    """kubectl against one cluster, read-only."""

    def __init__(self, access: Access, folder: Path, run: Runner = subprocess.run) -> None:
        self.access, self.run = access, run
        self.base = ["kubectl"]
        if access.kubeconfig is not None:
            path = folder / f"{access.label}.kubeconfig"
            path.write_text(access.kubeconfig)
            path.chmod(0o600)
            self.base += ["--kubeconfig", str(path)]
        if access.context is not None:
            self.base += ["--context", access.context]

    def call(self, *args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
        try:
            return self.run([*self.base, *args], capture_output=True, text=True, timeout=timeout)
        except FileNotFoundError:
            raise StatusError("kubectl is not installed: gcloud components install kubectl") from None
        except subprocess.TimeoutExpired:
            raise StatusError(f"{self.access.label}: kubectl {' '.join(args[:2])} timed out after {timeout}s") from None

    def snapshot(self) -> Cluster:
        cluster = Cluster(self.access.label)
        for resource in RESOURCES.split(","):
            done = self.call("get", resource, "-A", "-o", "json")
            if done.returncode != 0:
                error = (done.stderr.strip().splitlines() or ["kubectl failed"])[-1]
                if "doesn't have a resource type" in error:
                    continue  # not installed here (e.g. no ProvisioningRequest CRD)
                raise StatusError(f"{self.access.label}: kubectl get {resource} failed: {error}")
            for item in checked_items(_json(done.stdout, f"{self.access.label}: kubectl get {resource}"), f"{self.access.label}: kubectl get {resource}"):
                cluster.objects.setdefault(item["kind"], []).append(item)
        for cq in cluster.of("ClusterQueue"):
            name = meta(cq).get("name", "")
            done = self.call("get", "--raw", f"/apis/{VISIBILITY_API}/clusterqueues/{name}/pendingworkloads")
            if done.returncode == 0:
                summary = _json(done.stdout, f"{self.access.label}: pending workloads of {name}")
                if isinstance(summary, dict):
                    # The answer names no queue: the dump records which it was asked for.
                    summary["metadata"] = {**(summary.get("metadata") or {}), "name": name}
                    cluster.objects.setdefault("PendingWorkloadsSummary", []).append(summary)
        for pod in _logged(cluster):
            done = self.call("logs", meta(pod)["name"], "-n", meta(pod)["namespace"], f"--tail={LOG_TAIL}", "--all-containers=true")
            if done.returncode == 0:
                cluster.logs[(meta(pod)["namespace"], meta(pod)["name"])] = done.stdout
        return cluster


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StatusError(f"{where}: not JSON ({exc.msg})") from None


def _logged(cluster: Cluster) -> list[dict[str, Any]]:
    """The pods whose log tails explain a job: each job's leader and every pod with a container
    that failed or restarted."""
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for job in jobs(cluster):
        members = podinfo.pods_of(cluster, job)
        leader = podinfo.leader(members)
        for pod in [*([leader] if leader else []), *members]:
            failed = any((c.get("restartCount") or 0) > 0 or (podinfo.terminated(c) or {}).get("exitCode", 0) != 0 for c in podinfo.statuses(pod))
            if pod is leader or failed:
                chosen[(meta(pod)["namespace"], meta(pod)["name"])] = pod
    return list(chosen.values())


@contextmanager
def private_folder() -> Iterator[Path]:
    """A folder only this user reads (mode 0700), for kubeconfigs from stack outputs."""
    with tempfile.TemporaryDirectory(prefix="trainstack-status-") as folder:
        yield Path(folder)


def collect(found: Target, run: Runner = subprocess.run) -> Cluster | Fleet:
    """What the target's clusters hold now."""
    with private_folder() as folder:
        main = Kubectl(found.cluster, folder, run).snapshot()
        if not found.workers:
            return main
        return Fleet(main, {name: Kubectl(access, folder, run).snapshot() for name, access in found.workers.items()})


# ---------------------------------------------------------------------------------------------
# Dumps


def write_dump(source: Cluster | Fleet, folder: Path) -> list[Path]:
    """`source` as a dump directory snapshot.load reads back: cluster.json, or manager.json and
    worker-<name>.json; each with its `.logs/<namespace>/<pod>.log` tails."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StatusError(f"--dump {folder}: cannot create it ({exc.strerror or exc})") from None
    if isinstance(source, Cluster):
        return [_write(source, folder / "cluster.json")]
    return [_write(source.manager, folder / f"{MANAGER}.json"), *(_write(c, folder / f"{WORKER_PREFIX}{name}.json") for name, c in source.workers.items())]


def _write(cluster: Cluster, path: Path) -> Path:
    items = [item for kind in sorted(cluster.objects) for item in cluster.objects[kind]]
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}, indent=1) + "\n")
    for (namespace, pod), text in cluster.logs.items():
        log = path.with_suffix(LOGS_SUFFIX) / namespace / f"{pod}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(text)
    return path
