"""`trainstack up|preview|destroy` through the Automation API, against a fake stack; and the
bench's CancellableCommand against a fake Pulumi CLI."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner
from pulumi.automation import CommandError, CommandResult, StackNotFoundError

from fake_pulumi import FakePulumi
from trainstack.app.ops import automation
from trainstack.app.ops.cli import destroy_command, preview_command, up_command
from trainstack.app.program import _decode
from trainstack.app.stacks import project_root, raw_stack_config

STACK = "a3ultra-405b"


class FakeStack:
    def __init__(self, name: str, calls: list[Any], error: Exception | None = None):
        self.name, self.calls, self.error = name, calls, error

    def _do(self, what: str, **kwargs: Any) -> str:
        self.calls.append((what, self.name, kwargs))
        if self.error:
            raise self.error
        return what

    def up(self, *, on_output: Callable[[str], Any]) -> str:
        on_output("Updating (a3ultra-405b)")
        return self._do("up")

    def preview(self, *, on_output: Callable[[str], Any], diff: bool) -> str:
        return self._do("preview", diff=diff)

    def destroy(self, *, on_output: Callable[[str], Any]) -> str:
        return self._do("destroy")


@pytest.fixture
def pulumi_installed(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """A `pulumi` on PATH and fake stack openers recording (opener, name, root) and each call."""
    calls: list[Any] = []
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/local/bin/{name}")
    for opener in ("create_or_select", "select"):
        monkeypatch.setattr(automation, opener, lambda name, root, opener=opener: calls.append((opener, name, root)) or FakeStack(name, calls))
    return calls


@pytest.mark.parametrize("command", [up_command, preview_command, destroy_command])
def test_without_the_pulumi_cli_every_command_fails_at_once(monkeypatch: pytest.MonkeyPatch, command: Any) -> None:
    monkeypatch.setattr("shutil.which", lambda name: None)
    monkeypatch.setattr(automation, "create_or_select", lambda *a: pytest.fail("must not reach the Automation API"))
    result = CliRunner().invoke(command, ["no-such-stack", "--yes"] if command is destroy_command else ["no-such-stack"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: the Pulumi CLI is not installed (no `pulumi` on PATH): install it with "
        "`curl -fsSL https://get.pulumi.com | sh` (or see https://www.pulumi.com/docs/install/)"
    ]


def test_up_and_preview_drive_the_stack_in_the_project_root(pulumi_installed: list[Any]) -> None:
    runner = CliRunner()
    up = runner.invoke(up_command, [STACK])
    assert up.exit_code == 0, up.output
    assert "Updating (a3ultra-405b)" in up.output
    preview = runner.invoke(preview_command, [STACK])
    assert preview.exit_code == 0, preview.output
    root = project_root()
    assert pulumi_installed == [
        ("create_or_select", STACK, root),
        ("up", STACK, {}),
        ("create_or_select", STACK, root),
        ("preview", STACK, {"diff": True}),
    ]


def test_a_bad_stack_never_reaches_an_engine(pulumi_installed: list[Any]) -> None:
    result = CliRunner().invoke(up_command, ["nope"])
    assert result.exit_code == 2 and "unknown stack 'nope'" in result.output
    assert pulumi_installed == []


def test_destroy_asks_unless_yes(pulumi_installed: list[Any]) -> None:
    runner = CliRunner()
    declined = runner.invoke(destroy_command, [STACK], input="n\n")
    assert declined.exit_code == 1 and "Delete every resource of stack 'a3ultra-405b'?" in declined.output
    assert pulumi_installed == []
    done = runner.invoke(destroy_command, [STACK, "--yes"])
    assert done.exit_code == 0, done.output
    assert [c[0] for c in pulumi_installed] == ["select", "destroy"]


def test_a_failed_operation_exits_1_with_the_cli_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda name: "/usr/local/bin/pulumi")
    error = CommandError(CommandResult(stdout="", stderr="Previewing...\nerror: googleapi: Error 403: Permission denied", code=255))
    monkeypatch.setattr(automation, "create_or_select", lambda name, root: FakeStack(name, [], error))
    result = CliRunner().invoke(up_command, [STACK])
    assert result.exit_code == 1
    assert "error: pulumi up of stack 'a3ultra-405b' failed: error: googleapi: Error 403: Permission denied" in result.output


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
