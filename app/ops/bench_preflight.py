"""The bench's preflight phase: wait until every pod's preflight containers finished, read their
verdict and output, and report it; a failure stops the bench before the training run (teardown follows).

The verdict is the containers' own: each failed check exits FAILED_EXIT_CODE and names its node in the
termination message (workloads/preflight_probe.py). Their logs (nccl-tests tables, dcgmi diag tables)
are judged again with `trainstack metrics preflight`'s reader for the report.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainstack.app.metrics import preflight as reports
from trainstack.core.catalog import preflight as facts
from trainstack.workloads import preflight_probe

POLL_S = 30.0


@dataclass
class PreflightOutcome:
    """`status`: passed, failed or timeout; `failed`: (node, check) of each failed check; `report`:
    the judged output of the preflight containers (or why there is none)."""

    status: str
    failed: list[tuple[str, str]] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "failed": [{"node": n, "check": c} for n, c in self.failed], "report": self.report}


def preflight_state(pods: dict[str, Any], expected: int) -> str | None:
    """passed once `expected` pods finished every preflight container with 0, failed as soon as one
    exited FAILED_EXIT_CODE, None while they run."""
    if preflight_probe.failed_nodes(json.dumps(pods)):
        return "failed"
    done = 0
    for pod in pods.get("items", []):
        statuses = [s for s in pod.get("status", {}).get("initContainerStatuses", []) if s.get("name", "").startswith("preflight")]
        if statuses and all((s.get("state", {}).get("terminated") or {}).get("exitCode") == 0 for s in statuses):
            done += 1
    return "passed" if done >= expected else None


def wait_for_preflight(
    kubeconfig: Path,
    selector: str,
    namespace: str,
    nodes: int,
    machine: str,
    timeout_s: float,
    *,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> PreflightOutcome:
    """Poll the job's pods until the preflight passed, failed or `timeout_s` passed; then read the
    preflight containers' logs into the report."""
    kubectl = ["kubectl", "--kubeconfig", str(kubeconfig), "-n", namespace]
    deadline = clock() + timeout_s
    pods: dict[str, Any] = {}
    while True:
        done = run([*kubectl, "get", "pods", "-l", selector, "-o", "json"], capture_output=True, text=True, timeout=120)
        if done.returncode == 0:
            pods = json.loads(done.stdout or "{}")
            if state := preflight_state(pods, nodes):
                break
        if clock() >= deadline:
            state = "timeout"
            break
        sleep(POLL_S)
    failed = preflight_probe.failed_nodes(json.dumps(pods))
    logs = []
    for pod in pods.get("items", []):
        for status in pod.get("status", {}).get("initContainerStatuses", []):
            if status.get("name", "").startswith("preflight") and (status.get("state", {}).get("terminated") or status.get("lastState", {}).get("terminated")):
                got = run([*kubectl, "logs", pod["metadata"]["name"], "-c", status["name"]], capture_output=True, text=True, timeout=300)
                logs.append(got.stdout)
    try:
        report: dict[str, Any] = reports.read("\n".join(logs), machine).as_dict()
    except (preflight_probe.ProbeError, ValueError) as error:
        report = {"error": f"no nccl-tests or dcgmi output in the preflight's logs: {error}"}
    return PreflightOutcome(state, failed, report)


def describe_failure(outcome: PreflightOutcome) -> str:
    """The bench's error line: which check failed on which node (or that it did not finish)."""
    if outcome.status == "timeout":
        return "the preflight did not finish in time; the training run was not started"
    named = ", ".join(f"{check} on {node}" for node, check in outcome.failed) or "see the preflight report"
    return f"preflight failed ({named}); the training run was not started and the nodes are tainted {facts.TAINT_KEY}"
