"""`trainstack bench` of a job on a fleet (app/ops/bench_fleet.py): the copies of the workers, the
fleet and the job point at each other, `reap` finds everything they make, the job is watched on the
worker MultiKueue dispatched it to, and, against the fake Pulumi CLI in a child process (as
tests/test_ops_bench_signals.py), the copies go up in dependency order and down in reverse, also
on SIGINT mid-way."""

from __future__ import annotations

import functools
import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fake_gcloud import FakeGcloud
from fake_pulumi import DEADLINE_S, FakePulumi, driver, poll
from fake_pulumi.bench_process import Bench, forkserver_importing, starter
from helpers import present
from trainstack.app.deploy.stacks import project_root, raw_stack_config
from trainstack.app.ops import bench_fleet, reap
from trainstack.app.ops.bench import BenchError, JobOutcome
from trainstack.app.ops.bench_fleet import FLEET, JOB, WORKER, FleetBenchSpec, admitted_on, watch_fleet
from trainstack.app.ops.cli import bench_command
from trainstack.app.plan import engine
from trainstack.app.plan.plan import from_rendered
from trainstack.core.errors import TrainstackError

RECIPE = "a3mega-gpt3-175b-fleet-job"
FLEET_STACK = "a3ultra-fleet"
# The fleet's workers that can run the A3 Mega job: the bench copies these, not the A3 Ultra worker,
# which MultiKueue never sends an A3 Mega job to (and whose 54 reserved nodes it would pay for).
WORKERS = {"a3mega-central": "a3mega-capacity-platform", "a3mega-east4": "a3mega-east4-platform"}
NOW = datetime(2026, 11, 23, 2, 30, tzinfo=UTC)
PROJECT = "bench-project-1"
SETS = [
    ("gcp:project", PROJECT),  # what --project sets: every copy that names a project
    ("trainstack:cluster.releaseChannel", "RAPID"),  # a section the workers and the fleet have
    ("a3mega-east4-platform/trainstack:gpuPools[1].autoscaling.maxNodes", 8),  # one copy's
]


@functools.cache
def spec() -> FleetBenchSpec:
    """The bench of the fleet job (read only): some 15 s, rendering the workers and the fleet."""
    return bench_fleet.prepare(RECIPE, raw_stack_config(RECIPE), project_root(), now=NOW, ttl_s=8 * 3600.0, timeout_s=6 * 3600.0, token="1a2b", sets=SETS)


def test_the_copies_point_at_each_other_through_their_stack_references() -> None:
    s = spec()
    name = f"{RECIPE}-bench-202611230230-1a2b"
    assert [(c.role, c.recipe, c.stack) for c in s.copies] == [
        *((WORKER, stack, f"organization/trainstack/{name}-{worker}") for worker, stack in WORKERS.items()),
        (FLEET, FLEET_STACK, f"organization/trainstack/{name}-fleet"),
        (JOB, RECIPE, f"organization/trainstack/{name}"),
    ], "beside the originals: their organization and project, as their references name them"
    [fleet_copy], [job] = s.of(FLEET), s.of(JOB)
    assert fleet_copy.raw["trainstack:fleet"]["workers"] == [{"name": c.worker, "stack": c.stack} for c in s.of(WORKER)]
    assert job.raw["trainstack:platform"] == {"stack": fleet_copy.stack}
    assert raw_stack_config(FLEET_STACK)["trainstack:fleet"]["workers"][0]["stack"] == "organization/trainstack/a3ultra-platform", "the original is untouched"
    assert "a3ultra" in {w["name"] for w in raw_stack_config(FLEET_STACK)["trainstack:fleet"]["workers"]} - {c.worker for c in s.of(WORKER)}
    # Checked against each other as `pulumi up` checks them: the job's machine and queue are the fleet's.
    assert (s.job.machine.name, present(s.job.contract).local_queue, s.job.project) == ("a3-megagpu-8g", "a3-mega", PROJECT)
    assert all(c.raw["trainstack:cluster"]["admitFleets"] == [fleet_copy.stack] for c in s.of(WORKER)), "each worker copy admits the fleet copy alone"
    assert raw_stack_config(WORKERS["a3mega-east4"])["trainstack:cluster"]["admitFleets"] == [f"organization/trainstack/{FLEET_STACK}"], "not the original"


