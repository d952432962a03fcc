"""The Pulumi Automation API, driving the same program as `pulumi up --stack <name>`.

Stacks are local-program stacks of the project root: the Pulumi CLI reads `Pulumi.yaml` there
and each stack's config from `stacks/Pulumi.<stack>.yaml` (stackConfigDir). Progress streams
to stdout as the CLI prints it. Everything here needs the Pulumi CLI on PATH.

Stacks from `create` (the bench's) run the CLI through `CancellableCommand`, so that an
interrupted bench cancels its update the way the CLI itself expects: see that class.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import IO, Any, Protocol, cast

from pulumi import automation as auto
from pulumi.automation.errors import create_command_error

from trainstack.core.errors import TrainstackError

INSTALL_HINT = (
    "the Pulumi CLI is not installed (no `pulumi` on PATH): install it with "
    "`curl -fsSL https://get.pulumi.com | sh` (or see https://www.pulumi.com/docs/install/)"
)


class PulumiCliMissing(TrainstackError):
    """No `pulumi` executable on PATH."""


class OperationFailed(TrainstackError):
    """A Pulumi operation ended in error (its output has already been streamed)."""


def require_pulumi() -> None:
    """Fail at once, before anything else, when the Pulumi CLI is missing."""
    if shutil.which("pulumi") is None:
        raise PulumiCliMissing(INSTALL_HINT)


class Workspace(Protocol):
    @property
    def pulumi_command(self) -> Any: ...  # what runs the CLI: a CancellableCommand in stacks from `create`

    def remove_stack(self, stack_name: str) -> None: ...

    def install(self, *, on_output: Callable[[str], Any]) -> None: ...


OnEvent = Callable[[auto.EngineEvent], Any]  # the Automation API's structured engine events (`up(on_event=...)`)


class Stack(Protocol):
    """The part of `pulumi.automation.Stack` trainstack uses (fakes implement the same)."""

    @property
    def name(self) -> str: ...

    @property
    def workspace(self) -> Workspace: ...

    def up(self, *, on_output: Callable[[str], Any], on_event: OnEvent | None = None) -> Any: ...

    def preview(self, *, on_output: Callable[[str], Any], diff: bool, on_event: Callable[[Any], Any] | None = None) -> Any: ...

    def refresh(self, *, on_output: Callable[[str], Any]) -> Any: ...

    def destroy(self, *, on_output: Callable[[str], Any]) -> Any: ...

    def export_stack(self) -> Any: ...

    def set_all_config(self, config: MutableMapping[str, auto.ConfigValue]) -> None: ...

    def cancel(self) -> None: ...


StackOpener = Callable[[str, Path], Stack]


class CancellableCommand(auto.PulumiCommand):
    """Runs the Pulumi CLI like the SDK's `PulumiCommand`, but each command in a process group of
    its own, and `cancel()` gives the running command a single SIGINT.

    The Go CLI cancels an update on its first SIGINT: it finishes the resource steps under way,
    records them and releases the stack's lock. A second SIGINT, a SIGTERM, or SIGPIPE on its
    first write after its pipes close end it at once, leaving the lock (the next update fails
    with 409) and any resource being created as a pending operation that destroy does not
    delete. With the SDK's runner the CLI shares our process group, so a terminal's Ctrl-C
    reaches it directly (forwarding ours would be its second), and an exception raised by a
    signal handler inside the runner's `with Popen` closes its pipes. Here it hears from us
    alone, once, and its output is read until it exits.
    """

    POLL_S = 0.05

    def __init__(self) -> None:
        super().__init__()
        self._cancelled = False

    def cancel(self) -> None:
        """Cancel the running command, and refuse to start others until `resume`. Safe in a signal
        handler: it only sets a flag, which the running command's watcher thread acts on."""
        self._cancelled = True

    def resume(self) -> None:
        """Let commands run again (teardown's, after a cancelled update)."""
        self._cancelled = False

    def run(
        self,
        args: list[str],
        cwd: str,
        additional_env: Mapping[str, str],
        on_output: Callable[[str], Any] | None = None,
        on_error: Callable[[str], Any] | None = None,
    ) -> auto.CommandResult:
        """`pulumi <args>` as the SDK runs it (non-interactive, the workspace's environment, output
        to the callbacks), in a process group of its own; a CommandError if it fails."""
        if self._cancelled:
            raise auto.CommandError(auto.CommandResult(stdout="", stderr="error: cancelled before it started", code=-1))
        end = args.index("--") if "--" in args else len(args)
        command = [self.command, *([] if "--non-interactive" in args[:end] else ["--non-interactive"]), *args]
        env = {**os.environ, **additional_env, "PULUMI_AUTOMATION_API": "true"}
        out: list[str] = []
        err: list[str] = []
        with subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env, encoding="utf-8", process_group=0
        ) as process:
            done = threading.Event()
            watcher = threading.Thread(target=self._interrupt_on_cancel, args=(process, done), daemon=True)
            readers = [
                threading.Thread(target=_read, args=(process.stdout, on_output, out)),
                threading.Thread(target=_read, args=(process.stderr, on_error, err)),
            ]
            for thread in (watcher, *readers):
                thread.start()
            try:
                for thread in readers:
                    thread.join()
                process.wait()
            finally:
                done.set()
            watcher.join()
        result = auto.CommandResult(stdout="\n".join(out), stderr="\n".join(err), code=process.returncode)
        if result.code != 0:
            raise create_command_error(result)
        return result

    def _interrupt_on_cancel(self, process: subprocess.Popen[str], done: threading.Event) -> None:
        """One SIGINT once a cancel is asked for while the command runs. Polled, because `cancel`
        must take no lock: the thread it interrupts may hold it."""
        while not done.wait(self.POLL_S):
            if self._cancelled:
                process.send_signal(signal.SIGINT)
                return


