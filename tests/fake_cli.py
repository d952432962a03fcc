"""What every fake CLI shares: its command on PATH (a shim that runs its cli.py, beside any stub
commands it needs), a state directory named to that cli.py by `FAKE_<NAME>_HOME`, and the log of
what it was asked (`calls.jsonl`, one JSON value a line)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self


@dataclass
class FakeCli:
    """A fake CLI installed under a test's directory: `home` its state, `bin` what goes on PATH."""

    home: Path
    bin: Path
    name: ClassVar[str]  # the command: `kubectl`, `gcloud`, `pulumi`
    cli: ClassVar[Path]  # the cli.py the command runs
    stubs: ClassVar[Mapping[str, str]] = {}  # other commands on its PATH, and their shell bodies

    @classmethod
    def install(cls, root: Path) -> Self:
        fake = cls(root / f"{cls.name}-home", root / f"{cls.name}-bin")
        fake.home.mkdir()
        fake.bin.mkdir()
        for command, body in {cls.name: f'exec "{sys.executable}" -S "{cls.cli}" "$@"', **cls.stubs}.items():
            shim = fake.bin / command
            shim.write_text(f"#!/bin/sh\n{body}\n")
            shim.chmod(0o755)
        return fake

    def env(self, **knobs: str) -> dict[str, str]:
        """The environment to run against it; knobs: its cli.py's FAKE_<NAME>_* settings."""
        return {"PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}", f"FAKE_{self.name.upper()}_HOME": str(self.home), **knobs}

    def logged(self) -> list[Any]:
        """What its cli.py logged, in order."""
        log = self.home / "calls.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
