"""A real `trainstack bench` (single-stack or fleet) in a child process against its own fake Pulumi
CLI, forked from a forkserver that has imported trainstack once; and the pytest pieces that start
and reap them."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fake_pulumi import DEADLINE_S, FakePulumi, Process, poll


def forkserver_importing(*modules: str) -> multiprocessing.context.BaseContext:
    """A forkserver context that preloads `modules` (what the driver imports; from the installed
    package, since the forkserver of Python 3.11 does not get this process's sys.path, with tests/
    on it, for its preloading)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(modules))
    return context


class Bench:
    """One bench child process (`target`: a driver function) against its own fake CLI."""

    def __init__(self, forkserver: Any, tmp_path: Path, target: Callable[[dict[str, str], str, float], None], job_s: float = 0.0, **knobs: str):
        self.tmp_path = tmp_path
        self.cli = FakePulumi.install(tmp_path)
        self.child = forkserver.Process(target=target, args=(self.cli.env(**knobs), str(tmp_path), job_s))
        self.child.start()

    def signal_when(self, signum: int, predicate: Callable[[dict[str, Any]], bool]) -> None:
        """Once the fake CLI logs an event matching `predicate`, signal the bench's process group."""
        self.cli.wait_for(predicate)
        os.killpg(self.child.pid, signum)

    def wait_for_stderr(self, text: str) -> None:
        """Until the bench has written `text` to stderr (its signal handler has run)."""
        poll(lambda: text in self.stderr(), lambda: f"the bench never wrote {text!r}; stderr:\n{self.stderr()}")

    def exit_code(self) -> int:
        self.child.join(DEADLINE_S)
        if self.child.is_alive():
            self.child.kill()
            pytest.fail(f"the bench did not end within {DEADLINE_S}s; stderr:\n{self.stderr()}")
        return self.child.exitcode

    def result(self) -> dict[str, Any]:
        return json.loads((self.tmp_path / "result.json").read_text())

    def stderr(self) -> str:
        return (self.tmp_path / "stderr").read_text()

    def processes(self, command: str) -> list[Process]:
        """The fake CLI's runs of `command`."""
        return [p for p in self.cli.processes() if p.command == command]


def starter(forkserver: Any, tmp_path: Path, target: Callable[[dict[str, str], str, float], None]) -> Iterator[Callable[..., Bench]]:
    """A fixture's body: yields a function that starts a Bench of `target`; kills any still
    running at the end, so a failed test leaves no bench behind."""
    started: list[Bench] = []

    def start(**options: Any) -> Bench:
        started.append(Bench(forkserver, tmp_path, target, **options))
        return started[-1]

    yield start
    for bench in started:
        if bench.child.is_alive():
            bench.child.kill()
