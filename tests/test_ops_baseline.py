"""`trainstack diff` against a git ref: the base renders in one subprocess from a temporary
worktree with that tree's own code; the worktree never outlives the comparison."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from helpers import present
from trainstack.app.ops.cli import diff_command
from trainstack.app.review.baseline import (
    DiffError,
    Rendering,
    compare,
    finish_base_render,
    package_mapping,
    start_base_render,
    worktree,
)

# A stand-in trainstack for the base tree: the same entry points the base script calls
# (stacks.stack_names / raw_stack_config, plan.plan.render(...).to_dict()), a plan shaped like
# plan.json, and a probe that the working tree's own trainstack never leaks in.
FAKE_PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/errors.py": "class TrainstackError(Exception):\n    pass\n",
    "pkg/stacks.py": """
        import os
        from pathlib import Path
        import yaml

        def _dir():
            return Path(os.environ["TRAINSTACK_ROOT"]) / "stacks"

        def stack_names(root=None):
            return sorted(p.name[len("Pulumi."):-len(".yaml")] for p in _dir().glob("Pulumi.*.yaml"))

        def raw_stack_config(stack, root=None):
            return yaml.safe_load((_dir() / f"Pulumi.{stack}.yaml").read_text())["config"]
    """,
    "pkg/plan/__init__.py": "",
    "pkg/plan/plan.py": """
        import sys

        def _leaked():
            try:
                import trainstack.core.catalog  # only the working tree has it
            except ModuleNotFoundError:
                return False
            return True

        class Plan:
            def __init__(self, d):
                self.d = d

            def to_dict(self):
                return self.d

        def render(stack, raw):
            if raw.get("broken"):
                raise ValueError("this stack does not render")
            pool = {
                "urn": f"urn:pulumi:{stack}::trainstack::gcp:container/nodePool:NodePool::gpu-pool",
                "type": "gcp:container/nodePool:NodePool", "name": "gpu-pool", "custom": True, "parent": None,
                "provider": None, "dependencies": [], "propertyDependencies": {}, "options": {},
                "inputs": {"nodeCount": raw["nodes"], "nodeConfig": {"machineType": "a3-ultragpu-8g"}},
            }
            tree = __file__
            return Plan({"stack": stack, "resources": [pool], "outputs": {"renderedFrom": tree, "leaked": _leaked()}})
    """,
}


def fake_plan(stack: str, nodes: int) -> dict[str, Any]:
    """What the fake renders, for the working-tree side of a comparison."""
    return {
        "stack": stack,
        "outputs": {},
        "resources": [
            {
                "urn": f"urn:pulumi:{stack}::trainstack::gcp:container/nodePool:NodePool::gpu-pool",
                "type": "gcp:container/nodePool:NodePool",
                "name": "gpu-pool",
                "custom": True,
                "parent": None,
                "provider": None,
                "dependencies": [],
                "propertyDependencies": {},
                "options": {},
                "inputs": {"nodeCount": nodes, "nodeConfig": {"machineType": "a3-ultragpu-8g"}},
            }
        ],
    }


def render_fake_head(root: Path, stacks: list[str]) -> Rendering:
    """The working-tree side, rendered like the fake does (this process's trainstack is the real one)."""
    out = Rendering()
    for path in sorted((root / "stacks").glob("Pulumi.*.yaml")):
        name = path.name[len("Pulumi.") : -len(".yaml")]
        if not stacks or name in stacks:
            out.plans[name] = fake_plan(name, yaml.safe_load(path.read_text())["config"]["nodes"])
    return out


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout.strip()


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def stack_file(nodes: int, **extra: Any) -> str:
    return yaml.safe_dump({"config": {"nodes": nodes, **extra}})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project whose first commit has no trainstack, and whose second commit has the fake one."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet", "--initial-branch=main")
    write(repo, {"README.md": "before trainstack\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "empty")
    git(repo, "tag", "empty")
    write(
        repo,
        {
            **FAKE_PACKAGE,
            "pyproject.toml": '[tool.setuptools]\npackage-dir = { "trainstack" = "pkg" }\n',
            "Pulumi.yaml": "name: trainstack\n",
            "stacks/Pulumi.alpha.yaml": stack_file(2),
            "stacks/Pulumi.gone.yaml": stack_file(1),
        },
    )
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "trainstack")
    return repo


def worktrees(repo: Path) -> list[str]:
    return [line for line in git(repo, "worktree", "list", "--porcelain").splitlines() if line.startswith("worktree ")]


def test_base_renders_with_its_own_code_in_one_subprocess(repo: Path, tmp_path: Path) -> None:
    sha = git(repo, "rev-parse", "HEAD")
    with worktree(repo, sha, tmp_path / "wt") as tree:
        mapping = package_mapping(tree)
        assert mapping == {"trainstack": str((tree / "pkg").resolve())}
        process = start_base_render(tree, mapping, [], tmp_path)
        base = finish_base_render(process, tmp_path)
    assert sorted(base.plans) == ["alpha", "gone"] and not base.errors
    outputs = base.plans["alpha"]["outputs"]
    assert outputs["renderedFrom"] == str(tree / "pkg" / "plan" / "plan.py")
    assert outputs["leaked"] is False
    assert not (tmp_path / "wt").exists() and len(worktrees(repo)) == 1


def test_compare_diffs_every_stack_of_both_sides(repo: Path) -> None:
    write(repo, {"stacks/Pulumi.alpha.yaml": stack_file(3), "stacks/Pulumi.beta.yaml": stack_file(4)})
    (repo / "stacks" / "Pulumi.gone.yaml").unlink()
    report = compare(repo, "HEAD", [], render_head=render_fake_head)
    by_name = {s.stack: s for s in report.stacks}
    assert sorted(by_name) == ["alpha", "beta", "gone"]
    [pool] = by_name["alpha"].changed
    assert [(c.path, c.old, c.new) for c in pool.changes] == [("nodeCount", 2, 3)]
    assert (present(by_name["alpha"].base).gpus, present(by_name["alpha"].head).gpus) == (16, 24)
    assert by_name["beta"].status == "new" and [r.name for r in by_name["beta"].added] == ["gpu-pool"]
    assert by_name["gone"].status == "deleted" and [r.name for r in by_name["gone"].removed] == ["gpu-pool"]
    assert len(worktrees(repo)) == 1


def test_named_stacks_only_and_base_render_errors_are_reported(repo: Path) -> None:
    write(repo, {"stacks/Pulumi.alpha.yaml": stack_file(2, broken=True)})
    git(repo, "commit", "--quiet", "-am", "break alpha")
    write(repo, {"stacks/Pulumi.alpha.yaml": stack_file(5)})
    report = compare(repo, "HEAD", ["alpha", "nope"], render_head=render_fake_head)
    alpha, nope = report.stacks
    assert alpha.error_in == "base" and "this stack does not render" in present(alpha.error)
    assert nope.error_in == "head" and "unknown stack 'nope'" in present(nope.error)
    assert report.head_failed


def test_a_base_without_trainstack_adds_everything(repo: Path) -> None:
    report = compare(repo, "empty", [], render_head=render_fake_head)
    assert [(s.stack, s.status, len(s.added)) for s in report.stacks] == [("alpha", "new", 1), ("gone", "new", 1)]


def test_the_worktree_is_removed_when_the_head_render_fails(repo: Path) -> None:
    def explode(root: Path, stacks: list[str]) -> Rendering:
        raise RuntimeError("head render crashed")

    with pytest.raises(RuntimeError, match="head render crashed"):
        compare(repo, "HEAD", [], render_head=explode)
    assert len(worktrees(repo)) == 1


def test_a_crashing_base_interpreter_is_reported_per_stack(repo: Path) -> None:
    write(repo, {"pkg/plan/plan.py": "raise ImportError('base code is broken')\n"})
    git(repo, "commit", "--quiet", "-am", "break the base")
    report = compare(repo, "HEAD", [], render_head=render_fake_head)
    assert {s.error_in for s in report.stacks} == {"base"}
    assert all("base code is broken" in present(s.error) for s in report.stacks)
    assert not report.head_failed


def test_unknown_ref_or_no_git_checkout_is_an_input_error(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DiffError, match="unknown git ref 'origin/nope'"):
        compare(repo, "origin/nope", [], render_head=render_fake_head)
    outside = tmp_path / "outside"
    outside.mkdir()
    with pytest.raises(DiffError, match="not inside a git checkout"):
        compare(outside, "HEAD", [], render_head=render_fake_head)
    monkeypatch.setenv("TRAINSTACK_ROOT", str(repo))
    result = CliRunner().invoke(diff_command, ["--base", "origin/nope"])
    assert result.exit_code == 2 and "error: unknown git ref 'origin/nope'" in result.output
