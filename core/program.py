"""The one program every engine runs: the Pulumi CLI, the Automation API and the offline plan."""

from __future__ import annotations

import json
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from trainstack.config import load
from trainstack.context import StackContext
from trainstack.errors import ConfigError


def raw_config() -> dict[str, Any]:
    """This stack's config as `pulumi config` holds it, objects decoded from their JSON form."""
    merged = {**(runtime_config.get_config_env() or {}), **runtime_config.CONFIG.get()}
    return {key: _decode(value) for key, value in merged.items()}


def _decode(value: str) -> Any:
    if isinstance(value, str) and value.startswith(("{", "[")):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def validate(stack: str, raw: dict[str, Any]) -> StackContext:
    """Every check that needs no engine: the config model, then the rules that read the
    checkout. Raises ConfigError listing each problem; nothing has been registered yet."""
    from trainstack import infra

    ctx = StackContext(stack, load(stack, raw))
    infra.check(ctx)
    return ctx


def main() -> None:
    """Entry point of `__main__.py`: validate the config, then build the stack."""
    try:
        ctx = validate(pulumi.get_stack(), raw_config())
    except ConfigError as exc:
        # RunError ends the program with this message and no traceback.
        raise pulumi.RunError(str(exc)) from None
    build(ctx)


def build(ctx: StackContext) -> None:
    """Register the whole stack: platform, then workload, then the outputs a user needs next."""
    from trainstack import infra, workloads

    platform = infra.build(ctx)
    outputs = {**platform.outputs(), **workloads.build(ctx, platform)}
    for name, value in sorted(outputs.items()):
        pulumi.export(name, value)
