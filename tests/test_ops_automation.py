"""`trainstack up|preview|destroy` through the Automation API, against a fake stack; and the
bench's CancellableCommand against a fake Pulumi CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner
from pulumi.automation import CommandError, CommandResult, StackNotFoundError

from fake_pulumi import FakePulumi
from trainstack.app.deploy.program import _decode
from trainstack.app.deploy.stacks import project_root, raw_stack_config
from trainstack.app.ops import automation
from trainstack.app.ops.cli import destroy_command, preview_command, up_command

STACK = "a3ultra-405b"


class FakeStack:
    def __init__(self, name: str, calls: list[Any], error: Exception | None = None):
        self.name, self.calls, self.error = name, calls, error

    def _do(self, what: str, **kwargs: Any) -> str:
        self.calls.append((what, self.name, kwargs))
        if self.error:
            raise self.error
        return what

    def up(self, *, on_output: Callable[[str], Any], on_event: Callable[[Any], Any] | None = None) -> str:
        on_output("Updating (a3ultra-405b)")
        return self._do("up")

    def preview(self, *, on_output: Callable[[str], Any], diff: bool, on_event: Callable[[Any], Any] | None = None) -> Any:
        self._do("preview", diff=diff)
        return SimpleNamespace(change_summary={"create": 1})

    def destroy(self, *, on_output: Callable[[str], Any]) -> str:
        return self._do("destroy")

    def export_stack(self) -> Any:
        self.calls.append(("export", self.name, {}))
        return SimpleNamespace(deployment={"resources": [{"urn": "urn:pulumi:s::trainstack::gcp:container/cluster:Cluster::cluster"}]})


@pytest.fixture
def pulumi_installed(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """A `pulumi` on PATH and fake stack openers recording (opener, name, root) and each call."""
    calls: list[Any] = []
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/local/bin/{name}")

    def recording(opener: str) -> Callable[[str, Path], FakeStack]:
        def open_stack(name: str, root: Path) -> FakeStack:
            calls.append((opener, name, root))
            return FakeStack(name, calls)

        return open_stack

    for opener in ("create_or_select", "select"):
        monkeypatch.setattr(automation, opener, recording(opener))
    return calls


@pytest.mark.parametrize("command", [up_command, preview_command, destroy_command])
def test_without_the_pulumi_cli_every_command_fails_at_once(monkeypatch: pytest.MonkeyPatch, command: Any) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    monkeypatch.setattr(automation, "create_or_select", lambda *a: pytest.fail("must not reach the Automation API"))
    result = CliRunner().invoke(command, ["no-such-stack", "--yes"] if command is not preview_command else ["no-such-stack"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        (
            "error: the Pulumi CLI is not installed (no `pulumi` on PATH): install it with "
            "`curl -fsSL https://get.pulumi.com | sh` (or see https://www.pulumi.com/docs/install/)"
        )
    ]


def test_up_and_preview_drive_the_stack_in_the_project_root(pulumi_installed: list[Any]) -> None:
    runner = CliRunner()
    up = runner.invoke(up_command, [STACK, "--yes"])
    assert up.exit_code == 0, up.output
    assert "Updating (a3ultra-405b)" in up.output
    preview = runner.invoke(preview_command, [STACK])
    assert preview.exit_code == 0, preview.output
    root = project_root()
    assert pulumi_installed == [
        ("create_or_select", STACK, root),
        ("preview", STACK, {"diff": True}),  # up previews first, on the stack it then updates
        ("up", STACK, {}),
        ("create_or_select", STACK, root),
        ("preview", STACK, {"diff": True}),
    ]


def test_a_bad_stack_never_reaches_an_engine(pulumi_installed: list[Any]) -> None:
    result = CliRunner().invoke(up_command, ["nope", "--yes"])
    assert result.exit_code == 2 and "unknown stack 'nope'" in result.output
    assert pulumi_installed == []


def test_destroy_asks_unless_yes(pulumi_installed: list[Any]) -> None:
    runner = CliRunner()
    declined = runner.invoke(destroy_command, [STACK], input="n\n")
    assert declined.exit_code == 1 and "Delete every resource of stack 'a3ultra-405b'?" in declined.output
    assert pulumi_installed == []
    done = runner.invoke(destroy_command, [STACK, "--yes"])
    assert done.exit_code == 0, done.output
    assert [c[0] for c in pulumi_installed] == ["select", "export", "destroy"]


def test_a_failed_operation_exits_1_with_the_cli_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: "/usr/local/bin/pulumi")
    error = CommandError(CommandResult(stdout="", stderr="Previewing...\nerror: googleapi: Error 403: Permission denied", code=255))
    monkeypatch.setattr(automation, "create_or_select", lambda name, root: FakeStack(name, [], error))
    result = CliRunner().invoke(up_command, [STACK, "--yes"])
    assert result.exit_code == 1
    assert "error: pulumi preview of stack 'a3ultra-405b' failed: error: googleapi: Error 403: Permission denied" in result.output


def test_run_reports_an_unopenable_stack() -> None:
    def missing(name: str, root: Path) -> Any:
        raise CommandError(CommandResult(stdout="", stderr="error: no stack named 'x' found", code=255))

    with pytest.raises(automation.OperationFailed, match="pulumi destroy of stack 'x' failed: error: no stack named 'x' found"):
        automation.run("destroy", "x", Path("."), missing)


def test_config_values_round_trip_through_the_program() -> None:
    raw = raw_stack_config(STACK)
    values = automation.config_values(raw)
    assert values["gcp:project"].value == "my-training-project" and not values["gcp:project"].secret
    assert {key: _decode(v.value) for key, v in values.items()} == raw


# ---------------------------------------------------------------------------------------------
# CancellableCommand, against the fake Pulumi CLI (tests/fake_pulumi) in real processes


@pytest.fixture
def fake_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakePulumi:
    fake = FakePulumi.install(tmp_path)
    for key, value in fake.env().items():
        monkeypatch.setenv(key, value)
    return fake


def test_a_created_stack_runs_the_cli_through_a_cancellable_command(fake_cli: FakePulumi, tmp_path: Path) -> None:
    stack = automation.create("s", tmp_path)
    assert isinstance(stack.workspace.pulumi_command, automation.CancellableCommand)
    lines: list[str] = []
    up = stack.up(on_output=lines.append)
    assert up.outputs["kubeconfig"].secret and up.outputs["kubeconfig"].value.startswith("apiVersion: v1")
    assert lines[0] == "Updating (s):" and "Resources:" in lines
    assert {p.command: p.pgid == p.pid for p in fake_cli.processes()} == {
        "version": False,  # the SDK's own version check, before any command
        "stack init": True,
        "up": True,
        "stack output": True,
        "stack history": True,
    }
    with pytest.raises(StackNotFoundError):
        automation.select("nope", tmp_path)


def test_cancel_sends_the_running_command_one_sigint_and_refuses_the_next_until_resumed(
    fake_cli: FakePulumi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PULUMI_HOLD", "up:bench-net")  # a step under way, to cancel in
    stack = automation.create("s", tmp_path)
    command = stack.workspace.pulumi_command

    def cancel_during_the_step() -> None:
        fake_cli.wait_for(lambda e: e["event"] == "held")
        command.cancel()
        fake_cli.wait_for(lambda e: e["event"] == "signal")
        fake_cli.release()

    canceller = threading.Thread(target=cancel_during_the_step)
    canceller.start()
    with pytest.raises(CommandError, match="update canceled"):
        stack.up(on_output=lambda line: None)
    canceller.join()
    [up] = [p for p in fake_cli.processes() if p.command == "up"]
    assert (up.signals, up.code, up.canceled) == (["SIGINT"], 255, True)
    with pytest.raises(CommandError, match="cancelled before it started"):
        stack.export_stack()
    command.resume()
    assert [r["type"] for r in stack.export_stack().deployment["resources"]] == ["pulumi:pulumi:Stack", "pulumi:providers:gcp", "gcp:compute/network:Network"]
    assert not fake_cli.stacks()["s"]["locked"], "the cancelled update released its lock"


def test_a_failing_output_callback_stops_echoing_but_not_reading(fake_cli: FakePulumi, tmp_path: Path) -> None:
    """An echo that fails (our stdout closed) must not leave the CLI's output unread."""
    stack = automation.create("s", tmp_path)
    echoed: list[str] = []

    def broken_echo(line: str) -> None:
        echoed.append(line)
        raise BrokenPipeError

    up = stack.up(on_output=broken_echo)
    assert echoed == ["Updating (s):"] and up.stdout.splitlines()[-1] == "Duration: 1s"


