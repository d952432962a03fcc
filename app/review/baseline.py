"""Render the offline plans of a git ref and of the working tree, for `trainstack diff`.

Two interpreters for any number of stacks: the base ref renders in ONE subprocess, inside a
temporary `git worktree` of that ref, importing that tree's own `trainstack` (not the editable
install of the working tree); the working tree renders in this process. Both run at once. The
worktree is removed afterwards, whatever happens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainstack.app.console import progress
from trainstack.app.deploy.stacks import raw_stack_config, stack_names
from trainstack.app.plan.plan import render
from trainstack.app.review.diff import DiffReport, StackDiff, diff_plans, failed
from trainstack.core.errors import TrainstackError

BASE_TIMEOUT_S = 1800
# The script that renders the base tree (run by path: it must import nothing of this tree's trainstack).
BASE_RENDER = Path(__file__).with_name("base_render.py")


class DiffError(TrainstackError):
    """The comparison cannot start: not a git checkout, or an unknown ref."""


@dataclass
class Rendering:
    """Plans (plan.json dicts) and render errors by stack, of one source tree."""

    plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def stacks(self) -> set[str]:
        return set(self.plans) | set(self.errors)


HeadRenderer = Callable[[Path, list[str]], Rendering]


def render_here(root: Path, stacks: list[str]) -> Rendering:
    """Render `stacks` (every stack when empty) of the project at `root` in this interpreter."""
    known = stack_names(root)
    out = Rendering()
    for name in progress(stacks or known, "rendering the working tree"):
        if name not in known:
            continue  # absent on this side: all of it is added or removed
        try:
            out.plans[name] = render(name, raw_stack_config(name, root)).to_dict()
        except Exception as exc:  # reported per stack; the others still compare
            out.errors[name] = _describe(exc)
    return out


def compare(root: Path, base_ref: str, stacks: list[str], render_head: HeadRenderer = render_here) -> DiffReport:
    """Diff `stacks` (every stack on either side when empty) of `root` from `base_ref` to the working tree."""
    top = git(root, "rev-parse", "--show-toplevel", error=f"{root} is not inside a git checkout")
    sha = git(
        root,
        "rev-parse",
        "--verify",
        "--quiet",
        f"{base_ref}^{{commit}}",
        error=f"unknown git ref {base_ref!r} (fetch it first, e.g. actions/checkout with fetch-depth: 0)",
    )
    relative = root.resolve().relative_to(Path(top).resolve())
    with tempfile.TemporaryDirectory(prefix="trainstack-diff-") as scratch, worktree(Path(top), sha, Path(scratch) / "base") as tree:
        base_root = tree / relative
        mapping = package_mapping(base_root)
        process = start_base_render(base_root, mapping, stacks, Path(scratch)) if mapping else None
        base, crash = Rendering(), None
        try:
            head = render_head(root, stacks)
            if process:
                base = finish_base_render(process, Path(scratch))
        except DiffError as exc:
            crash = str(exc)
        finally:
            if process and process.poll() is None:
                process.kill()
                process.wait()
    names = sorted(set(stacks) or (base.stacks | head.stacks))
    return DiffReport(base_ref, tuple(_stack_diff(name, base, head, crash) for name in names))


def _stack_diff(name: str, base: Rendering, head: Rendering, crash: str | None) -> StackDiff:
    if name in head.errors:
        return failed(name, "head", f"the working tree does not render: {head.errors[name]}")
    if crash or name in base.errors:
        return failed(name, "base", f"the base ref does not render: {crash or base.errors[name]}")
    if name not in base.stacks | head.stacks:
        return failed(name, "head", f"unknown stack {name!r}: no stacks/Pulumi.{name}.yaml at the base ref or in the working tree")
    return diff_plans(name, base.plans.get(name), head.plans.get(name))


# ---------------------------------------------------------------------------------------------
# The base ref


@contextmanager
def worktree(top: Path, sha: str, path: Path) -> Iterator[Path]:
    """A detached worktree of `sha` at `path`, removed (and pruned) on exit, even on error."""
    git(top, "worktree", "add", "--detach", "--quiet", str(path), sha, error=f"git worktree add of {sha} failed")
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(top), "worktree", "remove", "--force", str(path)], capture_output=True, check=False)
        if path.exists():
            shutil.rmtree(path, ignore_errors=True)
        subprocess.run(["git", "-C", str(top), "worktree", "prune"], capture_output=True, check=False)


def package_mapping(tree_root: Path) -> dict[str, str] | None:
    """Import name -> folder of the `trainstack` packages in a tree's pyproject.toml
    (`[tool.setuptools] package-dir`), or None when that tree has no trainstack yet."""
    pyproject = tree_root / "pyproject.toml"
    if not pyproject.is_file():
        return None
    package_dir = tomllib.loads(pyproject.read_text()).get("tool", {}).get("setuptools", {}).get("package-dir", {})
    mapping = {name: str((tree_root / folder).resolve()) for name, folder in package_dir.items() if name.split(".")[0] == "trainstack"}
    return mapping if "trainstack" in mapping else None


def start_base_render(base_root: Path, mapping: dict[str, str], stacks: list[str], scratch: Path) -> subprocess.Popen[bytes]:
    """Start rendering the base tree's stacks in one interpreter; results go to `scratch`."""
    args = json.dumps({"mapping": mapping, "stacks": stacks, "out": str(scratch / "base-plans.json")})
    env = {**os.environ, "TRAINSTACK_ROOT": str(base_root)}
    with open(scratch / "base-stderr.txt", "wb") as stderr:
        return subprocess.Popen([sys.executable, str(BASE_RENDER), args], cwd=base_root, env=env, stdout=subprocess.DEVNULL, stderr=stderr)


def finish_base_render(process: subprocess.Popen[bytes], scratch: Path) -> Rendering:
    """Wait for the base render; a crash of the whole interpreter is a DiffError with its stderr."""
    try:
        code = process.wait(timeout=BASE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise DiffError(f"rendering the base ref took longer than {BASE_TIMEOUT_S} s") from None
    result = scratch / "base-plans.json"
    if code != 0 or not result.is_file():
        tail = "\n".join((scratch / "base-stderr.txt").read_text(errors="replace").strip().splitlines()[-15:])
        raise DiffError(f"rendering the base ref failed (exit {code}):\n{tail}")
    data = json.loads(result.read_text())
    return Rendering(data["plans"], data["errors"])


def git(cwd: Path, *args: str, error: str) -> str:
    """git's output of `args` run in `cwd`; DiffError `error` when it fails."""
    try:
        done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise DiffError("git is not installed") from None
    if done.returncode != 0:
        raise DiffError(error)
    return done.stdout.strip()


def _describe(exc: Exception) -> str:
    return str(exc) if isinstance(exc, TrainstackError) else f"{type(exc).__name__}: {exc}"
