"""The one program every engine runs: the Pulumi CLI, the Automation API and the offline plan."""

from __future__ import annotations

import json
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from trainstack.app.deploy import secrets, stack_file
from trainstack.app.deploy.stacks import project_root, raw_stack_config
from trainstack.core.errors import ConfigError, UnknownStackError


def raw_config() -> dict[str, Any]:
    """This stack's config as `pulumi config` holds it, objects decoded from their JSON form."""
    merged = {**(runtime_config.get_config_env() or {}), **runtime_config.CONFIG.get()}
    return {key: _decode(value) for key, value in merged.items()}


def _decode(value: str) -> Any:
    if value == "null":  # a key set to null in the stack file: absent
        return None
    if isinstance(value, str) and value.startswith(("{", "[")):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _stack_file(stack: str) -> dict[str, Any] | None:
    """The stack file's `config:` as written (encrypted values as `{secure: ...}`), if present."""
    try:
        return raw_stack_config(stack, project_root())
    except UnknownStackError:
        return None


def main() -> None:
    """Entry point of `__main__.py`: validate the config (every rule, before any resource),
    then build the stack, along its kind's one path (app/deploy/stack_file.py)."""
    stack = pulumi.get_stack()
    try:
        raw = raw_config()
        raw = secrets.mark_secrets(raw, secrets.secret_keys(raw), _stack_file(stack))
        kind = stack_file.kind(raw)
        build = kind.prepare(stack, raw, project_root())
    except ConfigError as exc:
        # RunError ends the program with this message and no traceback.
        raise pulumi.RunError(str(exc)) from None
    build()
