"""Plan a Pulumi program of your own that uses trainstack's components, offline, from its folder.

The folder holds `Pulumi.yaml` (runtime python; `main` where the program is, default the folder)
and the stack files `Pulumi.<stack>.yaml`. The program runs in this interpreter under the same
mock engine and fake GCP as the shipped stacks (app/plan/engine.py), as `pulumi preview` would run
it: from its folder, as `__main__`, with the stack file's config. Its plan has the same shape and
summary (resources, GPUs, cost per hour, critical path, and the GPU memory fit of the jobs its
TrainingWorkloads make, from the workload and machine each was given); a bad component input is a
ConfigError naming the input as the program wrote it.
"""

from __future__ import annotations

import math
import os
import runpy
import sys
from pathlib import Path
from typing import Any

import pulumi
import yaml

from trainstack.app.deploy.stacks import read_stack_file
from trainstack.app.plan import engine
from trainstack.app.plan.plan import Plan, resources_of
from trainstack.core import catalog
from trainstack.core.errors import ConfigError, TrainstackError
from trainstack.core.testing import FakeGcp
from trainstack.infra.training_platform import InputProblems
from trainstack.workloads import fit
from trainstack.workloads.spec import WorkloadSpec
from trainstack.workloads.training_workload import JOBS

Job = tuple[WorkloadSpec, catalog.Machine]

# Where the fake GCP places a program whose stack file names no project, region or zone.
DEFAULTS = {"gcp:project": "my-project", "gcp:region": "us-central1", "gcp:zone": "us-central1-a"}


class ProgramError(TrainstackError):
    """A folder that is not a Pulumi program trainstack can run offline."""


def stacks_of(folder: Path) -> list[str]:
    """The stacks of the program in `folder` (its `Pulumi.<stack>.yaml` files), sorted."""
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in folder.glob("Pulumi.*.yaml"))


def stack_of(folder: Path, stack: str | None) -> str:
    """The stack planned: `stack`, else the folder's only stack file's, else `dev` (an empty config)."""
    known = stacks_of(folder)
    if stack is None and len(known) > 1:
        raise ProgramError(f"{folder} has several stacks ({', '.join(known)}): name one")
    return stack or (known[0] if known else "dev")


def render_program(folder: Path, stack: str | None = None) -> Plan:
    """The offline plan of stack `stack` (the folder's only stack when None; no stack file: an
    empty config) of the Python Pulumi program in `folder`."""
    return run_program(folder, stack)[0]


def run_program(folder: Path, stack: str | None = None) -> tuple[Plan, list[Job]]:
    """render_program's plan, and each job the program's TrainingWorkloads made (its workload and machine)."""
    folder = folder.resolve()
    manifest = folder / "Pulumi.yaml"
    if not manifest.is_file():
        raise ProgramError(f"{folder}: no Pulumi.yaml, so no Pulumi program to plan")
    project = yaml.safe_load(manifest.read_text()) or {}
    runtime = project.get("runtime")
    runtime = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime != "python":
        raise ProgramError(
            f"{manifest}: runtime {runtime!r}: trainstack plans Python programs from their folder; run a program of another language through the package (README, Your own program)"
        )
    stack = stack_of(folder, stack)
    file = folder / f"Pulumi.{stack}.yaml"
    raw = read_stack_file(file) if file.is_file() else {}
    where = {key: raw.get(key) or default for key, default in DEFAULTS.items()}
    fake = FakeGcp(where["gcp:project"], where["gcp:region"], where["gcp:zone"])
    main = folder / str(project.get("main") or ".")
    script = main / "__main__.py" if main.is_dir() else main
    jobs: list[Job] = []
    collecting = JOBS.set(jobs)
    try:
        registrations, outputs = engine.mocked(stack, fake, raw, lambda: _run(script), project=str(project.get("name") or folder.name))
    except InputProblems as exc:
        raise ConfigError(stack, exc.problems) from None
    except pulumi.InputPropertiesError as exc:
        raise ConfigError(stack, [str(exc)]) from None
    finally:
        JOBS.reset(collecting)
    return Plan(stack, resources_of(stack, registrations), outputs, memory=job_memory(jobs)), jobs


def job_memory(jobs: list[Job]) -> dict[str, Any] | None:
    """The GPU memory estimate (fit.summary) of the program's job, as a stack's plan has it; of
    several jobs, the one with the least to spare (one that does not fit first)."""
    results = [fit.estimate(workload, machine) for workload, machine in jobs]
    if not results:
        return None
    return fit.summary(min(results, key=lambda r: (r.fits is not False, math.inf if r.headroom_bytes is None else r.headroom_bytes)))


def _run(script: Path) -> Any:
    """Run the program as the Pulumi language host does: `__main__`, from its folder, importable beside it."""
    before_cwd, before_path = Path.cwd(), list(sys.path)
    os.chdir(script.parent)
    sys.path.insert(0, str(script.parent))
    try:
        return runpy.run_path(str(script), run_name="__main__")
    finally:
        os.chdir(before_cwd)
        sys.path[:] = before_path
