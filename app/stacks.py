"""Find the project and its stacks: `stacks/Pulumi.<stack>.yaml`, read as `pulumi config` would."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from trainstack.errors import UnknownStackError

def project_root() -> Path:
    """The Pulumi project directory: $TRAINSTACK_ROOT, else the nearest Pulumi.yaml above the
    working directory that names `trainstack`, else the working directory (never the folder the
    package is installed in: a wheel's site-packages holds no stacks and no build contexts)."""
    if env := os.environ.get("TRAINSTACK_ROOT"):
        return Path(env).resolve()
    for folder in (Path.cwd(), *Path.cwd().parents):
        manifest = folder / "Pulumi.yaml"
        if manifest.is_file() and (yaml.safe_load(manifest.read_text()) or {}).get("name") == "trainstack":
            return folder
    return Path.cwd()


def stacks_dir(root: Path | None = None) -> Path:
    return (root or project_root()) / "stacks"


def stack_names(root: Path | None = None) -> list[str]:
    """Every stack with a config file, sorted."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in stacks_dir(root).glob("Pulumi.*.yaml"))


def raw_stack_config(stack: str, root: Path | None = None) -> dict[str, Any]:
    """The `config:` mapping of a stack file, or UnknownStackError naming the known stacks."""
    path = stacks_dir(root) / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        known = ", ".join(stack_names(root)) or "none"
        raise UnknownStackError(f"unknown stack {stack!r}: no {path}; known stacks: {known}")
    document = yaml.safe_load(path.read_text()) or {}
    config = document.get("config") or {}
    if not isinstance(config, dict):
        raise UnknownStackError(f"{path}: 'config' must be a mapping")
    return config
