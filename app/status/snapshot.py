"""What a cluster holds, as `trainstack status` reads it: the objects of one Kubernetes List (as
`kubectl get <kinds> -A -o json` writes it) or of a directory of such files, and the log tails
saved beside them.

Layout of a dump directory (`trainstack status --dump DIR` writes it): one cluster is any set of
`*.json` Lists (merged); a fleet holds `manager.json` and one `worker-<name>.json` per worker,
`<name>` being the worker's MultiKueueCluster name (a dump cannot carry its own cluster's name).
Beside each `X.json` an optional `X.logs/<namespace>/<pod>.log` holds a pod's log tail.

Only the kinds and API versions below are read: a Kueue object of another API version would be
read against the wrong schema, so it is refused, as is any other kind (one line each, StatusError).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainstack.core import catalog
from trainstack.core.errors import TrainstackError

VISIBILITY_API = "visibility.kueue.x-k8s.io/v1beta2"  # Kueue v0.19.2 apis/visibility/v1beta2
PROVISIONING_API = "autoscaling.x-k8s.io/v1"  # cluster-autoscaler apis/provisioningrequest/autoscaling.x-k8s.io/v1

# kind -> the API version read; `kubectl get` lists each kind in its preferred version.
KINDS: dict[str, str] = {
    "Workload": catalog.KUEUE_API,
    "ClusterQueue": catalog.KUEUE_API,
    "LocalQueue": catalog.KUEUE_API,
    "MultiKueueCluster": catalog.KUEUE_API,
    "ProvisioningRequest": PROVISIONING_API,
    "JobSet": catalog.JOBSET_API,
    "Job": "batch/v1",
    "Pod": "v1",
    "Node": "v1",
    "Event": "v1",
    # Not from `kubectl get`: the visibility API's answer for one ClusterQueue
    # (`kubectl get --raw .../clusterqueues/<cq>/pendingworkloads`), named after the queue by the dump.
    "PendingWorkloadsSummary": VISIBILITY_API,
}
# What `kubectl get` is asked for (the resources of the kinds above that it lists).
RESOURCES = "workloads.kueue.x-k8s.io,provisioningrequests.autoscaling.x-k8s.io,clusterqueues,localqueues,jobsets,jobs,pods,nodes,events,multikueueclusters"
MANAGER, WORKER_PREFIX, LOGS_SUFFIX = "manager", "worker-", ".logs"


class StatusError(TrainstackError):
    """Input `trainstack status` cannot read: one line naming the file, the object and the rule."""


@dataclass
class Cluster:
    """The objects of one cluster by kind, and pods' log tails by (namespace, pod)."""

    name: str
    objects: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    logs: dict[tuple[str, str], str] = field(default_factory=dict)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return self.objects.get(kind, [])

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return next((o for o in self.of(kind) if meta(o).get("name") == name and (namespace is None or meta(o).get("namespace") == namespace)), None)

    def owned_by(self, kind: str, owner: dict[str, Any]) -> list[dict[str, Any]]:
        """The objects of `kind` whose controller is `owner` (by UID, else by kind and name)."""
        uid, owner_kind, name = meta(owner).get("uid"), owner.get("kind"), meta(owner).get("name")
        found = []
        for item in self.of(kind):
            for ref in meta(item).get("ownerReferences") or []:
                same = ref.get("uid") == uid if uid and ref.get("uid") else (ref.get("kind") == owner_kind and ref.get("name") == name)
                if same and ref.get("controller") and meta(item).get("namespace") == meta(owner).get("namespace"):
                    found.append(item)
        return found

    def events(self, kind: str, name: str, namespace: str | None) -> list[dict[str, Any]]:
        """Events about one object, oldest first."""
        about = [
            e
            for e in self.of("Event")
            if (e.get("involvedObject") or {}).get("kind") == kind
            and (e.get("involvedObject") or {}).get("name") == name
            and (namespace is None or (e.get("involvedObject") or {}).get("namespace") == namespace)
        ]
        return sorted(about, key=event_time)

    def log(self, pod: dict[str, Any]) -> str | None:
        return self.logs.get((meta(pod).get("namespace", ""), meta(pod).get("name", "")))


