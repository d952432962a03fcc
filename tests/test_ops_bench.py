"""`trainstack bench` against a fake Automation workspace: teardown always runs (error, SIGINT,
SIGTERM), is retried, checks the state is empty before removing the stack, and a failed
teardown names what is left. tests/test_ops_bench_signals.py drives the real Automation API
and a fake Pulumi CLI in a subprocess."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, MutableMapping
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from pulumi.automation import CommandError, CommandResult, ConcurrentUpdateError, ConfigValue

from helpers import load_platform, present, workload_of
from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.app.ops import bench
from trainstack.app.ops.bench import BenchError, Deps, JobOutcome, held, jobset_state, prepare, run_bench, set_path, teardown, wait_for_jobset
from trainstack.app.ops.cli import bench_command
from trainstack.app.ops.reap import name_expires, parse_expires
from trainstack.core.errors import ConfigError

RECIPE = "a3ultra-405b"
NOW = datetime(2026, 11, 23, 2, 30, tzinfo=UTC)
STACK_URN = "urn:pulumi:s::trainstack::pulumi:pulumi:Stack::trainstack-s"
PROVIDER_URN = "urn:pulumi:s::trainstack::pulumi:providers:gcp::default_8_41_1"
CLUSTER_URN = "urn:pulumi:s::trainstack::trainstack:infra:Platform$gcp:container/cluster:Cluster::bench-cluster"


def command_error(message: str) -> Exception:
    return CommandError(CommandResult(stdout="", stderr=f"Updating...\nerror: {message}", code=255))


def resource(urn: str, custom: bool = True) -> dict[str, Any]:
    return {"urn": urn, "custom": custom, "type": urn.split("::")[-2].rsplit("$", 1)[-1]}


class FakeCommand:
    """The CancellableCommand a bench drives: `cancel` stands for the CLI's SIGINT."""

    def __init__(self, log: list[Any]):
        self.log, self.cancelled = log, False

    def cancel(self) -> None:
        self.log.append("SIGINT to the CLI")
        self.cancelled = True

    def resume(self) -> None:
        self.cancelled = False


class FakeWorkspace:
    def __init__(self, log: list[Any], remove_failures: int = 0):
        self.log, self.remove_failures = log, remove_failures
        self.pulumi_command = FakeCommand(log)

    def remove_stack(self, stack_name: str) -> None:
        self.log.append(("remove", stack_name))
        if self.remove_failures:
            self.remove_failures -= 1
            raise command_error("the backend is unreachable")

    def install(self, *, on_output: Callable[[str], Any]) -> None:
        raise AssertionError("a single-stack bench installs nothing")


class FakeStack:
    """Records every call; `on_up` decides what `up` does, `state` what `stack export` shows."""

    def __init__(
        self,
        name: str,
        log: list[Any],
        on_up: Callable[[], Any],
        destroy_errors: list[Exception] | None = None,
        remove_failures: int = 0,
        state: dict[str, Any] | None = None,
    ):
        self.name, self.log, self.on_up = name, log, on_up
        self.destroy_errors = list(destroy_errors or [])
        self.workspace = FakeWorkspace(log, remove_failures)
        self.config: dict[str, str] = {}
        self.state = state or {"resources": [resource(STACK_URN, custom=False), resource(PROVIDER_URN)]}

    def set_all_config(self, config: MutableMapping[str, ConfigValue]) -> None:
        self.log.append("config")
        self.config = {k: v.value for k, v in config.items()}

    def up(self, *, on_output: Callable[[str], Any], on_event: Callable[[Any], Any] | None = None) -> Any:
        self.log.append("up")
        return self.on_up()

    def preview(self, *, on_output: Callable[[str], Any], diff: bool, on_event: Callable[[Any], Any] | None = None) -> Any:
        raise AssertionError("a bench does not preview")

    def refresh(self, *, on_output: Callable[[str], Any]) -> None:
        self.log.append("refresh")

    def destroy(self, *, on_output: Callable[[str], Any]) -> None:
        self.log.append("destroy")
        if self.destroy_errors:
            raise self.destroy_errors.pop(0)

    def export_stack(self) -> Any:
        self.log.append("export")
        return SimpleNamespace(version=3, deployment=self.state)

    def cancel(self) -> None:
        self.log.append("cancel")


