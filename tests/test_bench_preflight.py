"""`trainstack bench` runs the job's preflight first: its report goes in the result JSON, and a failure
stops the bench before the training run, tears the stack down and names the node. The bench harness
of test_ops_bench (a fake stack behind the Automation API) and kubectl faked at its boundary."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from test_ops_bench import TEARDOWN, Harness, spec
from trainstack.app.ops import bench_preflight
from trainstack.app.ops.bench import run_bench
from trainstack.core.catalog import preflight as facts
from trainstack.workloads import preflight

SAMPLES = Path(__file__).parent / "preflight_samples"
# Recipe 000 with its preflight on: its 1m pods-ready timeouts raised to hold it (validate refuses them otherwise).
ON = [
    ("trainstack:workload.preflight", True),
    ("trainstack:kueue.waitForPodsReady.timeout", "15m"),
    ("trainstack:kueue.waitForPodsReady.recoveryTimeout", "15m"),
]
NAME = "a3ultra-405b-bench-202611230230-1a2b"


def pod(name: str, node_exit: int, fabric_exit: int | None, message: str = "") -> dict[str, Any]:
    statuses = [{"name": preflight.NODE_CONTAINER, "state": {"terminated": {"exitCode": node_exit, "message": message}}}]
    if fabric_exit is not None:
        statuses.append({"name": preflight.FABRIC_CONTAINER, "state": {"terminated": {"exitCode": fabric_exit, "message": message}}})
    return {"metadata": {"name": name}, "status": {"initContainerStatuses": statuses}}


def kubectl(pods: list[dict[str, Any]], logs: dict[str, str], calls: list[list[str]]) -> Any:
    """A fake `subprocess.run` for kubectl: `get pods` lists `pods`, `logs POD -c C` prints logs["POD/C"]."""

    def run(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        if "get" in command:
            return subprocess.CompletedProcess(command, 0, json.dumps({"items": pods}), "")
        return subprocess.CompletedProcess(command, 0, logs.get(f"{command[-3]}/{command[-1]}", ""), "")

    return run


def test_a_failed_preflight_stops_the_bench_tears_it_down_and_names_the_node(tmp_path: Path) -> None:
    message = "node=gke-a3u-node-2 check=nccl_all_gather_pair measured='fails with a healthy partner' threshold=''"
    pods = [pod("p0", 0, facts.FAILED_EXIT_CODE, message), pod("p1", 0, 0)]
    logs = {f"p0/{preflight.FABRIC_CONTAINER}": (SAMPLES / "nccl_all_gather_a3high_fail.txt").read_text()}  # rank 0 runs the tests
    calls: list[list[str]] = []
    harness = Harness()

    def waiter(kubeconfig: Path, selector: str, namespace: str, nodes: int, machine: str, timeout_s: float) -> bench_preflight.PreflightOutcome:
        assert selector == "jobset.sigs.k8s.io/jobset-name=llama31-405b" and nodes == 54 and machine == "a3-ultragpu-8g"
        return bench_preflight.wait_for_preflight(
            kubeconfig, selector, namespace, nodes, machine, timeout_s, run=kubectl(pods, logs, calls), sleep=lambda s: None
        )

    harness.deps.preflight = waiter
    result = run_bench(spec(sets=ON), tmp_path, harness.deps)
    assert harness.waited == []  # the training run was never waited for
    assert harness.log == [("create", NAME), "config", "up", *TEARDOWN]
    assert result.exit_code == 1 and result.job["outcome"] == "preflight failed"
    assert result.error is not None and "nccl_all_gather_pair on gke-a3u-node-2" in result.error
    written = json.loads(json.dumps(result.to_dict()))
    assert written["preflight"]["failed"] == [{"node": "gke-a3u-node-2", "check": "nccl_all_gather_pair"}]
    # The report judges the fabric container's nccl-tests output against A3 Ultra's mark.
    (average,) = [c for c in written["preflight"]["report"]["checks"] if c["check"] == "nccl all_gather average"]
    assert average["verdict"] == "fail" and average["threshold"] == ">= 250 GB/s"
    assert set(result.phases) == {"up", "preflight", "teardown"}


def test_a_passed_preflight_goes_on_to_the_run_with_its_report_in_the_result(tmp_path: Path) -> None:
    pods = [pod(f"p{i}", 0, 0) for i in range(54)]
    logs = {
        f"p0/{preflight.FABRIC_CONTAINER}": (SAMPLES / "nccl_all_gather_a4_pass.txt").read_text(),
        f"p0/{preflight.NODE_CONTAINER}": (SAMPLES / "dcgm_diag_r2_pass.txt").read_text(),
    }
    harness = Harness()
    harness.deps.preflight = lambda k, sel, ns, n, m, t: bench_preflight.wait_for_preflight(
        k, sel, ns, n, m, t, run=kubectl(pods, logs, []), sleep=lambda s: None
    )
    result = run_bench(spec(sets=ON), tmp_path, harness.deps)
    assert result.exit_code == 0 and result.job["outcome"] == "succeeded" and len(harness.waited) == 1
    assert result.preflight is not None and result.preflight["status"] == "passed" and result.preflight["report"]["verdict"] == "pass"


def test_the_preflight_waits_while_the_containers_run_and_times_out() -> None:
    running = [{"metadata": {"name": "p0"}, "status": {"initContainerStatuses": [{"name": preflight.NODE_CONTAINER, "state": {"running": {}}}]}}]
    assert bench_preflight.preflight_state({"items": running}, 1) is None
    assert bench_preflight.preflight_state({"items": [pod("p0", 0, 0)]}, 2) is None  # one of two pods done
    assert bench_preflight.preflight_state({"items": [pod("p0", 0, 0), pod("p1", 0, None)]}, 2) == "passed"
    assert bench_preflight.preflight_state({"items": [pod("p0", 1, None)]}, 1) is None  # broken, not failed: the Job retries it
    ticks = iter(range(0, 10_000, 60))
    outcome = bench_preflight.wait_for_preflight(
        Path("/dev/null"), "s", "ns", 1, "a3-ultragpu-8g", 120.0, run=kubectl(running, {}, []), clock=lambda: float(next(ticks)), sleep=lambda s: None
    )
    assert outcome.status == "timeout" and "error" in outcome.report
    assert "did not finish in time" in bench_preflight.describe_failure(outcome)


def test_a_recipe_with_its_preflight_off_skips_the_phase(tmp_path: Path) -> None:
    harness = Harness()
    result = harness.run(tmp_path)  # recipe 000 as shipped: preflight false
    assert "preflight" not in result.phases and result.preflight is None and result.exit_code == 0
