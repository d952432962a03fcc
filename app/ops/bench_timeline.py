"""What `trainstack bench` records for the time to first step (app/metrics/timeline.py): the Pulumi
engine's events during `up` (when the cluster and each GPU pool were created), dumps of the
cluster's nodes, pods and events (one once every pod of the JobSet is ready, while the kubelet's
image-pull events are still there, one when the job has finished), and the leader's log with
kubectl's timestamps; and the comparison with a baseline result.

Engine events come through the Automation API's `on_event` (a `ResOutputsEvent` as each resource's
step completes; its `timestamp` is Unix seconds: pulumi/pulumi sdk/python/lib/pulumi/automation/
events.py EngineEvent). A resource counts as created when its step's op is create or replace.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pulumi.automation import events

from trainstack.app.metrics import timeline
from trainstack.app.plan.cost import NODE_POOL
from trainstack.app.plan.critical_path import CLUSTER, is_gpu_pool
from trainstack.core.errors import ReportError, TrainstackError

Dumper = Callable[[Path], list[dict[str, Any]]]
DUMP_KINDS = "nodes,pods,events"
_CREATED = {events.OpType.CREATE, events.OpType.REPLACE, events.OpType.CREATE_REPLACEMENT}


@dataclass
class EngineRecorder:
    """Collects the engine's marks from `on_event` (called from the SDK's watcher thread)."""

    up_started: float
    cluster: float | None = None
    pools: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def on_event(self, event: events.EngineEvent) -> None:
        done = event.res_outputs_event
        if done is None or done.metadata.op not in _CREATED:
            return
        meta = done.metadata
        inputs = dict((meta.new.inputs if meta.new else None) or {})
        with self._lock:
            if meta.type == CLUSTER:
                self.cluster = float(event.timestamp)
            elif meta.type == NODE_POOL and is_gpu_pool({"inputs": inputs}):
                self.pools[str(inputs.get("name") or meta.urn.rsplit("::", 1)[-1])] = float(event.timestamp)

    def marks(self) -> timeline.EngineMarks:
        with self._lock:
            return timeline.EngineMarks(self.up_started, self.cluster, dict(self.pools))


def kube_dump(kubeconfig: Path) -> list[dict[str, Any]]:
    """`kubectl get nodes,pods,events -A -o json`: the objects, or ReportError."""
    done = subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), "get", DUMP_KINDS, "-A", "-o", "json"], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise ReportError(f"kubectl get {DUMP_KINDS} failed: {(done.stderr.strip().splitlines() or ['no output'])[-1]}")
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise ReportError(f"kubectl get {DUMP_KINDS} wrote no JSON: {exc.msg}") from None
    return timeline.list_items(data, f"kubectl get {DUMP_KINDS}")


def merged(dumps: Iterable[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The objects of several dumps, a later copy of an object (same kind, namespace, name) replacing an earlier one."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for items in dumps:
        for item in items:
            meta = item.get("metadata") or {}
            found[(item["kind"], str(meta.get("namespace", "")), str(meta.get("name", "")))] = item
    return list(found.values())


@dataclass
class Recording:
    """The dumps and log of one bench run, and what went wrong reading them."""

    dumps: list[list[dict[str, Any]]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def take(self, dump: Dumper, kubeconfig: Path) -> None:
        """One dump, best effort: a failure is kept, not raised."""
        try:
            self.dumps.append(dump(kubeconfig))
        except (TrainstackError, OSError, subprocess.SubprocessError) as exc:
            self.errors.append(str(exc))

    def timeline(self, log: str | None, engine: timeline.EngineMarks | None, jobset: str) -> dict[str, Any]:
        """The timeline's result JSON, or the reason there is none."""
        try:
            measured = timeline.build(merged(self.dumps), log, engine, jobset)
        except TrainstackError as exc:
            return {"error": "; ".join([*self.errors, str(exc)])}
        result = measured.to_dict()
        result["warnings"] += [f"a dump failed: {e}" for e in self.errors]
        return result


def compare(result: dict[str, Any] | None, baseline: dict[str, float | None], tolerance: float, slack_s: float) -> list[str]:
    """The phases of a bench's `timeline` that regressed from `baseline`, as lines for people."""
    if not result or "phases" not in result:
        return []
    current = timeline.baseline_seconds({"timeline": result}, "this run")
    return [str(r) for r in timeline.regressions(current, baseline, tolerance, slack_s)]


def read_baseline(path: Path) -> dict[str, float | None]:
    """The phase seconds of the baseline result at `path`, or ReportError."""
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise ReportError(f"cannot read --baseline {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise ReportError(f"--baseline {path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    return timeline.baseline_seconds(data, f"--baseline {path}")