def up_ok() -> Any:
    return SimpleNamespace(outputs={"kubeconfig": SimpleNamespace(value="apiVersion: v1\nkind: Config\n", secret=True)})


def nemo_log(steps: int = 30, seconds: float = 250.0) -> str:
    return "\n".join(f"Epoch 0: global_step={s} train_step_timing in s={seconds}" for s in range(steps)) + "\n"


GOODPUT_ENTRIES = [
    {"jsonPayload": {"event_type": "job_started", "event_time": 0}},
    {"jsonPayload": {"event_type": "checkpoint_saved", "step": 100, "event_time": 26000}},
    {"jsonPayload": {"event_type": "job_terminated", "event_time": 30000}},
]


class Harness:
    """A bench with every boundary faked; `stack` is the stack the factory created."""

    def __init__(self, on_up: Callable[[], Any] = up_ok, **stack_options: Any):
        self.log: list[Any] = []
        self.sleeps: list[float] = []
        self.created: FakeStack | None = None
        self.waited: list[tuple[Any, ...]] = []
        self.on_up, self.stack_options = on_up, stack_options
        ticks = iter(range(0, 10_000, 5))
        self.deps = Deps(
            create_stack=self.create,
            wait=self.wait,
            logs=lambda path, name, ns: nemo_log(),
            dump=lambda path: [],
            goodput=lambda jobset, project: GOODPUT_ENTRIES,
            sleep=self.sleeps.append,
            clock=lambda: float(next(ticks)),
            wall=lambda: NOW,
        )

    def create(self, name: str, root: Path) -> FakeStack:
        self.log.append(("create", name))
        self.created = FakeStack(name, self.log, self.on_up, **self.stack_options)
        return self.created

    @property
    def stack(self) -> FakeStack:
        """The stack the factory created (asserted: the bench got that far)."""
        return present(self.created)

    def wait(self, kubeconfig: Path, name: str, namespace: str, timeout_s: float, on_ready: Callable[[], None]) -> JobOutcome:
        self.waited.append((kubeconfig.read_text(), name, namespace, timeout_s))
        on_ready()
        return JobOutcome("succeeded", "JobSet finished")

    def run(self, tmp_path: Path) -> bench.BenchResult:
        return run_bench(spec(), tmp_path, self.deps, log_path=tmp_path / "result.leader.log")


def spec(**options: Any) -> bench.BenchSpec:
    args = {"now": NOW, "ttl_s": 8 * 3600.0, "timeout_s": 6 * 3600.0, "taken": [RECIPE], "token": "1a2b"}
    return prepare(RECIPE, raw_stack_config(RECIPE), **{**args, **options})


def signal_self(signum: int, until: Callable[[], bool] = lambda: False) -> None:
    """Send this process `signum`, then wait a moment (or until `until()`): its handler runs."""
    os.kill(os.getpid(), signum)
    for _ in range(50):
        if until():
            return
        time.sleep(0.01)


TEARDOWN = ["export", "destroy", "export", ("remove", "a3ultra-405b-bench-202611230230-1a2b")]  # destroy reads the state first


# ---------------------------------------------------------------------------------------------
# The run


def test_a_successful_bench_measures_and_tears_down(tmp_path: Path) -> None:
    harness = Harness()
    result = harness.run(tmp_path)
    name = "a3ultra-405b-bench-202611230230-1a2b"
    assert harness.log == [("create", name), "config", "up", *TEARDOWN]
    assert harness.waited == [("apiVersion: v1\nkind: Config\n", "llama31-405b", "default", 6 * 3600.0)]
    assert result.exit_code == 0 and result.error is None and present(result.teardown).ok
    assert result.job == {"name": "llama31-405b", "namespace": "default", "outcome": "succeeded", "detail": "JobSet finished"}
    mfu = result.metrics["mfu"]
    # 432 sequences of 8192 tokens a step (the recipe's one micro-batch per GPU) in 250 s: about 9% MFU.
    assert mfu["step_time_s"] == 250.0 and mfu["num_gpus"] == 432 and mfu["global_batch_size"] == 432 and 0.05 < mfu["mfu"] < 0.15
    goodput = result.metrics["goodput"]
    assert goodput["max_saved_step"] == 100 and goodput["goodput_pct"] == pytest.approx(100 * 100 * 250.0 / 30000)
    assert set(result.phases) == {"up", "wait", "collect", "teardown"} and all(p["ok"] for p in result.phases.values())
    assert (tmp_path / "result.leader.log").read_text() == nemo_log()
    written = json.loads(json.dumps(result.to_dict()))
    assert written["stack"] == name and written["exitCode"] == 0 and written["teardown"]["ok"] is True


