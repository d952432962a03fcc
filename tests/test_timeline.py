"""The measured time to first step: phases from Kubernetes objects written as the kubelet, the
scheduler and the controllers write them (reasons: kubernetes/kubernetes 819ecd4
pkg/kubelet/events/event.go; the Pulled message: cfce511 pkg/kubelet/images/image_manager.go),
with missing phases, clock skew, partial dumps and bad input; and `metrics timeline`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from trainstack.app.cli import main
from trainstack.app.metrics import timeline
from trainstack.app.metrics.timeline import EngineMarks, build, go_duration, read_dump, regressions
from trainstack.core.errors import ReportError

T0 = datetime(2026, 11, 27, 10, 0, tzinfo=UTC)
IMAGE = "us-central1-docker.pkg.dev/p/r/trainer:1"


def at(seconds: float) -> str:
    """RFC 3339 as the API server writes metadata times (whole seconds, Z)."""
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro(seconds: float) -> str:
    """A MicroTime (events.k8s.io eventTime)."""
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def condition(kind: str, seconds: float, status: str = "True") -> dict[str, Any]:
    return {"type": kind, "status": status, "lastTransitionTime": at(seconds), "lastHeartbeatTime": at(seconds + 300)}


def node(name: str, created: float, ready: float | None) -> dict[str, Any]:
    conditions = [condition("MemoryPressure", created + 5, "False")]
    if ready is not None:
        conditions.append(condition("Ready", ready))
    labels = {timeline.ACCELERATOR_LABEL: "nvidia-h200-141gb", "kubernetes.io/hostname": name}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "creationTimestamp": at(created), "labels": labels},
        "status": {"conditions": conditions},
    }


def job_pod(name: str, node_name: str, created: float, scheduled: float, sandbox: float | None, running: float | None) -> dict[str, Any]:
    conditions = [condition("PodScheduled", scheduled)]
    if sandbox is not None:
        conditions += [condition("PodReadyToStartContainers", sandbox), condition("Initialized", sandbox)]
    state = {"running": {"startedAt": at(running)}} if running is not None else {"waiting": {"reason": "ContainerCreating"}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "creationTimestamp": at(created), "labels": {timeline.JOBSET_LABEL: "llama"}},
        "spec": {"nodeName": node_name, "containers": [{"name": "trainer", "image": IMAGE}]},
        "status": {"phase": "Running" if running else "Pending", "conditions": conditions, "containerStatuses": [{"name": "trainer", "state": state}]},
    }


def daemon_pod(owner: str, node_name: str, ready: float) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{owner}-x7k2p",
            "namespace": "kube-system",
            "creationTimestamp": at(ready - 60),
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": owner, "uid": "u", "controller": True}],
        },
        "spec": {"nodeName": node_name},
        "status": {"conditions": [condition("Ready", ready)]},
    }


def event(pod: str, reason: str, message: str, seconds: float, *, micro_time: bool = False) -> dict[str, Any]:
    """A core/v1 Event as the kubelet's recorder writes it (firstTimestamp, or eventTime)."""
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{pod}.{reason.lower()}", "namespace": "default", "creationTimestamp": at(seconds)},
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": pod, "fieldPath": "spec.containers{trainer}"},
        "reason": reason,
        "message": message,
        "source": {"component": "kubelet", "host": "n"},
        "type": "Normal",
        "count": 1,
    }
    if micro_time:
        obj["eventTime"] = micro(seconds)
    else:
        obj["firstTimestamp"] = obj["lastTimestamp"] = at(seconds)
    return obj


def pulled(pod: str, seconds: float, pull: str, waiting: str, size: int) -> dict[str, Any]:
    return event(pod, "Pulled", f'Successfully pulled image "{IMAGE}" in {pull} ({waiting} including waiting). Image size: {size} bytes.', seconds)


def cluster() -> list[dict[str, Any]]:
    """Two GPU nodes ready at 100 and 130 s, drivers at 250/280 s, two job pods pulling 29 GB."""
    return [
        node("gpu-a", 10, 100),
        node("gpu-b", 12, 130),
        daemon_pod("nvidia-gpu-device-plugin-large-cos", "gpu-a", 250),
        daemon_pod("nccl-rdma-installer", "gpu-a", 240),
        daemon_pod("nvidia-gpu-device-plugin-large-cos", "gpu-b", 280),
        daemon_pod("kube-proxy", "gpu-b", 900),  # not a setup DaemonSet: ignored
        job_pod("llama-0", "gpu-a", 300, 302, 320, 1000),
        job_pod("llama-1", "gpu-b", 300, 303, 330, 1100),
        event("llama-0", "Scheduled", "Successfully assigned default/llama-0 to gpu-a", 302),
        event("llama-0", "Pulling", f'Pulling image "{IMAGE}"', 321),
        pulled("llama-0", 980, "10m59s", "10m59.4s", 29_000_000_000),
        event("llama-1", "Pulling", f'Pulling image "{IMAGE}"', 331),
        pulled("llama-1", 1090, "12m39s", "12m39.123s", 29_000_000_000),
        event("llama-1", "Started", "Started container trainer", 1100),
    ]


