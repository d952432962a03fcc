"""A fake Pulumi CLI on PATH (cli.py behind a `pulumi` shim), and what tests read back from it:
the processes it ran (command, signals received, how each ended) and the stacks it holds."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from fake_cli import FakeCli

T = TypeVar("T")


@dataclass
class Process:
    """One run of the fake CLI, from its log lines."""

    pid: int
    command: str  # its words without flags: "up", "stack rm", ...
    pgid: int
    stack: str | None  # the stack it worked on (`--stack`, or the name `stack init` and `stack rm` take)
    signals: list[str] = field(default_factory=list)
    code: int | None = None  # None: it never exited by itself (killed)
    canceled: bool = False
    terminated: bool = False


@dataclass
class FakePulumi(FakeCli):
    """The fake CLI's bin directory (with `pulumi`, and `kubectl` and `gke-gcloud-auth-plugin`
    stubs for the bench's tool check) and its state directory."""

    name = "pulumi"
    cli = Path(__file__).resolve().parent / "cli.py"
    stubs: ClassVar[Mapping[str, str]] = {"kubectl": "exit 1", "gke-gcloud-auth-plugin": "exit 1"}

    def events(self) -> list[dict[str, Any]]:
        return self.logged()

    def processes(self) -> list[Process]:
        runs: dict[int, Process] = {}
        for event in self.events():
            if event["event"] == "start":
                argv = event["argv"]
                named = argv[argv.index("--stack") + 1] if "--stack" in argv else None
                words = [a for a in argv if not a.startswith("--") and a != named]
                command = " ".join(words[:2] if words[:1] in (["stack"], ["config"]) else words[:1])
                if command in ("stack init", "stack rm") and len(words) > 2:
                    named = words[2]
                runs[event["pid"]] = Process(event["pid"], command, event["pgid"], named)
            run = runs.get(event["pid"])
            if run is None:  # the bench's own events (the job)
                continue
            if event["event"] == "signal":
                run.signals.append(event["signal"])
            elif event["event"] == "exit":
                run.code, run.canceled, run.terminated = event["code"], event.get("canceled", False), event.get("terminated", False)
        return list(runs.values())

    def commands(self) -> list[str]:
        return [p.command for p in self.processes()]

    def stacks(self) -> dict[str, dict[str, Any]]:
        """Every stack's state, and whether it is locked."""
        folder = self.home / "stacks"
        found = sorted(folder.glob("*.json")) if folder.exists() else []
        return {p.stem: {**json.loads(p.read_text()), "locked": p.with_suffix(".lock").exists()} for p in found}

    def release(self) -> None:
        """Let the held step (FAKE_PULUMI_HOLD) go on."""
        (self.home / "release").touch()

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first logged event matching `predicate`, polling until it shows up."""
        return poll(
            lambda: next((e for e in self.events() if predicate(e)), None),
            lambda: f"no such event from the fake pulumi within {DEADLINE_S}s; seen: {self.events()}",
        )


# How long a test waits for something the bench or the fake CLI should do. Generous, for a loaded
# 2-core machine: waits end as soon as the thing happens.
DEADLINE_S = 120.0


def poll(found: Callable[[], T | None], failure: Callable[[], str]) -> T:
    """`found()`'s first non-empty value, polled every 10 ms; TimeoutError(`failure()`) after DEADLINE_S."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.01)
    raise TimeoutError(failure())