def test_the_new_stack_gets_the_recipe_config_with_ephemeral_overrides(tmp_path: Path) -> None:
    harness = Harness()
    harness.run(tmp_path)
    config: dict[str, Any] = {k: json.loads(v) if v.startswith(("{", "[")) else v for k, v in harness.stack.config.items()}
    recipe = raw_stack_config(RECIPE)
    assert set(config) == set(recipe) | {"trainstack:ephemeral"}
    assert config["trainstack:workload"] == recipe["trainstack:workload"]
    cluster = config["trainstack:cluster"]
    assert cluster["deletionProtection"] is False and cluster["name"].startswith("a3ultra-405b-bench-") and len(cluster["name"]) <= 40
    assert config["trainstack:storage"]["disposable"] is True
    assert config["trainstack:ephemeral"] == {"expires": "2026-11-23t1030z"}
    assert load_platform(harness.stack.name, config).gpu_pool.node_count == 54  # what the program will read back


def test_teardown_refreshes_after_an_error_in_up(tmp_path: Path) -> None:
    def fail() -> Any:
        raise command_error("quota 'GPUS_ALL_REGIONS' exceeded")

    harness = Harness(on_up=fail)
    result = harness.run(tmp_path)
    assert result.error == "pulumi up failed: error: quota 'GPUS_ALL_REGIONS' exceeded"
    assert harness.log[2:] == ["up", "refresh", *TEARDOWN]
    assert result.phases["up"]["ok"] is False and present(result.teardown).ok and result.exit_code == 1


def test_teardown_runs_after_a_missing_kubeconfig_output(tmp_path: Path) -> None:
    harness = Harness(on_up=lambda: SimpleNamespace(outputs={"clusterName": SimpleNamespace(value="c")}))
    result = harness.run(tmp_path)
    assert "no 'kubeconfig' output" in present(result.error) and "clusterName" in present(result.error)
    assert harness.log[-4:] == TEARDOWN and result.exit_code == 1


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_during_up_cancels_the_cli_then_tears_down(tmp_path: Path, signum: int, code: int) -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    harness = Harness()

    def cancelled_up() -> Any:  # the CLI finishes its step, then fails "update canceled"
        command = harness.stack.workspace.pulumi_command
        signal_self(signum, until=lambda: command.cancelled)
        assert command.cancelled, "the signal did not cancel the command"
        raise command_error("update canceled")

    harness.on_up = cancelled_up
    result = harness.run(tmp_path)
    assert result.interrupted == signal.Signals(signum).name and result.error is None
    assert harness.log[2:] == ["up", "SIGINT to the CLI", "refresh", *TEARDOWN]
    assert not harness.stack.workspace.pulumi_command.cancelled, "teardown's commands must run"
    assert result.phases["up"]["ok"] is False and present(result.teardown).ok and result.exit_code == code
    assert {s: signal.getsignal(s) for s in before} == before


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_stack_init_lets_it_finish_and_removes_the_stack(tmp_path: Path, signum: int) -> None:
    harness = Harness()
    plain = harness.create

    def create(name: str, root: Path) -> FakeStack:
        signal_self(signum)
        return plain(name, root)

    harness.deps.create_stack = create
    result = harness.run(tmp_path)
    assert harness.log == [("create", harness.stack.name), "config", *TEARDOWN], "no up, so nothing to refresh"
    assert result.interrupted == signal.Signals(signum).name and present(result.teardown).ok and result.exit_code == 128 + signum


