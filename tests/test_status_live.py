"""`trainstack status` against live clusters, read through a fake kubectl (tests/fake_kubectl) run
as a real process: which clusters each kind of stack reads (from its outputs, as the Automation
API returns them), that only read-only calls are made, and that a dump written with --dump reads
back (--from) to the same explanations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import status_objects as k
from fake_kubectl import FakeKubectl
from trainstack.app.deploy.stacks import project_root
from trainstack.app.status import live
from trainstack.app.status.cli import status
from trainstack.app.status.snapshot import StatusError

FLEET_WORKERS = ["a3ultra", "a3mega-central", "a3mega-east4"]  # stacks/Pulumi.a3ultra-fleet.yaml


def kubeconfig(context: str) -> str:
    """A kubeconfig as GKE's stack output writes one (its current context is all the fake reads)."""
    return f"apiVersion: v1\nkind: Config\ncurrent-context: {context}\ncontexts:\n- name: {context}\n  context: {{cluster: {context}, user: {context}}}\n"


OUTPUTS: dict[str, dict[str, Any]] = {
    "a3ultra-405b": {"clusterName": "a3ultra-405b", "kubeconfig": kubeconfig("a3ultra-405b")},
    "a3ultra-platform": {"kubeconfig": kubeconfig("a3ultra-platform")},
    "a3ultra-fleet": {"kubeconfig": kubeconfig("manager"), **{f"kubeconfig-{w}": kubeconfig(w) for w in FLEET_WORKERS}},
    "a3mega-east4-platform": {"clusterName": "east4"},  # not deployed: no kubeconfig
}


def outputs(stack: str, root: Path) -> dict[str, Any]:
    name = stack.rsplit("/", 1)[-1]
    if name not in OUTPUTS:
        raise StatusError(f"stack {stack!r} has no live cluster: it was never deployed (`trainstack up {stack}`)")
    return OUTPUTS[name]


@pytest.fixture
def kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeKubectl:
    fake = FakeKubectl.install(tmp_path)
    for key, value in fake.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(live, "stack_outputs", outputs)
    return fake


def test_each_kind_of_stack_reads_its_clusters() -> None:
    root = project_root()
    recipe = live.target("a3ultra-405b", root, outputs)
    assert (recipe.cluster.kubeconfig, recipe.job, recipe.workers) == (kubeconfig("a3ultra-405b"), "llama31-405b", {})
    on_platform = live.target("a3ultra-405b-job", root, outputs)
    assert (on_platform.cluster.kubeconfig, on_platform.job) == (kubeconfig("a3ultra-platform"), "llama31-405b")
    on_fleet = live.target("a3mega-gpt3-175b-fleet-job", root, outputs)
    assert on_fleet.cluster.kubeconfig == kubeconfig("manager") and on_fleet.job == "gpt3-175b-fleet"
    assert {name: a.kubeconfig for name, a in on_fleet.workers.items()} == {w: kubeconfig(w) for w in FLEET_WORKERS}
    existing = live.target("toolkit-a3mega-gpt3-175b", root, outputs)
    assert (existing.cluster.kubeconfig, existing.cluster.context) == (None, "gke_my-training-project_us-central1_a3mega-toolkit")


def test_a_stack_with_no_live_cluster_is_one_line(kubectl: FakeKubectl) -> None:
    result = CliRunner().invoke(status, ["a3mega-east4-platform"])
    assert result.exit_code == 2
    assert result.output.strip() == (
        "error: stack 'a3mega-east4-platform' has no live cluster: no 'kubeconfig' output (outputs: clusterName); deploy it with `trainstack up a3mega-east4-platform`"
    )
    result = CliRunner().invoke(status, ["a3mega-capacity-platform"])
    assert result.exit_code == 2 and "was never deployed" in result.output and "Traceback" not in result.output
    assert kubectl.calls() == []


def serve_recipe(kubectl: FakeKubectl, absent: tuple[str, ...] = ()) -> str:
    pods = [
        k.pod(i, job="llama31-405b", phase="Pending", node=f"node-{i}", containers=[k.waiting_container("ErrImagePull", "failed to pull: 403 Forbidden")])
        for i in range(2)
    ]
    other = [k.pod(0, job="bert"), k.jobset("bert")]
    objects = [
        k.jobset("llama31-405b"),
        k.workload("llama31-405b", conditions=k.admitted()),
        *pods,
        *other,
        k.cluster_queue(),
        k.local_queue(),
    ]
    leader = pods[0]["metadata"]["name"]
    kubectl.serve("a3ultra-405b", objects, pending={k.QUEUE: []}, logs={(k.NS, leader): "pulling...\n"}, absent=absent)
    return leader


