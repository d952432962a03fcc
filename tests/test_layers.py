"""The layer contract: the foundation imports nothing above it, components only the foundation,
infra the components, workloads infra (the Platform), and the application everything; no
import hides in a function except the command line's documented start-up laziness."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Folder -> package, as pyproject.toml maps them.
FOLDERS = {
    "core": "trainstack.core",
    "components": "trainstack.components",
    "infra": "trainstack.infra",
    "workloads": "trainstack.workloads",
    "app": "trainstack.app",
}
LAYERS = ["foundation", "components", "infra", "workloads", "app"]
# Modules whose commands import pulumi-heavy modules when they run, so `trainstack --help` is fast.
# The entry point (app/launch.py) tunes the collector, then imports the command line.
LAZY_CLI = {
    "trainstack.app.launch",
    "trainstack.app.cli",
    "trainstack.app.ops.cli",
    "trainstack.app.metrics.cli",
    "trainstack.app.metrics.preflight",
    "trainstack.app.status.cli",
}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "foundation"


def modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            relative = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in relative.parts if p != "__init__"]
            found[".".join([package, *parts])] = path
    return found


def imports(path: Path) -> list[tuple[str, bool]]:
    """(imported trainstack module, whether the import sits inside a function)."""
    tree = ast.parse(path.read_text())
    nested = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "trainstack":
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module for a in node.names]
            out += [(name, id(node) in nested) for name in names]
        elif isinstance(node, ast.Import):
            out += [(a.name, id(node) in nested) for a in node.names if a.name.split(".")[0] == "trainstack"]
    return out


MODULES = modules()


def edges() -> Counter[tuple[str, str]]:
    return Counter((layer(src), layer(dst)) for src, path in MODULES.items() for dst, _ in imports(path) if layer(src) != layer(dst))


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_from_a_lower_layer_to_a_higher(module: str) -> None:
    rank = LAYERS.index(layer(module))
    upward = [dst for dst, _ in imports(MODULES[module]) if LAYERS.index(layer(dst)) > rank]
    assert upward == [], f"{module} ({layer(module)}) imports {upward}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_hides_in_a_function_but_the_clis_startup_laziness(module: str) -> None:
    hidden = [dst for dst, nested in imports(MODULES[module]) if nested]
    if module in LAZY_CLI:
        assert "start-up laziness" in MODULES[module].read_text(), f"{module} must document its lazy imports"
    else:
        assert hidden == [], f"{module} imports {hidden} inside a function"


def test_the_contract_is_not_vacuous() -> None:
    """Every layer is populated, the graph has the expected downward edges, and the checker sees
    an upward edge when one exists."""
    assert {layer(m) for m in MODULES} == set(LAYERS)
    counted = edges()
    for pair in [("components", "foundation"), ("infra", "components"), ("workloads", "infra"), ("app", "workloads"), ("app", "foundation")]:
        assert counted[pair] > 0, pair
    assert LAYERS.index(layer("trainstack.app.cli")) > LAYERS.index(layer("trainstack.infra.stack"))
