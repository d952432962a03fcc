"""`trainstack bench` records the time to first step: the engine's events, the cluster's objects
(dumped once the JobSet's pods are ready and once it has finished) and the leader's timestamped log
make the phase table of the result JSON and the summary; a phase that regressed from --baseline
beyond the tolerance exits 4. One scenario drives the real command line and Automation API against
the fake Pulumi CLI, whose event log gives the cluster's and the GPU pool's creation."""

from __future__ import annotations

import json
import multiprocessing
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from pulumi.automation import events

from fake_pulumi import driver
from fake_pulumi.bench_process import Bench, forkserver_importing, starter
from test_ops_bench import Harness
from test_timeline import cluster, stamped_log
from trainstack.app.metrics.timeline import JOBSET_LABEL
from trainstack.app.ops import bench, bench_timeline
from trainstack.app.ops.bench import jobset_ready, wait_for_jobset
from trainstack.app.ops.cli import bench_command


@pytest.fixture(scope="module")
def forkserver() -> multiprocessing.context.BaseContext:
    return forkserver_importing("trainstack.app.cli", "trainstack.app.ops.bench")


@pytest.fixture
def run(forkserver: Any, tmp_path: Path) -> Iterator[Callable[..., Bench]]:
    yield from starter(forkserver, tmp_path, driver.run_timed)


JOBSET = "llama31-405b"  # a3ultra-405b's JobSet


def job_objects() -> list[dict[str, Any]]:
    """test_timeline's cluster, its job pods those of a3ultra-405b's JobSet."""
    objects = cluster()
    for o in objects:
        labels = o["metadata"].get("labels") or {}
        if JOBSET_LABEL in labels:
            labels[JOBSET_LABEL] = JOBSET
    return objects


def phase_table(result: dict[str, Any]) -> dict[str, Any]:
    return {row["phase"]: row for row in result["timeline"]["phases"]}


def test_the_result_carries_the_phase_table_from_both_dumps_and_the_log(tmp_path: Path) -> None:
    harness = Harness()
    objects = job_objects()
    events_only = [o for o in objects if o["kind"] == "Event"]
    dumps = [events_only, [o for o in objects if o["kind"] != "Event"]]  # the pull events are gone by the end
    harness.deps.dump = lambda path: dumps.pop(0)
    harness.deps.logs = lambda path, name, ns: stamped_log(1400)
    result = harness.run(tmp_path)
    table = phase_table(result.to_dict())
    assert table["imagePull"]["seconds"] == pytest.approx(759.1) and table["firstStep"]["seconds"] == 300
    assert "only `trainstack bench`" not in table["cluster"]["missing"]  # the engine ran: it created no cluster here
    assert result.metrics["mfu"]["step_time_s"] == 20.0, "MFU reads the log without kubectl's timestamps"
    assert (tmp_path / "result.leader.log").read_text().startswith("2026-11-27T"), "the log is kept as fetched"
    assert result.exit_code == 0 and not dumps


def test_a_failed_dump_leaves_the_reason_not_a_failed_bench(tmp_path: Path) -> None:
    harness = Harness()

    def broken(path: Path) -> list[dict[str, Any]]:
        raise bench_timeline.ReportError("kubectl get nodes,pods,events failed: Unauthorized")

    harness.deps.dump = broken
    result = harness.run(tmp_path)
    assert "Unauthorized" in result.to_dict()["timeline"]["error"] and result.exit_code == 0


def test_a_regression_exits_4_unless_the_job_failed_or_resources_are_left(tmp_path: Path) -> None:
    result = Harness().run(tmp_path)
    result.regressions = ["imagePull: 700.0 s, baseline 100.0 s (+600.0 s)"]
    assert result.exit_code == bench.REGRESSED == 4
    result.job["outcome"] = "failed"
    assert result.exit_code == 1


def engine_event(kind: str, type_: str, name: str, t: int, inputs: dict[str, Any], op: str = "create") -> events.EngineEvent:
    state = {"type": type_, "urn": f"urn:pulumi:s::trainstack::{type_}::{name}", "inputs": inputs}
    return events.EngineEvent.from_json({"sequence": 1, "timestamp": t, kind: {"metadata": {"op": op, "urn": state["urn"], "type": type_, "new": state}}})


