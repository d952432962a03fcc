"""The Pulumi Automation API, driving the same program as `pulumi up --stack <name>`.

Stacks are local-program stacks of the project root: the Pulumi CLI reads `Pulumi.yaml` there
and each stack's config from `stacks/Pulumi.<stack>.yaml` (stackConfigDir). Progress streams
to stdout as the CLI prints it. Everything here needs the Pulumi CLI on PATH.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from trainstack.errors import TrainstackError

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
    def remove_stack(self, stack_name: str) -> None: ...


class Stack(Protocol):
    """The part of `pulumi.automation.Stack` trainstack uses (fakes implement the same)."""

    name: str
    workspace: Workspace

    def up(self, *, on_output: Callable[[str], Any]) -> Any: ...

    def preview(self, *, on_output: Callable[[str], Any], diff: bool) -> Any: ...

    def destroy(self, *, on_output: Callable[[str], Any]) -> Any: ...

    def set_all_config(self, config: Mapping[str, Any]) -> None: ...

    def cancel(self) -> None: ...


StackOpener = Callable[[str, Path], Stack]


def create_or_select(name: str, root: Path) -> Stack:
    """The stack `name` of the project at `root`, created in the backend if it is new."""
    from pulumi import automation as auto

    return auto.create_or_select_stack(stack_name=name, work_dir=str(root))


def select(name: str, root: Path) -> Stack:
    """The existing stack `name` of the project at `root`."""
    from pulumi import automation as auto

    return auto.select_stack(stack_name=name, work_dir=str(root))


def create(name: str, root: Path) -> Stack:
    """A new stack `name` of the project at `root` (an error if it exists)."""
    from pulumi import automation as auto

    return auto.create_stack(stack_name=name, work_dir=str(root))


def echo(line: str) -> None:
    """Stream one line of the CLI's output."""
    print(line, flush=True)


def config_values(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A raw stack config as `set_all_config` values: objects and lists as their JSON text,
    which the program decodes as the CLI's own object config (types kept exactly)."""
    from pulumi.automation import ConfigValue

    return {key: ConfigValue(value if isinstance(value, str) else json.dumps(value, sort_keys=True)) for key, value in raw.items()}


def brief(exc: BaseException) -> str:
    """The last line of a failed command's stderr, else the exception's message."""
    text = str(exc)
    tail = text.rsplit(" stderr:", 1)[-1] if " stderr:" in text else text
    lines = [line.strip() for line in tail.strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


OPERATIONS: dict[str, Callable[[Stack], Any]] = {
    "up": lambda stack: stack.up(on_output=echo),
    "preview": lambda stack: stack.preview(on_output=echo, diff=True),
    "destroy": lambda stack: stack.destroy(on_output=echo),
}


def run(operation: str, stack_name: str, root: Path, open_stack: StackOpener) -> Any:
    """`up`, `preview` (with a property diff) or `destroy` one stack, streaming its output."""
    try:
        return OPERATIONS[operation](open_stack(stack_name, root))
    except Exception as exc:  # CommandError and its kinds: the CLI already printed the details
        raise OperationFailed(f"pulumi {operation} of stack {stack_name!r} failed: {brief(exc)}") from None
