"""The one program every engine runs: the Pulumi CLI, the Automation API and the offline plan."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from trainstack.config import StackConfig, WorkloadStackConfig, load
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


def validate(stack: str, raw: dict[str, Any], platform_output: Any = None) -> StackContext:
    """Every check that needs no engine: the config model, a workload stack's workload against
    its platform's contract (`platform_output`, the value a platform stack exported), then the
    rules that read the checkout. Raises ConfigError listing each problem; nothing has been
    registered yet."""
    return _context(stack, load(stack, raw), platform_output)


def _context(stack: str, config: StackConfig | WorkloadStackConfig, platform_output: Any) -> StackContext:
    """The context of a loaded config: a workload stack's checked against its platform."""
    from trainstack import infra
    from trainstack.infra import contract

    if isinstance(config, WorkloadStackConfig):
        ref = config.platform
        if ref.stack:
            terms, source = contract.from_output(ref.stack, platform_output), f"platform stack {ref.stack}"
        else:
            assert ref.existing_cluster is not None
            terms, source = contract.of_existing(ref.existing_cluster), f"cluster {ref.existing_cluster.name}"
        ctx = StackContext(stack, contract.effective_config(stack, config, terms, source), platform=ref, contract=terms)
    else:
        ctx = StackContext(stack, config)
    infra.check(ctx)
    return ctx


def main() -> None:
    """Entry point of `__main__.py`: validate the config, then build the stack."""
    stack, raw = pulumi.get_stack(), raw_config()
    try:
        config = load(stack, raw)
        reference = output = None
        if isinstance(config, WorkloadStackConfig) and config.platform.stack:
            from trainstack.infra.remote import read_platform_stack

            reference, output = read_platform_stack(config.platform.stack)
        ctx = replace(_context(stack, config, output), reference=reference)
    except ConfigError as exc:
        # RunError ends the program with this message and no traceback.
        raise pulumi.RunError(str(exc)) from None
    build(ctx)


def build(ctx: StackContext) -> None:
    """Register the whole stack: platform (built or read), then the workload if there is one,
    then the outputs a user needs next."""
    from trainstack import infra, workloads

    platform = infra.build(ctx)
    outputs = platform.outputs()
    if ctx.config.workload is not None:
        outputs |= workloads.build(ctx, platform)
    for name, value in sorted(outputs.items()):
        pulumi.export(name, value)
