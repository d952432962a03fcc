"""The distribution ships every package: a non-editable install must work as well as this one."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Folders of the repository that the distribution does not ship: the tests' own helper packages,
# and build/ (gitignored), where benchmarks/checkov_compare.py installs checkov's virtualenv.
UNSHIPPED = {("tests",), ("build",)}


def test_every_python_package_is_listed_in_pyproject() -> None:
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    mapping: dict[str, str] = tool["package-dir"]
    found = set()
    for name, folder in mapping.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            if not any(p.startswith(".") or p == "__pycache__" for p in rel) and rel[:1] not in UNSHIPPED:
                found.add(".".join((name, *rel)))
    assert sorted(found) == sorted(tool["packages"])


def test_pulumi_project_layout() -> None:
    manifest = (ROOT / "Pulumi.yaml").read_text()
    assert "name: trainstack" in manifest and "stackConfigDir: stacks" in manifest
    assert (ROOT / "__main__.py").read_text().count("\n") < 10