def test_every_copy_with_a_cluster_is_ephemeral_and_the_sets_reach_their_copies() -> None:
    s = spec()
    expires = reap.expires_label(NOW + timedelta(hours=8))
    for item in s.of(WORKER) + s.of(FLEET):
        cluster = item.raw["trainstack:cluster"]
        assert (cluster["name"], cluster["deletionProtection"], cluster["releaseChannel"]) == (item.cluster, False, "RAPID"), item.recipe
        assert reap.name_expires(present(item.cluster)) == NOW + timedelta(hours=8) and item.raw["trainstack:ephemeral"] == {"expires": expires}
        assert item.raw["gcp:project"] == PROJECT
    for item in s.of(WORKER):
        assert item.raw["trainstack:storage"]["disposable"] is True and item.raw["trainstack:storage"]["bucket"]["name"] == f"{item.cluster}-ckpt"
    spot = {c.worker: c.raw["trainstack:gpuPools"][-1]["autoscaling"]["maxNodes"] for c in s.of(WORKER) if "trainstack:gpuPools" in c.raw}
    assert spot == {"a3mega-central": 32, "a3mega-east4": 8}, "STACK/KEY reaches that stack's copy alone"
    assert "gcp:project" not in s.of(JOB)[0].raw and "trainstack:cluster" not in s.of(JOB)[0].raw, "the job stack has neither section"


def test_reap_finds_everything_the_copies_make(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every copy's plan deployed into a fake project; an hour after the expiry reap leaves
    nothing of them, and none of the original stacks' resources goes."""
    gcloud = FakeGcloud.install(tmp_path)
    for key, value in gcloud.env().items():
        monkeypatch.setenv(key, value)
    s = spec()
    outputs: dict[str, dict[str, Any]] = {}
    made: list[str] = []
    for item in s.of(WORKER) + s.of(FLEET):
        references = {c.stack: outputs[c.stack] for c in s.of(WORKER)} if item.role == FLEET else {}
        rendered = engine.run(item.local, item.raw, references)
        outputs[item.stack] = rendered.outputs
        made += gcloud.deploy(from_rendered(rendered).resources, PROJECT)
    golden = Path(__file__).resolve().parent / "golden"
    kept = [n for stack in [*WORKERS.values(), FLEET_STACK] for n in gcloud.deploy(json.loads((golden / f"{stack}.json").read_text())["resources"], PROJECT)]
    manager = s.of(FLEET)[0].cluster
    assert {manager, f"{manager}-router", f"{manager}-net"} <= set(made), "the manager's cluster, router and network"
    lines: list[str] = []
    assert reap.reap(PROJECT, True, now=NOW + timedelta(hours=9), echo=lines.append) == 0, lines
    assert not set(made) & gcloud.names(), "everything the copies made is gone"
    assert gcloud.names() == set(kept)


# ---------------------------------------------------------------------------------------------
# Refusals, before anything is created


@pytest.fixture
def tools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(bench_fleet, "run_fleet_bench", lambda *a, **k: pytest.fail("nothing may run"))


@pytest.mark.parametrize(
    ("stack", "message"),
    [
        (FLEET_STACK, f"'{FLEET_STACK}' is a fleet and runs no job of its own: bench a job on it: trainstack bench {RECIPE}"),
        ("a3ultra-platform", "'a3ultra-platform' is not a whole recipe nor a job on a fleet"),
        ("a3ultra-405b-job", "'a3ultra-405b-job' is not a whole recipe nor a job on a fleet"),
    ],
)
def test_a_stack_that_is_neither_a_recipe_nor_a_fleet_job_is_refused(tools: None, stack: str, message: str) -> None:
    result = CliRunner().invoke(bench_command, [stack])
    assert result.exit_code == 2 and message in result.output, result.output


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("a3ultra-405b/trainstack:workload.steps", 1, "'a3ultra-405b' is not one of the stacks this bench copies (a3mega-capacity-platform, "),
        ("trainstack:lustre.sizeGib", 1, "none of the stacks this bench copies has that section; name the stack: --set STACK/trainstack:lustre.sizeGib=VALUE"),
        (
            f"{FLEET_STACK}/trainstack:cluster.privateNodes",
            False,
            "trainstack:cluster.privateNodes = False: a fleet's manager reaches its workers from its Cloud NAT addresses",
        ),
    ],
)
def test_what_the_bench_cannot_copy_is_refused(key: str, value: Any, message: str) -> None:
    with pytest.raises(TrainstackError, match=re.escape(message)):
        bench_fleet.prepare(RECIPE, raw_stack_config(RECIPE), project_root(), now=NOW, ttl_s=8 * 3600.0, timeout_s=3600.0, sets=[(key, value)])