def stamped_log(first: float, steps: int = 15, gap: float = 20.0) -> str:
    lines = [f"{micro(first - 100)} [NeMo I] Loading checkpoint"]
    lines += [f"{micro(first + s * gap)} Epoch 0: global_step={s} train_step_timing in s={gap}" for s in range(steps)]
    return "\n".join(lines) + "\n"


def by_key(t: timeline.Timeline) -> dict[str, timeline.Phase]:
    return {p.spec.key: p for p in t.phases}


def test_each_phase_is_read_from_its_own_marks() -> None:
    engine = EngineMarks(
        up_started=(T0 - timedelta(seconds=1500)).timestamp(), cluster=(T0 - timedelta(seconds=1000)).timestamp(), pools={"a3-ultra": T0.timestamp()}
    )
    t = build(cluster(), stamped_log(1400), engine)
    phases = by_key(t)
    assert phases["cluster"].seconds == 500 and phases["gpuPools"].seconds == 1000 and phases["gpuPools"].subject == "a3-ultra"
    assert (phases["nodes"].seconds, phases["nodes"].subject) == (118, "gpu-b")  # 12 -> 130
    assert (phases["drivers"].seconds, phases["drivers"].subject) == (150, "gpu-a")  # Ready 100 -> last setup pod 250
    assert phases["scheduling"].seconds == 3
    assert phases["mounts"].seconds == 27  # 303 -> 330
    # The kubelet's own duration (including waiting), not the events' difference.
    assert phases["imagePull"].seconds == pytest.approx(759.123) and phases["imagePull"].subject == "gpu-b"
    assert {(p.node, p.size_bytes) for p in t.pulls} == {("gpu-a", 29_000_000_000), ("gpu-b", 29_000_000_000)}
    assert phases["containers"].seconds == 20  # pulled 980 -> running 1000 (llama-0); 1090 -> 1100
    assert phases["firstStep"].seconds == 300  # last container 1100 -> first step 1400
    assert phases["steady"].seconds == 200  # step 0 -> step 10, 20 s apart
    assert t.to_first_step == 1500 + 1400
    assert not t.warnings


def test_missing_phases_say_why_and_the_rest_are_still_measured() -> None:
    items = [node("gpu-a", 10, 100), job_pod("llama-0", "gpu-a", 300, 302, None, None)]
    t = build(items, "no timestamps here\nglobal_step=0 train_step_timing in s=2\n")
    phases = by_key(t)
    assert phases["nodes"].seconds == 90 and phases["scheduling"].seconds == 2
    assert "only `trainstack bench`" in phases["cluster"].note
    assert "PodReadyToStartContainers" in phases["mounts"].note
    assert "no Pulled event" in phases["imagePull"].note
    assert "setup DaemonSets" in phases["drivers"].note
    assert "kubectl logs --timestamps" in phases["firstStep"].note
    assert t.first_step is None and t.to_first_step is None
    assert any("no Event objects" in w and "--event-ttl" in w for w in t.warnings)
    table = t.to_table()
    assert "not measured" in table and "missing: no Pulled event" in table


def test_clock_skew_counts_zero_and_is_reported() -> None:
    # gpu-b's kubelet clock runs 40 s behind the API server: Ready precedes the node's creation.
    items = [node("gpu-a", 10, 100), node("gpu-b", 60, 20), job_pod("llama-0", "gpu-a", 300, 302, 320, 400), job_pod("llama-1", "gpu-b", 300, 302, 320, 400)]
    phases = by_key(t := build(items, None))
    assert phases["nodes"].seconds == 90 and phases["nodes"].subject == "gpu-a"
    assert any("clock skew in GPU nodes ready: gpu-b ends 40.0 s before it starts" in w for w in t.warnings)