def test_live_reads_only_and_the_dump_reads_back_the_same(kubectl: FakeKubectl, tmp_path: Path) -> None:
    serve_recipe(kubectl, absent=("provisioningrequests.autoscaling.x-k8s.io",))
    runner = CliRunner()
    now = runner.invoke(status, ["a3ultra-405b", "--format", "json"])
    assert now.exit_code == 0, now.output
    records = json.loads(now.output)
    assert [(r["job"], r["state"]) for r in records] == [("llama31-405b", "admitted")]  # the recipe's own job only
    assert records[0]["cause"].startswith("ErrImagePull: image ")
    dump = tmp_path / "dump"
    written = runner.invoke(status, ["a3ultra-405b", "--dump", str(dump)])
    assert written.exit_code == 0 and written.output.strip() == f"wrote {dump / 'cluster.json'}"
    back = runner.invoke(status, ["a3ultra-405b", "--from", str(dump), "--format", "json"])
    assert json.loads(back.output) == records
    everything = runner.invoke(status, ["--from", str(dump), "--format", "json"])
    assert [r["job"] for r in json.loads(everything.output)] == ["bert", "llama31-405b"]
    calls = kubectl.calls()
    assert {tuple(c[2:4]) if c[2] == "get" else (c[2],) for c in calls} >= {("get", "jobsets"), ("get", "--raw"), ("logs",)}
    assert all(c[0] == "--kubeconfig" and c[2] in ("get", "logs") for c in calls)
    assert not Path(calls[0][1]).exists()  # the kubeconfig from the stack output is gone


def test_a_fleet_reads_the_manager_and_every_worker(kubectl: FakeKubectl, tmp_path: Path) -> None:
    kubectl.serve("manager", [k.jobset("gpt3-175b-fleet"), k.workload("gpt3-175b-fleet", conditions=k.admitted(), cluster_name="a3mega-central")])
    kubectl.serve(
        "a3mega-central",
        [k.jobset("gpt3-175b-fleet"), k.workload("gpt3-175b-fleet", conditions=[k.cond("QuotaReserved", "False", "Pending", k.unused_quota("64"))])],
    )
    for worker in ("a3ultra", "a3mega-east4"):
        kubectl.serve(worker, [])
    dump = tmp_path / "fleet"
    result = CliRunner().invoke(status, ["a3mega-gpt3-175b-fleet-job", "--dump", str(dump)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in dump.glob("*.json")) == ["manager.json", "worker-a3mega-central.json", "worker-a3mega-east4.json", "worker-a3ultra.json"]
    result = CliRunner().invoke(status, ["a3mega-gpt3-175b-fleet-job"])
    assert result.output.splitlines()[:2] == [
        f"{k.NS}/gpt3-175b-fleet (JobSet on a3mega-central): QUEUED",
        f"  cause: on worker a3mega-central: waiting for quota: {k.GPU} short by 64 in flavor {k.FLAVOR}",
    ]


def test_a_kueue_of_another_version_on_the_cluster_is_refused(kubectl: FakeKubectl) -> None:
    kubectl.serve("a3ultra-405b", [{**k.workload("llama31-405b"), "apiVersion": "kueue.x-k8s.io/v1beta1"}])
    result = CliRunner().invoke(status, ["a3ultra-405b"])
    assert result.exit_code == 2 and "a3ultra-405b.kubeconfig" not in result.output
    assert "cluster: kubectl get workloads.kueue.x-k8s.io: items[0]" in result.output and "kueue.x-k8s.io/v1beta2" in result.output


def test_watch_explains_until_interrupted(kubectl: FakeKubectl, monkeypatch: pytest.MonkeyPatch) -> None:
    serve_recipe(kubectl)
    rounds: list[float] = []

    def sleep(seconds: float) -> None:
        rounds.append(seconds)
        if len(rounds) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr("trainstack.app.status.cli.pause", sleep)
    result = CliRunner().invoke(status, ["a3ultra-405b", "--watch"])
    assert result.exit_code == 0, result.output
    assert rounds == [30, 30] and result.output.count("llama31-405b (JobSet): ADMITTED") == 2
    assert result.output.count("--- 20") == 2  # each round's time


def test_a_stack_whose_job_is_not_submitted_yet(kubectl: FakeKubectl) -> None:
    kubectl.serve("a3ultra-405b", [k.jobset("bert")])
    result = CliRunner().invoke(status, ["a3ultra-405b"])
    assert result.exit_code == 0 and result.output.strip() == "no training job llama31-405b here (jobs: bert)"
