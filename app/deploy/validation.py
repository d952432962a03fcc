"""The one validation entry point: every rule, before any resource exists.

`pulumi up` (the program), `trainstack validate`, `plan`, `up` and `bench` all reach the `check`
of the stack file's kind (app/deploy/stack_file.py); `validate` loads the raw config first. It runs the config model's rules, a workload
stack's rules against its platform's contract, the framework launcher's rules, and the rules
that read the project's files, and reports every problem at once, each naming the key as the
user wrote it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trainstack.app.deploy import stack_file


def validate(stack: str, raw: dict[str, Any], root: Path, platform_output: Any = None, worker_outputs: dict[str, Any] | None = None) -> stack_file.JobContext:
    """Check the raw config (keys as in its YAML) along its kind's path; ConfigError listing every
    problem. A workload stack is checked against `platform_output`, the contract its platform stack
    exported; a fleet stack against its workers' contracts, `worker_outputs` (stack -> `platform` output)."""
    return stack_file.kind(raw).validate(stack, raw, root, platform_output, worker_outputs)