def test_a_partial_dump_of_events_only_is_refused_and_of_pods_only_is_measured(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no Node and no Pod"):
        build([event("llama-0", "Pulling", "x", 1)])
    t = build([job_pod("llama-0", "gpu-a", 300, 302, 320, 400)])
    assert by_key(t)["scheduling"].seconds == 2 and "no GPU node" in by_key(t)["nodes"].note
    assert any("no Node objects" in w for w in t.warnings)


def test_events_with_event_time_and_an_image_already_present() -> None:
    items = [
        node("gpu-a", 10, 100),
        job_pod("llama-0", "gpu-a", 300, 302, 320, 325),
        event("llama-0", "Pulled", f'Container image "{IMAGE}" already present on machine', 321, micro_time=True),
    ]
    t = build(items)
    assert by_key(t)["imagePull"].seconds == 0 and by_key(t)["containers"].seconds == 4


def test_go_durations_as_the_kubelet_prints_them() -> None:
    assert go_duration("4m3.5s") == 243.5
    assert go_duration("1h2m") == 3720
    assert go_duration("850ms") == pytest.approx(0.85)
    assert go_duration("12 minutes") is None


def test_only_the_named_jobset_is_measured() -> None:
    other = job_pod("other-0", "gpu-a", 0, 500, 510, 520)
    other["metadata"]["labels"][timeline.JOBSET_LABEL] = "other"
    t = build([*cluster(), other], jobset="llama")
    assert by_key(t)["scheduling"].seconds == 3


def test_regressions_beyond_the_tolerance_and_the_slack() -> None:
    base = {"imagePull": 100.0, "nodes": 100.0, "mounts": 5.0, "steady": None, "timeToFirstStep": 1000.0}
    now = {"imagePull": 200.0, "nodes": 115.0, "mounts": 20.0, "steady": 50.0, "timeToFirstStep": 1300.0}
    found = regressions(now, base, tolerance=0.2, slack_s=10)
    assert [r.phase for r in found] == ["mounts", "imagePull", "timeToFirstStep"]
    assert str(found[1]) == "imagePull: 200.0 s, baseline 100.0 s (+100.0 s)"
    assert regressions(now, base, tolerance=0.2, slack_s=120) == [r for r in found if r.phase == "timeToFirstStep"]


def test_baseline_must_be_a_bench_result_with_a_timeline() -> None:
    with pytest.raises(ReportError, match=r"base\.json: not a bench result with a timeline"):
        timeline.baseline_seconds({"phases": {}}, "base.json")
    t = build(cluster(), stamped_log(1400))
    seconds = timeline.baseline_seconds(json.loads(json.dumps({"timeline": t.to_dict()})), "r")
    assert seconds["imagePull"] == pytest.approx(759.1) and seconds["cluster"] is None and seconds["timeToFirstStep"] == t.to_first_step


def write(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}))
    return path


def test_cli_reads_a_dump_directory_and_a_log(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    objects = cluster()
    write(dump / "nodes.json", [o for o in objects if o["kind"] == "Node"])
    write(dump / "rest.json", [o for o in objects if o["kind"] != "Node"])
    (tmp_path / "leader.log").write_text(stamped_log(1400))
    result = CliRunner().invoke(main, ["metrics", "timeline", str(dump), "--log", str(tmp_path / "leader.log"), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["timeToFirstStepSeconds"] == 1390  # origin: the first node created (10 s)
    assert [p["phase"] for p in data["phases"]] == list(timeline.PHASE_KEYS)
    table = CliRunner().invoke(main, ["metrics", "timeline", str(dump / "nodes.json")])
    assert table.exit_code == 0 and "GPU nodes ready" in table.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not JSON (Expecting property name"),
        ('{"kind": "Pod", "metadata": {}}', "not a Kubernetes List"),
        ('{"kind": "List", "items": [3]}', "items[0] is not a Kubernetes object"),
        ('{"kind": "List", "items": []}', "no Node and no Pod"),
    ],
)
def test_cli_bad_dump_is_one_clean_error(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "d.json").write_text(content)
    result = CliRunner().invoke(main, ["metrics", "timeline", str(tmp_path / "d.json")])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_cli_empty_directory_is_a_clean_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["metrics", "timeline", str(tmp_path)])
    assert result.exit_code == 2 and "no .json file" in result.output
    with pytest.raises(ReportError):
        read_dump(tmp_path)


def test_timestamps_are_stripped_for_the_mfu_parser() -> None:
    log = stamped_log(0, steps=3)
    assert timeline.strip_timestamps(log).splitlines()[1] == "Epoch 0: global_step=0 train_step_timing in s=20.0"