# ---------------------------------------------------------------------------------------------
# Which worker runs the job: the manager's Workload (Kueue v0.19.2)


def workload(owner: str, cluster: str | None = None, controller: bool = True) -> dict[str, Any]:
    status = {"clusterName": cluster} if cluster else {"nominatedClusterNames": ["a3mega-central"]}
    return {"metadata": {"ownerReferences": [{"kind": "JobSet", "name": owner, "controller": controller}]}, "status": status}


def test_the_worker_is_the_cluster_name_of_the_workload_the_jobset_controls() -> None:
    listed = {"items": [workload("other", "a3ultra"), workload("gpt3-175b", "a3ultra", controller=False), workload("gpt3-175b", "a3mega-east4")]}
    assert admitted_on(listed, "gpt3-175b") == "a3mega-east4"
    assert admitted_on({"items": [workload("gpt3-175b")]}, "gpt3-175b") is None, "nominated is not admitted"


class Kubectl:
    """kubectl answering from a script: per poll, the manager's Workloads and JobSet, and each worker's log."""

    def __init__(self, polls: list[tuple[str | None, str | None]], logs: dict[str, list[str]]):
        self.polls, self.logs, self.poll = polls, logs, 0
        self.read: list[str] = []

    def run(self, command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        cluster, terminal = self.polls[min(self.poll, len(self.polls) - 1)]
        kind = command[4]
        if kind == "workloads.kueue.x-k8s.io":
            body: dict[str, Any] = {"items": [workload("gpt3-175b", cluster)]}
        else:
            body = {"status": {"terminalState": terminal, "conditions": [{"type": terminal, "message": "done"}]} if terminal else {}}
            self.poll += 1
        return subprocess.CompletedProcess(command, 0, json.dumps(body), "")

    def log(self, kubeconfig: Path, name: str, namespace: str) -> str:
        self.read.append(kubeconfig.name)
        queue = self.logs[kubeconfig.name]
        text = queue.pop(0) if queue else ""
        if text == "gone":
            raise BenchError("kubectl logs failed: no pods")
        return text


def watch(kubectl: Kubectl, timeout_s: float = 3600.0) -> bench_fleet.FleetRun:
    ticks = iter(range(0, 100_000, 60))
    workers = {w: Path(w) for w in ("a3mega-central", "a3mega-east4")}
    return watch_fleet(
        Path("manager"), workers, "gpt3-175b", "default", timeout_s, run=kubectl.run, logs=kubectl.log, clock=lambda: float(next(ticks)), sleep=lambda s: None
    )


def test_the_job_is_watched_on_the_manager_and_its_log_read_on_its_worker_while_it_runs() -> None:
    kubectl = Kubectl(
        [(None, None), ("a3mega-east4", None), ("a3mega-east4", None), ("a3mega-east4", "Completed")],
        {"a3mega-east4": ["step 1\n", "step 1\nstep 2\n", "gone"]},
    )
    ran = watch(kubectl)
    assert (ran.outcome, ran.worker) == (JobOutcome("succeeded", "done"), "a3mega-east4")
    assert ran.log == "step 1\nstep 2\n", "the last read stands once the manager has deleted the worker's copy"
    assert kubectl.read == ["a3mega-east4"] * 3, "never read before a worker admitted it, never elsewhere"


def test_a_job_dispatched_again_keeps_only_the_new_workers_log() -> None:
    kubectl = Kubectl(
        [("a3mega-central", None), ("a3mega-east4", None), ("a3mega-east4", "Failed")], {"a3mega-central": ["central\n"], "a3mega-east4": ["", ""]}
    )
    ran = watch(kubectl)
    assert (ran.outcome.status, ran.worker, ran.log) == ("failed", "a3mega-east4", None)


def test_a_job_no_worker_admits_times_out_saying_so() -> None:
    ran = watch(Kubectl([(None, None)], {}), timeout_s=600.0)
    assert (ran.outcome.status, ran.worker, ran.log) == ("timeout", None, None)
    assert "waiting for a worker to admit it" in ran.outcome.detail


# ---------------------------------------------------------------------------------------------
# The real command line and Automation API against the fake Pulumi CLI


@pytest.fixture(scope="module")
def forkserver() -> multiprocessing.context.BaseContext:
    return forkserver_importing("trainstack.app.cli", "trainstack.app.ops.bench_fleet")


@pytest.fixture
def run(forkserver: Any, tmp_path: Path) -> Iterator[Callable[..., Bench]]:
    yield from starter(forkserver, tmp_path, driver.run_fleet)


NAME = f"organization/trainstack/{driver.FLEET_BENCH}"
WORKER_STACKS = [f"{NAME}-{w}" for w in WORKERS]
FLEET_COPY = f"{NAME}-fleet"


def spans(bench: Bench, command: str) -> list[tuple[str | None, float, float]]:
    """(stack, start, end) of each run of `command`, from the fake CLI's log."""
    times: dict[int, list[float]] = {}
    for event in bench.cli.events():
        if event["event"] in ("start", "exit"):
            times.setdefault(event["pid"], []).append(event["t"])
    return [(p.stack, times[p.pid][0], times[p.pid][-1]) for p in bench.processes(command)]


def configs(bench: Bench) -> dict[str, dict[str, Any]]:
    """Each stack's config as the bench set it (the last `config set-all` of a key wins)."""
    found: dict[str, dict[str, Any]] = {}
    for event in bench.cli.events():
        argv = event.get("argv") or []
        if event["event"] == "start" and [a for a in argv if not a.startswith("--")][:2] == ["config", "set-all"]:
            stack = argv[argv.index("--stack") + 1]
            for i, arg in enumerate(argv):
                if arg == "--plaintext":
                    key, _, value = argv[i + 1].partition("=")
                    found.setdefault(stack, {})[key] = json.loads(value) if value[:1] in "{[" else value
    return found


def test_the_copies_go_up_in_dependency_order_and_down_in_reverse(run: Callable[..., Bench]) -> None:
    first = WORKER_STACKS[0]
    bench = run(FAKE_PULUMI_HOLD=f"up:bench-cluster@{first.rsplit('/', 1)[-1]}")
    bench.cli.wait_for(lambda e: e["event"] == "held")
    # While the first worker's up is held, the other runs to its end: the workers go up at once.
    poll(lambda: {p.stack for p in bench.processes("up") if p.code == 0} == set(WORKER_STACKS[1:]), lambda: f"ups: {spans(bench, 'up')}")
    assert {p.stack for p in bench.processes("up")} == set(WORKER_STACKS), "no fleet up while a worker's runs"
    bench.cli.release()
    assert bench.exit_code() == 0, bench.stderr()
    ups = spans(bench, "up")
    n = len(WORKER_STACKS)
    first_workers, [fleet_up], second_workers, [job_up] = ups[:n], ups[n : n + 1], ups[n + 1 : 2 * n + 1], ups[2 * n + 1 :]
    assert {s for s, _, _ in first_workers} == {s for s, _, _ in second_workers} == set(WORKER_STACKS)
    commands = bench.cli.commands()
    assert commands.count("install") == 1 and commands.index("stack init") < commands.index("install") < commands.index("up"), (
        "venv/ made once, not by the workers' ups at once"
    )
    assert max(end for _, _, end in first_workers) < fleet_up[1] and fleet_up[0] == FLEET_COPY, "the fleet after every worker"
    assert fleet_up[2] < min(start for _, start, _ in second_workers), "the workers read the manager's egress after the fleet is up"
    assert max(end for _, _, end in second_workers) < job_up[1] and job_up[0] == NAME, "the job last"
    assert [p.stack for p in bench.processes("destroy")] == [NAME, FLEET_COPY, *reversed(WORKER_STACKS)]
    assert [p.stack for p in bench.processes("stack rm")] == [NAME, FLEET_COPY, *reversed(WORKER_STACKS)]
    assert bench.cli.stacks() == {}
    result = bench.result()
    assert (result["job"]["outcome"], result["job"]["worker"], result["job"]["workerStack"]) == ("succeeded", driver.WORKER, f"{NAME}-{driver.WORKER}")
    assert result["teardown"]["ok"] and [t["stack"] for t in result["teardown"]["stacks"]] == [NAME, FLEET_COPY, *reversed(WORKER_STACKS)]
    [job] = [e for e in bench.cli.events() if e["event"] == "job"]
    assert job["workers"] == sorted(WORKERS) and job["manager"].startswith("apiVersion: v1"), "watched with the fleet's and the workers' kubeconfigs"


def test_the_copies_configs_point_at_each_other(run: Callable[..., Bench]) -> None:
    bench = run()
    assert bench.exit_code() == 0, bench.stderr()
    set_up = configs(bench)
    assert set(set_up) == {*WORKER_STACKS, FLEET_COPY, NAME}
    assert [w["stack"] for w in set_up[FLEET_COPY]["trainstack:fleet"]["workers"]] == WORKER_STACKS
    assert set_up[NAME]["trainstack:platform"] == {"stack": FLEET_COPY}
    for stack in WORKER_STACKS:
        assert set_up[stack]["trainstack:cluster"]["admitFleets"] == [FLEET_COPY], "each worker admits the fleet copy's manager, read from its stack"


def test_sigint_mid_way_destroys_the_stacks_already_up_in_reverse(run: Callable[..., Bench]) -> None:
    bench = run(FAKE_PULUMI_HOLD=f"up:bench-cluster@{driver.FLEET_BENCH}-fleet")
    bench.cli.wait_for(lambda e: e["event"] == "held")
    os.killpg(bench.child.pid, signal.SIGINT)
    bench.cli.wait_for(lambda e: e["event"] == "signal")
    bench.cli.release()
    assert bench.exit_code() == 128 + signal.SIGINT, bench.stderr()
    assert [p.stack for p in bench.processes("up")].count(NAME) == 0, "the job never went up"
    [fleet_up] = [p for p in bench.processes("up") if p.stack == FLEET_COPY]
    assert (fleet_up.signals, fleet_up.canceled) == (["SIGINT"], True), "cancelled once, gracefully"
    assert [p.stack for p in bench.processes("refresh")] == [FLEET_COPY], "only the update cut short is refreshed"
    assert [p.stack for p in bench.processes("destroy")] == [NAME, FLEET_COPY, *reversed(WORKER_STACKS)]
    assert bench.cli.stacks() == {}
    result = bench.result()
    assert (result["interrupted"], result["error"], result["teardown"]["ok"]) == ("SIGINT", None, True)
    assert result["phases"]["up fleet"]["ok"] is False and "up job" not in result["phases"]


def test_teardown_alone_tears_down_every_copy_a_killed_run_left_in_reverse(tmp_path: Path) -> None:
    cli = FakePulumi.install(tmp_path)
    env = {**os.environ, **cli.env()}
    left = [WORKER_STACKS[0], WORKER_STACKS[1], FLEET_COPY]  # killed while the last worker was being created
    for stack in left:
        for args in (["stack", "init", stack], ["up", "--yes", "--skip-preview", "--stack", stack]):
            subprocess.run([str(cli.bin / "pulumi"), *args], env=env, check=True, capture_output=True)
    program = "from trainstack.app.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", program, "bench", RECIPE, "--teardown", driver.FLEET_BENCH],
        env=env,
        cwd=project_root(),
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    assert done.returncode == 0, done.stderr
    assert [p.stack for p in cli.processes() if p.command == "destroy"] == [FLEET_COPY, WORKER_STACKS[1], WORKER_STACKS[0]]
    assert f"no stack {NAME!r}: nothing to tear down" in done.stdout and f"torn down and removed stack {FLEET_COPY!r}" in done.stdout
    assert cli.stacks() == {}


def test_a_failed_teardown_names_what_is_left_per_stack(run: Callable[..., Bench]) -> None:
    bench = run(FAKE_PULUMI_PROTECT="bench-net")
    assert bench.exit_code() == 3, bench.stderr()
    stderr = bench.stderr()
    for stack in [NAME, FLEET_COPY, *WORKER_STACKS]:
        assert f"teardown left Pulumi stack {stack!r} holding: gcp:compute/network:Network bench-net" in stderr, stack
    assert f"tear the rest down with `trainstack bench {RECIPE} --teardown {driver.FLEET_BENCH}`" in stderr
    asked = list(dict.fromkeys(p.stack for p in bench.processes("stack export")))
    assert asked == [NAME, FLEET_COPY, *reversed(WORKER_STACKS)], "each torn down, in reverse, though the first failed"
    assert set(bench.cli.stacks()) == {s.rsplit("/", 1)[-1] for s in [NAME, FLEET_COPY, *WORKER_STACKS]}, "each kept: its state is the record"
