"""`trainstack diff --program DIR [STACK]`: a Pulumi program of your own, from a git ref of the
repository it lives in to its working tree, with the report `trainstack diff` gives a shipped stack.

The program at the base ref is checked out in a temporary `git worktree` (baseline.worktree) and
planned there by `trainstack plan --program` in an interpreter of its own, while this one plans the
working tree's (app/plan/program_dir.py): the program's own modules, imported by both, never mix.
Both sides run with the trainstack installed now, so the diff shows what the program's change does,
not what an upgrade of trainstack does. A program that has no Pulumi.yaml at the base ref is new.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from trainstack.app.plan.program_dir import render_program, stack_of
from trainstack.app.review.baseline import BASE_TIMEOUT_S, DiffError, git, worktree
from trainstack.app.review.diff import DiffReport, StackDiff, diff_plans, failed
from trainstack.core.errors import TrainstackError


def compare_program(folder: Path, base_ref: str, stack: str | None) -> DiffReport:
    """Diff stack `stack` (the program's only one when None) of the program in `folder` from `base_ref` to the working tree."""
    folder = folder.resolve()
    top = Path(git(folder, "rev-parse", "--show-toplevel", error=f"{folder} is not inside a git checkout")).resolve()
    sha = git(folder, "rev-parse", "--verify", "--quiet", f"{base_ref}^{{commit}}", error=f"unknown git ref {base_ref!r} (fetch it first)")
    name = stack_of(folder, stack)
    with tempfile.TemporaryDirectory(prefix="trainstack-diff-") as scratch, worktree(top, sha, Path(scratch) / "base") as tree:
        base_folder = tree / folder.relative_to(top)
        process = _start_base(base_folder, name, Path(scratch)) if (base_folder / "Pulumi.yaml").is_file() else None
        try:
            head: dict[str, Any] | str = render_program(folder, name).to_dict()
        except TrainstackError as exc:
            head = str(exc)
        finally:
            base = _finish_base(process, Path(scratch)) if process else None
    return DiffReport(base_ref, (_stack_diff(name, base, head),))


def _stack_diff(stack: str, base: dict[str, Any] | str | None, head: dict[str, Any] | str) -> StackDiff:
    if isinstance(head, str):
        return failed(stack, "head", f"the working tree does not render: {head}")
    if isinstance(base, str):
        return failed(stack, "base", f"the base ref does not render: {base}")
    return diff_plans(stack, base, head)


def _start_base(base_folder: Path, stack: str, scratch: Path) -> subprocess.Popen[bytes]:
    """Start planning the base ref's program in an interpreter of its own; its plan goes to `scratch`/plan."""
    command = [sys.executable, "-m", "trainstack.app.cli", "plan", "--program", str(base_folder), stack, "--out", str(scratch / "plan"), "--format", "json"]
    with open(scratch / "base-stderr.txt", "wb") as stderr:
        return subprocess.Popen(command, cwd=base_folder, stdout=subprocess.DEVNULL, stderr=stderr)


def _finish_base(process: subprocess.Popen[bytes], scratch: Path) -> dict[str, Any] | str:
    """The base ref's plan, or why it did not render (the plan's own error line)."""
    try:
        code = process.wait(timeout=BASE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise DiffError(f"planning the base ref took longer than {BASE_TIMEOUT_S} s") from None
    result = scratch / "plan" / "plan.json"
    if code != 0 or not result.is_file():
        text = (scratch / "base-stderr.txt").read_text(errors="replace").strip()
        return text.removeprefix("error: ") or f"exit {code}"
    plan: dict[str, Any] = json.loads(result.read_text())
    return plan
