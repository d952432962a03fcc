"""trainstack: GPU training recipes on GKE as one typed Pulumi program.

The repository root is this package: `trainstack.core.catalog` is core/catalog.py. The foundation's
modules stay reachable under their earlier names (`from trainstack import catalog`), loaded on first use.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_FOUNDATION = frozenset({"catalog", "config", "context", "contract", "errors", "memory", "models", "testing"})


def __getattr__(name: str) -> ModuleType:
    if name in _FOUNDATION:
        return importlib.import_module(f"trainstack.core.{name}")
    raise AttributeError(f"module 'trainstack' has no attribute {name!r}")