# ---------------------------------------------------------------------------------------------
# Destroy of a protected stack: `trainstack destroy` in a real process, the Automation API, and a
# fake CLI that destroys as the engine does under --skip-preview (tests/fake_pulumi/cli.py)

CLUSTER_URN = f"urn:pulumi:{STACK}::trainstack::gcp:container/cluster:Cluster::bench-cluster"


def deployed(fake: FakePulumi, *, protect: str = "") -> dict[str, str]:
    """STACK deployed by the fake CLI (`protect`: the resource names `up` protects); the environment to reach it."""
    env = {**os.environ, **fake.env(FAKE_PULUMI_PROTECT=protect)}
    for args in (["stack", "init", STACK], ["up", "--stack", STACK, "--yes", "--skip-preview"]):
        subprocess.run(["pulumi", *args], env=env, check=True, capture_output=True, text=True)
    return env


def cloud_resources(fake: FakePulumi) -> list[str]:
    return [r["urn"].rsplit("::", 1)[-1] for r in fake.stacks()[STACK]["resources"] if r["type"].startswith("gcp:")]


def trainstack(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    program = "from trainstack.app.cli import main; main()"
    return subprocess.run([sys.executable, "-c", program, *args], env=env, cwd=project_root(), capture_output=True, text=True, timeout=300)


def test_the_fake_cli_deletes_what_depends_on_a_protected_resource_under_skip_preview(tmp_path: Path) -> None:
    """The hazard, as the engine has it: the SDK's destroy deletes the pool, then fails at the cluster."""
    fake = FakePulumi.install(tmp_path)
    env = deployed(fake, protect="bench-cluster")
    previewed = subprocess.run(["pulumi", "destroy", "--stack", STACK, "--yes"], env=env, capture_output=True, text=True)
    assert previewed.returncode == 255 and "because it is protected" in previewed.stderr
    assert cloud_resources(fake) == ["bench-net", "bench-cluster", "bench-gpus"], "the preview refuses before any delete"
    skipped = subprocess.run(["pulumi", "destroy", "--stack", STACK, "--yes", "--skip-preview"], env=env, capture_output=True, text=True)
    assert skipped.returncode == 255 and CLUSTER_URN in skipped.stderr
    assert cloud_resources(fake) == ["bench-net", "bench-cluster"], "the pool went first; what the cluster needs stays"
    assert not fake.stacks()[STACK]["locked"]


def test_trainstack_destroy_of_a_protected_stack_deletes_nothing_and_names_it(tmp_path: Path) -> None:
    fake = FakePulumi.install(tmp_path)
    env = deployed(fake, protect="bench-cluster")
    done = trainstack("destroy", STACK, "--yes", env=env)
    assert done.returncode == 1, done.stderr
    assert f"refused to destroy stack '{STACK}': it holds 1 protected resource(s), {CLUSTER_URN}" in done.stderr
    assert "Nothing was deleted" in done.stderr and "Traceback" not in done.stderr
    assert cloud_resources(fake) == ["bench-net", "bench-cluster", "bench-gpus"]
    assert "destroy" not in fake.commands() and "stack export" in fake.commands()


def test_trainstack_destroy_of_an_unprotected_stack_deletes_everything(tmp_path: Path) -> None:
    fake = FakePulumi.install(tmp_path)
    env = deployed(fake)
    done = trainstack("destroy", STACK, "--yes", env=env)
    assert done.returncode == 0, done.stderr
    assert cloud_resources(fake) == [] and "destroy" in fake.commands()


# ---------------------------------------------------------------------------------------------
# a safe `up`, against the fake Pulumi CLI: a summary, Pulumi's preview and its hazards, then a question

LUSTRE_REPLACED = json.dumps([["replace", "gcp:lustre/instance:Instance", "data"]])


def test_up_without_a_terminal_and_without_yes_refuses_before_anything_runs(tmp_path: Path) -> None:
    fake = FakePulumi.install(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", "from trainstack.app.cli import main; main()", "up", STACK],
        env={**os.environ, **fake.env()},
        cwd=project_root(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and "there is no terminal to ask: pass --yes" in done.stderr
    assert fake.processes() == [], "neither a preview nor an update ran"


def test_up_with_yes_shows_the_plan_the_preview_and_its_hazards_then_deploys(tmp_path: Path) -> None:
    fake = FakePulumi.install(tmp_path)
    done = trainstack("up", STACK, "--yes", env={**os.environ, **fake.env(FAKE_PULUMI_PREVIEW=LUSTRE_REPLACED)})
    assert done.returncode == 0, done.stderr
    assert "432 GPUs, est. $4,580.38/h" in done.stdout
    assert "changes: 5 to create, 0 to update, 1 to replace, 0 to delete, 0 unchanged" in done.stdout
    assert "warning: DATA: the Lustre instance data is replaced: its data is lost" in done.stderr
    assert "gcp:project = 'my-training-project': is the shipped examples' placeholder project" in done.stderr
    assert [c for c in fake.commands() if c in ("preview", "up")] == ["preview", "up"]
    assert cloud_resources(fake) == ["bench-net", "bench-cluster", "bench-gpus"]


def test_up_on_a_terminal_asks_and_a_no_deploys_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakePulumi.install(tmp_path)
    for name, value in fake.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("trainstack.app.ops.cli.interactive", lambda: True)
    declined = CliRunner().invoke(up_command, [STACK], input="n\n")
    assert declined.exit_code == 1 and "Deploy these changes to stack 'a3ultra-405b'? [y/N]" in declined.output
    assert "preview" in fake.commands() and "up" not in fake.commands()
    assert cloud_resources(fake) == []
