"""`trainstack bench` in a child process, against the fake CLI: the real command line, bench
flow and Automation API; only the job's boundaries (wait, logs, goodput) and teardown's backoff
sleeps are faked."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

from trainstack.app.cli import main
from trainstack.app.ops import bench, bench_fleet
from trainstack.app.ops.bench import Deps, JobOutcome

RECIPE = "a3ultra-405b"
STACK = "a3ultra-405b-bench-signals"


def run(env: dict[str, str], workdir: str, job_s: float) -> None:
    """Run the bench (the job "runs" for `job_s` seconds) in a process group of its own, as a
    shell runs a job, with its output in `workdir`/stdout and /stderr; exits with its code."""
    os.setpgrp()
    for fd, name in ((1, "stdout"), (2, "stderr")):
        os.dup2(os.open(Path(workdir) / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
    os.environ.update(env)
    home = Path(env["FAKE_PULUMI_HOME"])

    def wait(kubeconfig: Path, name: str, namespace: str, timeout_s: float, on_ready: Callable[[], None]) -> JobOutcome:
        with open(home / "calls.jsonl", "a") as log:
            log.write(json.dumps({"event": "job", "pid": os.getpid(), "t": time.time()}) + "\n")
        time.sleep(job_s)
        return JobOutcome("succeeded", "JobSet finished")

    with mock.patch.object(
        bench,
        "Deps",
        return_value=Deps(wait=wait, logs=lambda *args: "no step times\n", dump=lambda path: [], goodput=lambda *args: [], sleep=lambda seconds: None),
    ):
        main(["bench", RECIPE, "--name", STACK, "--timeout", "1h", "--ttl", "3h", "--result", str(Path(workdir) / "result.json")], prog_name="trainstack")


FLEET_JOB = "a3mega-gpt3-175b-fleet-job"
FLEET_BENCH = "fleet-bench-signals"
WORKER = "a3mega-east4"  # the worker the fake MultiKueue dispatches the job to


def run_fleet(env: dict[str, str], workdir: str, job_s: float) -> None:
    """`trainstack bench` of the fleet job, as `run`; the job "runs" on WORKER and is watched
    with that worker's kubeconfig."""
    os.setpgrp()
    for fd, name in ((1, "stdout"), (2, "stderr")):
        os.dup2(os.open(Path(workdir) / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
    os.environ.update(env)
    home = Path(env["FAKE_PULUMI_HOME"])

    def watch(manager: Path, workers: dict[str, Path], name: str, namespace: str, timeout_s: float) -> bench_fleet.FleetRun:
        with open(home / "calls.jsonl", "a") as log:
            log.write(json.dumps({"event": "job", "pid": os.getpid(), "t": time.time(), "workers": sorted(workers), "manager": manager.read_text()}) + "\n")
        time.sleep(job_s)
        return bench_fleet.FleetRun(JobOutcome("succeeded", "JobSet finished"), WORKER, "no step times\n")

    with mock.patch.object(
        bench_fleet,
        "FleetDeps",
        return_value=bench_fleet.FleetDeps(watch=watch, goodput=lambda *args: [], sleep=lambda seconds: None),
    ):
        main(
            ["bench", FLEET_JOB, "--name", FLEET_BENCH, "--timeout", "1h", "--ttl", "3h", "--result", str(Path(workdir) / "result.json")],
            prog_name="trainstack",
        )


def run_timed(env: dict[str, str], workdir: str, job_s: float) -> None:
    """`trainstack bench` as `run`, compared with `workdir`/baseline.json: the job's pods become
    ready (the bench dumps `workdir`/dump.json then) and its leader's log is `workdir`/leader.log."""
    os.setpgrp()
    for fd, name in ((1, "stdout"), (2, "stderr")):
        os.dup2(os.open(Path(workdir) / name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
    os.environ.update(env)
    dumped = Path(workdir) / "dumped"

    def wait(kubeconfig: Path, name: str, namespace: str, timeout_s: float, on_ready: Callable[[], None]) -> JobOutcome:
        on_ready()
        return JobOutcome("succeeded", "JobSet finished")

    def dump(kubeconfig: Path) -> list[dict[str, Any]]:
        with dumped.open("a") as marks:
            marks.write("dump\n")
        return json.loads((Path(workdir) / "dump.json").read_text())["items"]

    deps = Deps(wait=wait, logs=lambda *args: (Path(workdir) / "leader.log").read_text(), dump=dump, goodput=lambda *args: [], sleep=lambda seconds: None)
    with mock.patch.object(bench, "Deps", return_value=deps):
        args = ["bench", RECIPE, "--name", STACK, "--timeout", "1h", "--ttl", "3h", "--result", str(Path(workdir) / "result.json")]
        main([*args, "--baseline", str(Path(workdir) / "baseline.json"), "--tolerance", "10", "--slack", "5s"], prog_name="trainstack")
