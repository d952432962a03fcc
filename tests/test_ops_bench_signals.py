"""SIGINT and SIGTERM reaching a real `trainstack bench`: the command line, the bench flow and the
Automation API run in a child process against a fake Pulumi CLI (tests/fake_pulumi) that takes
signals as the Go CLI does, since pipes, process groups and signals are what matter here. The
signals go to the bench's whole process group, as a terminal's Ctrl-C does: a CLI sharing that
group would get them too.

The children fork from a forkserver that has imported trainstack once (some 4 s), so each run takes
about a second."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_pulumi import DEADLINE_S, FakePulumi, Process, driver
from fake_pulumi.bench_process import Bench, forkserver_importing, starter
from helpers import present
from trainstack.app.deploy.stacks import project_root

TEARDOWN = ["stack export", "destroy", "stack history", "stack export", "stack rm"]  # protected? destroy, its summary, empty? remove
SETUP = ["version", "stack init", "config set-all"]
UP = ["up", "stack output", "stack output", "stack history"]  # an up that finished reads its outputs
SIGNALS = pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])


@pytest.fixture(scope="module")
def forkserver() -> multiprocessing.context.BaseContext:
    return forkserver_importing("trainstack.app.cli", "trainstack.app.ops.bench")


@pytest.fixture
def run(forkserver: Any, tmp_path: Path) -> Iterator[Callable[..., Bench]]:
    yield from starter(forkserver, tmp_path, driver.run)


def held(at: str) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e["event"] == "held" and e["at"] == at


def sigint_received(e: dict[str, Any]) -> bool:
    return e["event"] == "signal"


def assert_ended_by_themselves(processes: list[Process]) -> None:
    """No CLI process was killed (SIGTERM, SIGPIPE, SIGKILL) or terminated by a second SIGINT, and
    each but `pulumi version` (the SDK's own check) ran in a process group of its own."""
    assert [p for p in processes if p.code is None or p.terminated] == []
    assert [p for p in processes if p.pgid != p.pid and p.command != "version"] == []


def assert_clean(bench: Bench, code: int, interrupted: str | None) -> dict[str, Any]:
    assert bench.exit_code() == code, bench.stderr()
    result = bench.result()
    assert (result["exitCode"], result["interrupted"], result["teardown"]["ok"]) == (code, interrupted, True)
    assert bench.cli.stacks() == {}, "the backend holds nothing: no stack, no resource, no pending operation"
    return result


@SIGNALS
def test_a_signal_during_up_cancels_the_update_then_tears_down(run: Callable[..., Bench], signum: int) -> None:
    bench = run(FAKE_PULUMI_HOLD="up:bench-net")
    bench.signal_when(signum, held("up:bench-net"))
    bench.cli.wait_for(sigint_received)
    bench.cli.release()  # the step under way completes, then the update stops
    result = assert_clean(bench, 128 + signum, signal.Signals(signum).name)
    [up] = bench.processes("up")
    assert (up.signals, up.code, up.canceled) == (["SIGINT"], 255, True), "one SIGINT: the CLI's graceful cancel"
    created = [e["urn"].rsplit("::", 1)[-1] for e in bench.cli.events() if e["event"] == "step" and e["op"] == "up"]
    assert created[-1] == "bench-net", "the step under way completed, and no other began"
    assert_ended_by_themselves(bench.cli.processes())
    # The update released its lock: no `cancel`; refresh first, since it did not finish.
    assert bench.cli.commands() == [*SETUP, "up", "refresh", "stack history", *TEARDOWN]
    assert result["phases"]["up"]["ok"] is False and result["error"] is None
    assert "cancelling the running pulumi command" in bench.stderr()


@SIGNALS
def test_a_signal_while_the_job_runs_tears_down_at_once(run: Callable[..., Bench], signum: int) -> None:
    bench = run(job_s=60.0)
    bench.signal_when(signum, lambda e: e["event"] == "job")
    result = assert_clean(bench, 128 + signum, signal.Signals(signum).name)
    assert bench.cli.commands() == [*SETUP, *UP, *TEARDOWN]
    assert all(p.signals == [] for p in bench.cli.processes())
    assert_ended_by_themselves(bench.cli.processes())
    assert result["job"]["outcome"] == "not finished"


@SIGNALS
def test_a_signal_during_teardown_neither_stops_it_nor_exits_0(run: Callable[..., Bench], signum: int) -> None:
    bench = run(FAKE_PULUMI_HOLD="destroy:bench-cluster")
    bench.signal_when(signum, held("destroy:bench-cluster"))
    bench.wait_for_stderr("teardown is running and continues")
    bench.cli.release()
    result = assert_clean(bench, 128 + signum, signal.Signals(signum).name)
    [destroy] = bench.processes("destroy")
    assert (destroy.signals, destroy.code) == ([], 0), "destroy is not cancelled"
    assert bench.cli.commands() == [*SETUP, *UP, *TEARDOWN]
    assert_ended_by_themselves(bench.cli.processes())
    assert result["job"]["outcome"] == "succeeded"


@SIGNALS
def test_a_signal_during_stack_init_lets_it_finish_and_removes_the_stack(run: Callable[..., Bench], signum: int) -> None:
    bench = run(FAKE_PULUMI_HOLD="stack init")
    bench.signal_when(signum, held("stack init"))
    bench.wait_for_stderr("stopping once the running pulumi command is done")
    bench.cli.release()
    result = assert_clean(bench, 128 + signum, signal.Signals(signum).name)
    [init] = bench.processes("stack init")
    assert (init.signals, init.code) == ([], 0)
    assert bench.cli.commands() == [*SETUP, *TEARDOWN], "no up, no refresh; the empty stack is removed"
    assert "up" not in result["phases"]


def test_an_update_killed_from_outside_is_cancelled_and_what_it_left_is_named(run: Callable[..., Bench]) -> None:
    """An update killed mid-create (here by SIGKILL) leaves the lock and a pending create: teardown
    cancels the lock only then, refreshes and destroys, but keeps the stack and exits 3."""
    bench = run(FAKE_PULUMI_DIE_AT="up:bench-cluster")
    assert bench.exit_code() == 3, bench.stderr()
    [up] = bench.processes("up")
    assert up.code is None, "the fake killed itself"
    assert bench.cli.commands() == [*SETUP, "up", "refresh", "cancel", "refresh", "stack history", "stack export", "destroy", "stack history", "stack export"]
    [refused, _] = bench.processes("refresh")
    assert refused.code == 255
    teardown = bench.result()["teardown"]
    assert (teardown["ok"], teardown["destroyed"], teardown["removed"]) == (False, False, False)
    assert teardown["pending"] == ["gcp:container/cluster:Cluster bench-cluster (creating)"] and teardown["left"] == []
    [state] = bench.cli.stacks().values()
    assert state["pending_operations"] and not state["resources"] and not state["locked"], "kept: its state records the pending create"
    assert "holding: gcp:container/cluster:Cluster bench-cluster (creating), pending" in bench.stderr()


# ---------------------------------------------------------------------------------------------
# `trainstack bench --teardown NAME`: what CI's teardown job runs after a bench job was cancelled


def teardown_alone(cli: FakePulumi, name: str, **knobs: str) -> subprocess.CompletedProcess[str]:
    program = "from trainstack.app.cli import main; main()"
    env = {**os.environ, **cli.env(**knobs)}
    return subprocess.run(
        [sys.executable, "-c", program, "bench", "--teardown", name], env=env, cwd=project_root(), capture_output=True, text=True, timeout=DEADLINE_S
    )


def left_by_a_killed_run(cli: FakePulumi, name: str, protect: str = "") -> None:
    """A bench stack whose `up` finished its steps and was then killed before releasing its lock."""
    env = {**os.environ, **cli.env(FAKE_PULUMI_PROTECT=protect)}
    for args in (["stack", "init", name], ["up", "--yes", "--skip-preview", "--stack", name]):
        subprocess.run([str(cli.bin / "pulumi"), *args], env=env, check=True, capture_output=True)
    (cli.home / "stacks" / f"{name}.lock").write_text("4242")  # the killed CLI's lock (fake_pulumi/cli.py Update)


def test_teardown_alone_cancels_the_lock_a_killed_run_left_and_removes_the_stack(tmp_path: Path) -> None:
    cli = FakePulumi.install(tmp_path)
    left_by_a_killed_run(cli, "b-1")
    done = teardown_alone(cli, "b-1")
    assert done.returncode == 0, done.stderr
    assert "torn down and removed stack 'b-1'" in done.stdout and cli.stacks() == {}
    assert [c for c in cli.commands() if c not in ("version", "stack select")][2:] == ["refresh", "cancel", "refresh", "stack history", *TEARDOWN]


def test_teardown_alone_of_no_stack_does_nothing(tmp_path: Path) -> None:
    cli = FakePulumi.install(tmp_path)
    done = teardown_alone(cli, "b-2")
    assert done.returncode == 0 and "no stack 'b-2': nothing to tear down" in done.stdout, done.stderr


def test_teardown_alone_refuses_a_protected_stack_names_what_is_left_and_exits_3(tmp_path: Path) -> None:
    cli = FakePulumi.install(tmp_path)
    left_by_a_killed_run(cli, "b-3", protect="bench-cluster")
    done = teardown_alone(cli, "b-3")
    assert done.returncode == 3, done.stderr
    assert "destroy" not in cli.commands() and len(cli.stacks()["b-3"]["resources"]) == 5, "nothing deleted"
    assert (
        "teardown left Pulumi stack 'b-3' holding: gcp:compute/network:Network bench-net; gcp:container/cluster:Cluster bench-cluster; gcp:container/nodePool:NodePool bench-gpus"
        in done.stderr
    )
    assert "Its destroy was refused" in done.stderr and "Traceback" not in done.stderr


# ---------------------------------------------------------------------------------------------
# The fake itself: killed mid-update, it leaves what the Go CLI leaves


# How each way of dying ends the process, and whether the step under way stays pending: SIGPIPE
# strikes at the write that reports the step done, after it was recorded.
DEATHS = {"SIGTERM": (-signal.SIGTERM, True), "SIGPIPE": (-signal.SIGPIPE, False), "a second SIGINT": (255, True)}


@pytest.mark.parametrize("how", DEATHS)
def test_the_fake_cli_killed_mid_update_leaves_the_stack_locked(tmp_path: Path, how: str) -> None:
    cli = FakePulumi.install(tmp_path)
    env = {**os.environ, **cli.env(FAKE_PULUMI_HOLD="up:bench-net")}
    pulumi = str(cli.bin / "pulumi")
    subprocess.run([pulumi, "stack", "init", "s"], env=env, check=True, capture_output=True)
    up = subprocess.Popen([pulumi, "up", "--yes", "--skip-preview", "--stack", "s"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    cli.wait_for(held("up:bench-net"))
    if how == "SIGTERM":
        up.send_signal(signal.SIGTERM)
    elif how == "SIGPIPE":
        present(up.stdout).close()  # its reader goes away: it dies on its next write
        cli.release()
    else:
        up.send_signal(signal.SIGINT)
        cli.wait_for(sigint_received)
        up.send_signal(signal.SIGINT)
    code, pending = DEATHS[how]
    assert up.wait(DEADLINE_S) == code
    state = cli.stacks()["s"]
    assert state["locked"] and [op["resource"]["type"] for op in state["pending_operations"]] == (["gcp:compute/network:Network"] if pending else [])
    destroy = subprocess.run([pulumi, "destroy", "--yes", "--skip-preview", "--stack", "s"], env=env, capture_output=True, text=True, check=False)
    assert destroy.returncode == 255 and "[409] Conflict: Another update is currently in progress." in destroy.stderr