def test_a_signal_while_waiting_for_the_job_stops_at_once(tmp_path: Path) -> None:
    harness = Harness()

    def wait(*args: Any) -> JobOutcome:
        signal_self(signal.SIGTERM)
        raise AssertionError("the signal did not interrupt the wait")

    harness.deps.wait = wait
    result = harness.run(tmp_path)
    assert harness.log[2:] == ["up", *TEARDOWN], "no refresh: the update had finished"
    assert result.interrupted == "SIGTERM" and result.job["outcome"] == "not finished" and result.exit_code == 143


def test_a_signal_during_teardown_does_not_stop_it_but_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    harness = Harness()
    plain = harness.create

    def create(name: str, root: Path) -> FakeStack:
        stack = plain(name, root)
        destroy = stack.destroy

        def signalled_destroy(*, on_output: Callable[[str], Any]) -> None:
            signal_self(signal.SIGTERM)
            destroy(on_output=on_output)

        monkeypatch.setattr(stack, "destroy", signalled_destroy)
        return stack

    harness.deps.create_stack = create
    result = harness.run(tmp_path)
    assert "SIGINT to the CLI" not in harness.log and harness.log[-4:] == TEARDOWN
    assert result.job["outcome"] == "succeeded" and present(result.teardown).ok
    assert result.interrupted == "SIGTERM" and result.exit_code == 143, "a signalled run never exits 0"


def test_a_signal_between_steps_raises_only_as_the_next_one_begins() -> None:
    """Outside its blocks the guard only records a signal: nothing can interrupt teardown."""
    ran: list[str] = []
    with bench.SignalGuard() as guard:
        signal_self(signal.SIGTERM, until=lambda: guard.signum is not None)
        assert guard.signum == signal.SIGTERM
        for block in (guard.holding, guard.interruptible):
            with pytest.raises(bench.Interrupted), block():
                ran.append(block.__name__)
    assert ran == []


def test_a_failing_refresh_is_passed_over_and_destroy_still_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    log: list[Any] = []
    stack = FakeStack("s", log, up_ok)

    def failing_refresh(*, on_output: Callable[[str], Any]) -> None:
        raise command_error("refresh of bench-cluster: 500 backend error")

    monkeypatch.setattr(stack, "refresh", failing_refresh)
    sleeps: list[float] = []
    result = teardown(stack, sleeps.append, iter([0.0, 1.0]).__next__, refresh=True)
    assert log == ["export", "destroy", "export", ("remove", "s")] and sleeps == []
    assert result.ok and result.errors == ["attempt 1: refresh failed: error: refresh of bench-cluster: 500 backend error"]


def test_a_failing_destroy_is_retried_with_backoff(tmp_path: Path) -> None:
    harness = Harness(destroy_errors=[command_error("timeout"), command_error("timeout")])
    result = harness.run(tmp_path)
    assert present(result.teardown).ok and present(result.teardown).attempts == 3
    assert harness.sleeps == [60.0, 180.0]
    assert harness.log.count("destroy") == 3 and result.exit_code == 0
    assert present(result.teardown).errors == ["attempt 1: destroy failed: error: timeout", "attempt 2: destroy failed: error: timeout"]


def test_a_teardown_that_keeps_failing_exits_3_and_names_what_is_left_from_the_state(tmp_path: Path) -> None:
    state = {"resources": [resource(STACK_URN, custom=False), resource(PROVIDER_URN), resource(CLUSTER_URN)]}
    harness = Harness(destroy_errors=[command_error("permission denied")] * 3, state=state)
    result = harness.run(tmp_path)
    assert not present(result.teardown).ok and result.exit_code == 3
    assert harness.log.count("destroy") == 3 and harness.log[-1] == "export", "what is left is read from the state"
    assert not any(isinstance(e, tuple) and e[0] == "remove" for e in harness.log), "a stack with resources keeps its state"
    assert present(result.teardown).left == ["gcp:container/cluster:Cluster bench-cluster"]
    message = bench.leftovers(result.spec.stack, present(result.teardown), tmp_path, bench.reap_note(result.spec))
    assert "teardown left Pulumi stack 'a3ultra-405b-bench-202611230230-1a2b' holding: gcp:container/cluster:Cluster bench-cluster." in message
    assert "trainstack bench --teardown a3ultra-405b-bench-202611230230-1a2b" in message and "--project my-training-project" in message


