"""A fake `kubectl` on PATH (cli.py behind a shim) serving clusters' objects, and what it was asked."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLI = Path(__file__).resolve().parent / "cli.py"


@dataclass
class FakeKubectl:
    home: Path
    bin: Path

    @classmethod
    def install(cls, root: Path) -> FakeKubectl:
        fake = cls(root / "kubectl-home", root / "kubectl-bin")
        fake.home.mkdir()
        fake.bin.mkdir()
        shim = fake.bin / "kubectl"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "{CLI}" "$@"\n')
        shim.chmod(0o755)
        return fake

    def env(self) -> dict[str, str]:
        return {"PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}", "FAKE_KUBECTL_HOME": str(self.home)}

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
        log = self.home / "calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