def _read(stream: IO[str] | None, callback: Callable[[str], Any] | None, lines: list[str]) -> None:
    """Read `stream` to its end, whatever `callback` does: a CLI whose output is not read blocks."""
    assert stream is not None
    for line in iter(stream.readline, ""):
        line = line.rstrip()
        lines.append(line)
        if callback is not None:
            try:
                callback(line)
            except Exception:  # e.g. our own stdout closed: stop echoing, keep reading
                callback = None


def create_or_select(name: str, root: Path) -> Stack:
    """The stack `name` of the project at `root`, created in the backend if it is new."""
    return _local(auto.create_or_select_stack(stack_name=name, work_dir=str(root)))


def select(name: str, root: Path) -> Stack:
    """The existing stack `name` of the project at `root`."""
    return _local(auto.select_stack(stack_name=name, work_dir=str(root)))


def create(name: str, root: Path) -> Stack:
    """A new stack `name` of the project at `root` (an error if it exists), its commands run by a
    CancellableCommand (`stack.workspace.pulumi_command`)."""
    options = auto.LocalWorkspaceOptions(pulumi_command=CancellableCommand())
    return _local(auto.create_stack(stack_name=name, work_dir=str(root), opts=options))


def _local(stack: auto.Stack) -> Stack:
    """`stack` as trainstack uses it. The SDK types a stack's workspace as the abstract Workspace, which has no
    `install`; a stack made from a work_dir, as each one here, has a LocalWorkspace, which has."""
    assert isinstance(stack.workspace, auto.LocalWorkspace)
    return cast(Stack, stack)


def echo(line: str) -> None:
    """Stream one line of the CLI's output."""
    print(line, flush=True)


def config_values(raw: Mapping[str, Any]) -> dict[str, auto.ConfigValue]:
    """A raw stack config as `set_all_config` values: objects and lists as their JSON text,
    which the program decodes as the CLI's own object config (types kept exactly)."""
    return {key: auto.ConfigValue(value if isinstance(value, str) else json.dumps(value, sort_keys=True)) for key, value in raw.items()}


def brief(exc: BaseException) -> str:
    """The last line of a failed command's stderr, else the exception's message."""
    text = str(exc)
    tail = text.rsplit(" stderr:", 1)[-1] if " stderr:" in text else text
    lines = [line.strip() for line in tail.strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


class DestroyRefused(TrainstackError):
    """The stack's state holds protected resources: nothing was deleted."""


def protected(deployment: Mapping[str, Any]) -> list[str]:
    """The URNs of the protected resources in a stack's state (the `deployment` of `pulumi stack
    export`: each resource's `protect`, apitype ResourceV3)."""
    return [r["urn"] for r in deployment.get("resources") or [] if r.get("protect")]


def destroy(stack: Stack) -> Any:
    """`pulumi destroy`, refused before anything is deleted while the state holds a protected
    resource.

    The Automation API destroys with `--skip-preview --yes` (pulumi/pulumi@1b59498
    sdk/python/lib/pulumi/automation/_stack.py:982). Without the preview, the engine checks
    `protect` only when the protected resource's own delete step applies (pkg/resource/deploy/
    step.go:647), and deletes run in reverse dependency order (step_generator.go:2747
    ScheduleDeletes), continuing past a protect error (step_executor.go:447): everything that
    depends on the protected resource, and everything unrelated to it, is deleted first, and only
    what it depends on is kept (deployment_executor.go:513). An interactive `pulumi destroy`
    refuses up front because its preview fails at that same check (step.go:647 precedes the
    DryRun branch). This check does what that preview does, from the state."""
    urns = protected(stack.export_stack().deployment or {})
    if urns:
        raise DestroyRefused(
            f"refused to destroy stack {stack.name!r}: it holds {len(urns)} protected resource(s), {', '.join(urns)}; "
            "a destroy would delete everything that depends on them, then fail at them. Nothing was deleted. "
            f"Unprotect them first (the cluster: `pulumi config set trainstack:cluster.deletionProtection false --stack {stack.name}`, "
            f"then `trainstack up {stack.name}`; any resource: `pulumi state unprotect --stack {stack.name} '<urn>'`)"
        )
    return stack.destroy(on_output=echo)


OPERATIONS: dict[str, Callable[[Stack], Any]] = {
    "up": lambda stack: stack.up(on_output=echo),
    "preview": lambda stack: stack.preview(on_output=echo, diff=True),
    "destroy": destroy,
}


def run(operation: str, stack_name: str, root: Path, open_stack: StackOpener) -> Any:
    """`up`, `preview` (with a property diff) or `destroy` (refused while anything is protected)
    one stack, streaming its output."""
    try:
        return OPERATIONS[operation](open_stack(stack_name, root))
    except DestroyRefused:
        raise
    except Exception as exc:  # CommandError and its kinds: the CLI already printed the details
        raise OperationFailed(f"pulumi {operation} of stack {stack_name!r} failed: {brief(exc)}") from None