@dataclass
class Fleet:
    """A MultiKueue manager and its workers, by their MultiKueueCluster names."""

    manager: Cluster
    workers: dict[str, Cluster]


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    value = obj.get("metadata")
    return value if isinstance(value, dict) else {}


def event_time(event: dict[str, Any]) -> str:
    return str(event.get("lastTimestamp") or event.get("eventTime") or event.get("firstTimestamp") or meta(event).get("creationTimestamp") or "")


def load(path: Path) -> Cluster | Fleet:
    """A dump: one List file (one cluster), or a directory (one cluster, or a fleet)."""
    if path.is_file():
        return _cluster(path.stem, [path])
    if not path.is_dir():
        raise StatusError(f"--from {path}: no such file or directory")
    files = sorted(path.glob("*.json"))
    if not files:
        raise StatusError(f"--from {path}: the directory holds no *.json dump")
    if (path / f"{MANAGER}.json").is_file():
        stray = [f.name for f in files if f.stem != MANAGER and not f.stem.startswith(WORKER_PREFIX)]
        if stray:
            raise StatusError(f"--from {path}: a fleet's directory holds manager.json and worker-<name>.json only, not {', '.join(stray)}")
        workers = {f.stem.removeprefix(WORKER_PREFIX): _cluster(f.stem.removeprefix(WORKER_PREFIX), [f]) for f in files if f.stem.startswith(WORKER_PREFIX)}
        return Fleet(_cluster(MANAGER, [path / f"{MANAGER}.json"]), workers)
    if any(f.stem.startswith(WORKER_PREFIX) for f in files):
        raise StatusError(f"--from {path}: worker-<name>.json without manager.json; a fleet's directory holds both")
    return _cluster(path.name, files)


def _cluster(name: str, files: Iterable[Path]) -> Cluster:
    cluster = Cluster(name)
    for file in files:
        for item in _items(file):
            cluster.objects.setdefault(item["kind"], []).append(item)
        cluster.logs.update(_logs(file.with_suffix(LOGS_SUFFIX)))
    return cluster


def _items(file: Path) -> list[dict[str, Any]]:
    try:
        document = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise StatusError(f"{file}: cannot read it ({exc})") from None
    except json.JSONDecodeError as exc:
        raise StatusError(f"{file}: not JSON ({exc.msg} at line {exc.lineno}); write it with `kubectl get {RESOURCES} -A -o json`") from None
    return checked_items(document, str(file))


def checked_items(document: Any, where: str) -> list[dict[str, Any]]:
    """The items of a Kubernetes List, each of a kind and API version read here, else StatusError."""
    if not isinstance(document, dict) or document.get("kind") != "List" or not isinstance(document.get("items"), list):
        found = document.get("kind") if isinstance(document, dict) else type(document).__name__
        raise StatusError(f"{where}: not a Kubernetes List (kind {found!r}); write it with `kubectl get {RESOURCES} -A -o json`")
    items: list[dict[str, Any]] = []
    for i, item in enumerate(document["items"]):
        if not isinstance(item, dict):
            raise StatusError(f"{where}: items[{i}] is not an object")
        kind, version = item.get("kind"), item.get("apiVersion")
        label = f"{where}: items[{i}] ({kind} {meta(item).get('name', '?')})"
        if kind not in KINDS:
            raise StatusError(f"{label}: trainstack status reads {', '.join(sorted(KINDS))}, not kind {kind!r}")
        if version != KINDS[kind]:
            raise StatusError(
                f"{label}: apiVersion {version!r}; trainstack status reads {kind} as {KINDS[kind]} (Kueue {catalog.KUEUE_CHART.version}, JobSet {catalog.JOBSET_CHART.version})"
            )
        items.append(item)
    return items


def _logs(folder: Path) -> dict[tuple[str, str], str]:
    if not folder.is_dir():
        return {}
    return {(f.parent.name, f.stem): f.read_text(errors="replace") for f in folder.glob("*/*.log")}
