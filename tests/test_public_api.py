"""The public API works outside this repository: the README's user program runs from an installed
wheel in a fresh directory, under a plain echo mock and under trainstack.core.testing.FakeGcp."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import trainstack.components
import trainstack.workloads

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()

# Runs in the fresh directory: the user's program under a mock, then what registered.
RUNNER = r"""
import json, sys
import pulumi
from pulumi.runtime import mocks

registered = []

class Echo(mocks.Mocks):
    '''Returns the inputs as the outputs: knows nothing of GCP.'''
    def new_resource(self, args):
        registered.append(args.typ)
        return f"{args.name}-id", dict(args.inputs)
    def call(self, args):
        return {}

if sys.argv[1] == "echo":
    pulumi.runtime.set_mocks(Echo(), preview=False)
else:
    from trainstack.core.testing import FakeGcp

    class Recording(FakeGcp):
        def new_resource(self, args):
            registered.append(args.typ)
            return super().new_resource(args)

    pulumi.runtime.set_mocks(Recording("my-project", "us-central1", "us-central1-a"), preview=False)

@pulumi.runtime.test
def run():
    import __main__program as program
    return pulumi.Output.all(program.job.watch_command, program.cluster.identity).apply(lambda v: v)

import trainstack
values = run()
print(json.dumps({"trainstack": trainstack.__file__, "types": sorted(registered)}))
"""


def user_program() -> str:
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", README, re.DOTALL) if "TrainingJob(" in b]
    return block


def test_the_readme_program_is_about_twenty_lines() -> None:
    """Short enough to read at a glance: two teams' clusters, pools, queues and jobs."""
    lines = [line for line in user_program().splitlines() if line.strip()]
    assert len(lines) <= 22


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project built as a wheel and installed alone into a folder (its dependencies are this
    environment's), away from the checkout."""
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds.
    source = out / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".ci", "build", "tests", "*.egg-info", "__pycache__", ".venv", "venv"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out / "dist"), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = (out / "dist").glob("trainstack-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(out / "site"), str(wheel)], check=True, capture_output=True)
    return out / "site"


@pytest.mark.parametrize("mock", ["echo", "fake-gcp"])
def test_the_readme_program_runs_from_the_installed_wheel(installed: Path, tmp_path: Path, mock: str) -> None:
    (tmp_path / "__main__program.py").write_text(user_program())
    (tmp_path / "runner.py").write_text(RUNNER)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(installed), "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "runner.py", mock], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["trainstack"].startswith(str(installed))  # the wheel, not the checkout
    types = result["types"]
    # Two of everything: a cluster, its provider, pool, Kueue and job per team.
    for kind in (
        "trainstack:gcp:GkeCluster",
        "trainstack:gcp:GpuNodePool",
        "trainstack:k8s:Kueue",
        "trainstack:workload:TrainingJob",
        "gcp:container/cluster:Cluster",
        "pulumi:providers:kubernetes",
        "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet",
    ):
        assert types.count(kind) == 2, kind


def test_public_packages_export_their_components_and_args() -> None:
    for package in (trainstack.components, trainstack.workloads):
        assert package.__all__, package.__name__
        for name in package.__all__:
            assert hasattr(package, name), f"{package.__name__}.{name}"
    components = set(trainstack.components.__all__)
    for cls in ("GkeCluster", "GpuNodePool", "CpuNodePool", "Kueue", "JobSet", "GcsFuseVolume", "NfsServer", "WorkloadImage"):
        assert {cls, f"{cls}Args"} <= components
    assert {"TrainingJob", "TrainingJobArgs", "ResiliencySupervisor", "SupervisorArgs", "TensorBoard", "TensorBoardArgs", "Launch"} <= set(
        trainstack.workloads.__all__
    )
