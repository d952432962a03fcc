"""Find the project and its stacks: `stacks/Pulumi.<stack>.yaml`, read as `pulumi config` would."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from trainstack.core.errors import StackFileError, UnknownStackError


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
    return read_stack_file(path)


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader refusing a key written twice in one mapping, as the Pulumi CLI's loader
    does (gopkg.in/yaml.v3 decode.go, `uniqueKeys`: "mapping key %#v already defined at line
    %d"); PyYAML alone keeps the last and drops the first without a word."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                continue  # a key that is no name: read_stack_file and the models name it
            line = key_node.start_mark.line + 1
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is written twice (lines {seen[key]} and {line}); YAML would keep only the last", key_node.start_mark
                )
            seen[key] = line
        return super().construct_mapping(node, deep)


def read_stack_file(path: Path) -> dict[str, Any]:
    """A stack file's `config:` mapping, or StackFileError naming the file, the line and what is
    wrong: unreadable bytes or YAML, a document or `config` that is no mapping, a key that is
    not a string."""
    try:
        document = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except UnicodeDecodeError as exc:
        raise StackFileError(f"{path}: byte {exc.start} is not UTF-8; save the file as UTF-8") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        raise StackFileError(f"{path}: {where}: not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise StackFileError(f"{path}: not valid YAML: {exc}") from None
    except RecursionError:
        raise StackFileError(f"{path}: nested too deeply to read") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise StackFileError(f"{path}: the file must be a mapping with a 'config:' key, not a {type(document).__name__}")
    config = document.get("config")
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise StackFileError(f"{path}: 'config' must be a mapping of keys such as trainstack:gpuPool, not a {type(config).__name__}")
    odd = [key for key in config if not isinstance(key, str)]
    if odd:
        raise StackFileError(f"{path}: config keys must be strings such as 'trainstack:gpuPool'; {odd[0]!r} is a {type(odd[0]).__name__} (quote it)")
    return config