def test_a_protected_resource_refuses_the_destroy_at_once_and_is_named(tmp_path: Path) -> None:
    protected = {**resource(CLUSTER_URN), "protect": True}
    harness = Harness(state={"resources": [resource(STACK_URN, custom=False), resource(PROVIDER_URN), protected]})
    result = harness.run(tmp_path)
    assert "destroy" not in harness.log and harness.sleeps == [], "refused before anything is deleted, and not retried"
    assert present(result.teardown).left == ["gcp:container/cluster:Cluster bench-cluster"] and result.exit_code == 3
    assert any(CLUSTER_URN in e and "destroy refused" in e for e in present(result.teardown).errors)
    assert "Its destroy was refused" in bench.leftovers(result.spec.stack, present(result.teardown), tmp_path)


def test_a_teardown_whose_state_cannot_be_read_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    harness = Harness(destroy_errors=[command_error("denied")] * 3)
    harness.run(tmp_path)  # the harness's stack
    stack = harness.stack
    stack.destroy_errors = [command_error("denied")] * 3

    def unreadable() -> Any:
        raise command_error("the backend is unreachable")

    monkeypatch.setattr(stack, "export_stack", unreadable)
    result = teardown(stack, lambda s: None, lambda: 0.0, refresh=False)
    assert not result.destroyed and result.left == [] and result.errors[-1] == "reading what is left from the state failed: error: the backend is unreachable"
    assert "and its state could not be read" in bench.leftovers(stack.name, result, tmp_path)


def test_a_state_still_holding_a_pending_operation_keeps_the_stack_and_exits_3(tmp_path: Path) -> None:
    state = {"resources": [resource(STACK_URN, custom=False)], "pending_operations": [{"resource": resource(CLUSTER_URN), "type": "creating"}]}
    harness = Harness(state=state)
    result = harness.run(tmp_path)
    assert harness.log[-2:] == ["destroy", "export"], "stack rm would erase the record of the pending create"
    teardown_result = present(result.teardown)
    assert (teardown_result.destroyed, teardown_result.removed, teardown_result.ok, result.exit_code) == (False, False, False, 3)
    assert teardown_result.pending == ["gcp:container/cluster:Cluster bench-cluster (creating)"] and teardown_result.left == []
    assert result.to_dict()["teardown"]["ok"] is False
    message = bench.leftovers(result.spec.stack, teardown_result, tmp_path)
    assert "holding: gcp:container/cluster:Cluster bench-cluster (creating), pending" in message
    assert "pulumi refresh --clear-pending-creates --stack a3ultra-405b-bench-202611230230-1a2b" in message


def test_held_ignores_the_stack_and_default_providers_only() -> None:
    explicit = "urn:pulumi:s::trainstack::pulumi:providers:kubernetes::cluster-provider"
    deployment = {"resources": [resource(STACK_URN, custom=False), resource(PROVIDER_URN), resource(explicit), resource(CLUSTER_URN)]}
    assert held(deployment) == (["pulumi:providers:kubernetes cluster-provider", "gcp:container/cluster:Cluster bench-cluster"], [])
    assert held({}) == ([], [])


def test_a_failing_stack_removal_is_retried_without_destroying_again(tmp_path: Path) -> None:
    harness = Harness(remove_failures=3)
    result = harness.run(tmp_path)
    assert present(result.teardown).destroyed and not present(result.teardown).removed and result.exit_code == 3
    assert harness.log.count("destroy") == 1 and harness.log.count("export") == 2, "the check before destroy, and after it"
    assert "empty Pulumi stack" in bench.leftovers(result.spec.stack, present(result.teardown), tmp_path)