def test_engine_marks_read_the_cluster_and_gpu_pools_created() -> None:
    recorder = bench_timeline.EngineRecorder(1000.0)
    recorder.on_event(engine_event("resourcePreEvent", "gcp:container/cluster:Cluster", "c", 1001, {}))
    recorder.on_event(engine_event("resOutputsEvent", "gcp:container/cluster:Cluster", "c", 1480, {}))
    gpu = {"name": "a3-ultra", "nodeConfig": {"machineType": "a3-ultragpu-8g"}}
    recorder.on_event(engine_event("resOutputsEvent", "gcp:container/nodePool:NodePool", "gpus", 2380, gpu))
    recorder.on_event(engine_event("resOutputsEvent", "gcp:container/nodePool:NodePool", "cpu", 1700, {"nodeConfig": {"machineType": "e2-standard-8"}}))
    recorder.on_event(engine_event("resOutputsEvent", "gcp:container/nodePool:NodePool", "old", 2400, gpu | {"name": "old"}, op="same"))
    marks = recorder.marks()
    assert (marks.cluster, dict(marks.pools)) == (1480.0, {"a3-ultra": 2380.0})


def test_wait_calls_on_ready_once_when_every_pod_is_ready() -> None:
    spec = {"spec": {"replicatedJobs": [{"name": "workers", "replicas": 2}]}}
    states = [
        {**spec, "status": {"replicatedJobsStatus": [{"name": "workers", "ready": 1, "active": 2}]}},
        {**spec, "status": {"replicatedJobsStatus": [{"name": "workers", "ready": 2, "active": 2}]}},
        {**spec, "status": {"replicatedJobsStatus": [{"name": "workers", "ready": 2, "active": 2}]}},
        {**spec, "status": {"terminalState": "Completed", "conditions": [{"type": "Completed", "message": "done"}]}},
    ]
    answers = iter(json.dumps(s) for s in states)
    calls: list[str] = []

    def kubectl(*args: Any, **kwargs: Any) -> Any:
        return SimpleNamespace(returncode=0, stdout=next(answers), stderr="")

    outcome = wait_for_jobset(Path("k"), "j", "default", 3600, lambda: calls.append("ready"), run=kubectl, clock=lambda: 0.0, sleep=lambda s: None)
    assert outcome.status == "succeeded" and calls == ["ready"]
    assert not jobset_ready({"spec": {}, "status": {}})


def test_a_bad_baseline_is_refused_before_anything_is_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda tool: f"/usr/bin/{tool}")
    created: list[str] = []
    monkeypatch.setattr(bench, "run_bench", lambda *args, **kwargs: created.append("bench"))
    (tmp_path / "base.json").write_text('{"phases": []}')
    result = CliRunner().invoke(bench_command, ["a3ultra-405b", "--baseline", str(tmp_path / "base.json")])
    assert result.exit_code == 2 and "not a bench result with a timeline" in result.output and created == []


def test_bench_with_the_fake_cli_records_the_timeline_and_fails_on_a_regression(run: Callable[..., Bench], tmp_path: Path) -> None:
    # The cluster's marks sit just after the bench's `up`, as a live run's do.
    now = datetime.now(UTC).replace(microsecond=0)
    shift = (now - datetime(2026, 11, 27, 10, 0, tzinfo=UTC)) + timedelta(seconds=5)
    objects = json.loads(shifted(json.dumps(job_objects()), shift))
    (tmp_path / "dump.json").write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": objects}))
    (tmp_path / "leader.log").write_text(shifted(stamped_log(1400), shift))
    baseline = {"timeline": {"timeToFirstStepSeconds": None, "phases": [{"phase": "imagePull", "seconds": 300.0}, {"phase": "nodes", "seconds": 500.0}]}}
    (tmp_path / "baseline.json").write_text(json.dumps(baseline))
    started = run()
    assert started.exit_code() == 4, started.stderr()
    result = started.result()
    table = phase_table(result)
    assert table["gpuPools"]["slowest"] == "bench-gpus" and table["gpuPools"]["seconds"] is not None, "from the fake CLI's event log"
    assert table["cluster"]["seconds"] is not None and table["imagePull"]["seconds"] == pytest.approx(759.1)
    assert result["regressions"] == ["imagePull: 759.1 s, baseline 300.0 s (+459.1 s)"] and result["exitCode"] == 4
    assert result["teardown"]["ok"] and (tmp_path / "dumped").read_text() == "dump\ndump\n"
    stdout = (tmp_path / "stdout").read_text()
    assert "time to first step" in stdout and "REGRESSED from --baseline: imagePull" in stdout
    assert "  image pull " in stdout and "image pulls: 2; slowest 759.1 s on gpu-b, 29.0 GB" in stdout, "the phase table is printed"


def shifted(text: str, by: timedelta) -> str:
    """`text` with every 2026-11-27T10:... time moved by `by` (the objects' and log's times)."""

    def move(match: re.Match[str]) -> str:
        stamp = datetime.fromisoformat(match.group(1)) + by
        return stamp.strftime("%Y-%m-%dT%H:%M:%S") + (match.group(2) or "") + "Z"

    return re.sub(r"(2026-11-27T\d\d:\d\d:\d\d)(\.\d+)?Z", move, text)
