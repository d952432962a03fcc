"""A fake `kubectl` on PATH (cli.py behind a shim) serving clusters' objects, and what it was asked."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fake_cli import FakeCli


@dataclass
class FakeKubectl(FakeCli):
    name = "kubectl"
    cli = Path(__file__).resolve().parent / "cli.py"

    def serve(
        self,
        context: str,
        items: list[dict[str, Any]],
        *,
        pending: dict[str, list[dict[str, Any]]] | None = None,
        logs: dict[tuple[str, str], str] | None = None,
        absent: tuple[str, ...] = (),
    ) -> None:
        """The cluster kubectl reaches at `context`: its objects, its queues' pending workloads, its pods' logs."""
        (self.home / f"{context}.json").write_text(json.dumps({"items": items, "pending": pending or {}, "absent": list(absent)}))
        for (namespace, pod), text in (logs or {}).items():
            path = self.home / f"{context}.logs" / namespace / f"{pod}.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    def calls(self) -> list[list[str]]:
        return self.logged()