def test_a_locked_stack_is_cancelled_and_the_step_runs_again_at_once(tmp_path: Path) -> None:
    stuck = ConcurrentUpdateError(CommandResult(stdout="", stderr="error: [409] Conflict: Another update is currently in progress.", code=255))
    harness = Harness(destroy_errors=[stuck])
    result = harness.run(tmp_path)
    assert harness.log[-7:] == ["export", "destroy", "cancel", *TEARDOWN]
    assert present(result.teardown).ok and harness.sleeps == []


def test_the_teardown_helper_alone() -> None:
    log: list[Any] = []
    stack = FakeStack("s", log, up_ok, destroy_errors=[RuntimeError("boom")])
    sleeps: list[float] = []
    result = teardown(stack, sleeps.append, iter([0.0, 42.0]).__next__, refresh=True, attempts=2, backoff=(5.0,))
    assert (result.ok, result.attempts, result.seconds, sleeps) == (True, 2, 42.0, [5.0])
    assert log == ["refresh", "export", "destroy", "export", "destroy", "export", ("remove", "s")], "the refresh that succeeded is not repeated"


# ---------------------------------------------------------------------------------------------
# Preparing


def test_names_expiry_and_cluster_limits() -> None:
    s = spec()
    assert s.stack == "a3ultra-405b-bench-202611230230-1a2b"
    assert parse_expires("2026-11-23t1030z") == s.expires == datetime(2026, 11, 23, 10, 30, tzinfo=UTC)
    other = spec(token="ffff")
    assert s.cluster != other.cluster and len(s.cluster) <= 40
    assert parse_expires("2026-11-23t1030z") == name_expires(s.cluster) == name_expires(f"{s.cluster}-net"), "reap reads the expiry in the names"
    long = bench.bench_cluster_name("a" * 40, s.stack, s.expires)
    assert len(long) == 40 and long.endswith(s.cluster[-22:]) and name_expires(long) == s.expires
    assert spec(name="my-bench").stack == "my-bench"


def test_prepare_refuses_what_would_hurt() -> None:
    with pytest.raises(BenchError, match=re.escape("taken by stacks/Pulumi.a3ultra-405b.yaml")):
        spec(name=RECIPE)
    with pytest.raises(BenchError, match=r"--ttl must be at least --timeout plus 2h .*4h < 6h \+ 2h"):
        spec(ttl_s=4 * 3600.0)
    raw = {**raw_stack_config(RECIPE), "gcp:credentials": {"secure": "v1:abc"}}
    with pytest.raises(BenchError, match=r"cannot copy secret config.*gcp:credentials"):
        prepare(RECIPE, raw, now=NOW, ttl_s=8 * 3600.0, timeout_s=3600.0, taken=[])
    with pytest.raises(ConfigError, match=r"trainstack:workload.precision = 'fp64'"):
        spec(sets=[("trainstack:workload.precision", "fp64")])


def test_set_overrides_follow_config_paths() -> None:
    s = spec(sets=[("gcp:project", "bench-project"), ("trainstack:workload.steps", 50), ("trainstack:cluster.authorizedNetworks[0].cidrBlock", "10.0.0.0/8")])
    assert s.project == "bench-project" and workload_of(s.config).steps == 50
    assert s.raw["trainstack:cluster"]["authorizedNetworks"][0]["cidrBlock"] == "10.0.0.0/8"
    assert s.raw["trainstack:storage"]["bucket"]["name"] == f"{s.cluster}-ckpt"
    raw: dict[str, Any] = {"a:b": {"c": 1}}
    with pytest.raises(BenchError, match="cannot set 'd'"):
        set_path(raw, "a:b.c.d", 2)
    with pytest.raises(BenchError, match=r"cannot go into 3"):
        set_path({"a:b": [1]}, "a:b[3].x", 2)
    with pytest.raises(BenchError, match="not a config key"):
        set_path(raw, "a:b..c", 2)


# ---------------------------------------------------------------------------------------------
# Waiting for the JobSet


def jobset(terminal: str | None) -> str:
    status: dict[str, Any] = (
        {"conditions": [{"type": "Failed", "status": "True", "message": "jobset failed due to max restarts"}]} if terminal == "Failed" else {}
    )
    if terminal:
        status["terminalState"] = terminal
    return json.dumps({"kind": "JobSet", "status": status})


def test_jobset_state_reads_the_terminal_state() -> None:
    assert jobset_state(json.loads(jobset(None))) is None
    assert jobset_state(json.loads(jobset("Completed"))) == JobOutcome("succeeded", "")
    assert jobset_state(json.loads(jobset("Failed"))) == JobOutcome("failed", "jobset failed due to max restarts")


def test_wait_polls_kubectl_until_the_jobset_finishes(tmp_path: Path) -> None:
    answers = [
        subprocess.CompletedProcess([], 1, "", 'Error from server (NotFound): jobsets.jobset.x-k8s.io "x" not found\n'),
        subprocess.CompletedProcess([], 0, jobset(None), ""),
        subprocess.CompletedProcess([], 0, jobset("Completed"), ""),
    ]
    calls: list[list[str]] = []

    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        return answers.pop(0)

    sleeps: list[float] = []
    outcome = wait_for_jobset(tmp_path / "kc", "x", "ns", 3600, run=run, clock=lambda: 0.0, sleep=sleeps.append, poll_s=30)
    assert outcome.status == "succeeded" and sleeps == [30, 30]
    assert calls[0] == ["kubectl", "--kubeconfig", str(tmp_path / "kc"), "get", "jobset", "x", "-n", "ns", "-o", "json"]


def test_wait_gives_up_at_the_timeout(tmp_path: Path) -> None:
    times = iter([0.0, 100.0, 200.0, 400.0])
    outcome = wait_for_jobset(
        tmp_path / "kc", "x", "ns", 300, run=lambda c, **k: subprocess.CompletedProcess(c, 0, jobset(None), ""), clock=lambda: next(times), sleep=lambda s: None
    )
    assert outcome == JobOutcome("timeout", "not finished after 0.0833333h; last seen: running")


# ---------------------------------------------------------------------------------------------
# The command


def test_bench_without_the_pulumi_cli_fails_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    result = CliRunner().invoke(bench_command, [RECIPE])
    assert result.exit_code == 2
    assert "the Pulumi CLI is not installed" in result.output and "curl -fsSL https://get.pulumi.com | sh" in result.output


def test_bench_rejects_bad_input_before_creating_anything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(bench, "run_bench", lambda *a, **k: pytest.fail("nothing may run"))
    runner = CliRunner()
    bad_ttl = runner.invoke(bench_command, [RECIPE, "--ttl", "soon"])
    assert bad_ttl.exit_code == 2 and "'soon' is not a duration" in bad_ttl.output
    short = runner.invoke(bench_command, [RECIPE, "--ttl", "1h"])
    assert short.exit_code == 2 and "--ttl must be at least --timeout" in short.output
    bad_set = runner.invoke(bench_command, [RECIPE, "--set", "novalue"])
    assert bad_set.exit_code == 2 and "expected KEY=VALUE" in bad_set.output


def test_bench_command_writes_the_result_and_exits_with_its_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")
    harness = Harness(destroy_errors=[command_error("denied")] * 3)
    monkeypatch.setattr(bench, "Deps", lambda: harness.deps)
    out = tmp_path / "out.json"
    result = CliRunner().invoke(bench_command, [RECIPE, "--result", str(out), "--project", "bench-project-1"])
    assert result.exit_code == 3, result.output
    written = json.loads(out.read_text())
    assert written["project"] == "bench-project-1" and written["teardown"]["ok"] is False and written["exitCode"] == 3
    assert "TEARDOWN FAILED" in result.output
    assert f"teardown of Pulumi stack {written['stack']!r} failed after 3 attempts (attempt 1: destroy failed: error: denied;" in result.output
    assert "and its state names no resource" in result.output, "the stack and its default provider are bookkeeping"


@pytest.mark.parametrize("stack", ["a3ultra-platform", "a3ultra-405b-job"])
def test_bench_refuses_a_stack_that_is_not_a_whole_recipe(stack: str) -> None:
    with pytest.raises(bench.BenchError, match=rf"'{stack}' is not a whole recipe"):
        prepare(stack, raw_stack_config(stack), now=NOW, ttl_s=8 * 3600.0, timeout_s=3600.0, taken=[])
