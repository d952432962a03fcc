"""The README stays true: its recipe example is a valid stack that plans, its platform program runs."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from helpers import render_with
from trainstack.app import validation
from trainstack.app.plan.plan import render
from trainstack.app.stacks import project_root
from trainstack.core import catalog

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_readme_recipe_example_is_a_valid_stack_that_plans() -> None:
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", README, re.DOTALL) if b.startswith("config:")]
    raw = yaml.safe_load(block)["config"]
    ctx = validate_stack("readme-example", raw)
    assert ctx.config.gpu_pool.machine.gpudirect.value == "tcpxo"
    plan = render("readme-example", raw)
    assert plan.cost.gpus == 128


def test_readme_names_the_set_up_and_test_commands() -> None:
    assert "pip install -e '.[test]'" in README
    assert "trainstack plan a3ultra-405b" in README
    assert "python -m pytest -n 2 tests" in README
    assert "pulumi up" in README
    assert "python -m pytest -n 2 tests" in Path(__file__).resolve().parent.parent.joinpath(".ci/run").read_text()


def validate_stack(stack: str, raw: dict, platform_output: object = None):
    return validation.validate(stack, raw, project_root(), platform_output)


def test_which_machine_lists_every_catalog_machine_with_its_gpu_memory() -> None:
    table = README.split("### Which machine", 1)[1].split("\n\n", 2)[1]
    for machine in catalog.MACHINES.values():
        (row,) = [line for line in table.splitlines() if f"`{machine.name}`" in line]
        assert f"{machine.gpu.memory_mib / 1024:.0f}" in row.split("|")[3], machine.name


def test_readme_platform_and_workload_program_runs() -> None:
    """The README's TrainingPlatform + TrainingWorkload program, run under the mock engine: the A4 pool
    with its NICs and the job's JobSet on the platform's queue."""
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", README, re.DOTALL) if "TrainingPlatform(" in b]
    rendered = render_with(lambda ctx: exec(block, {}))
    types = [r.type for r in rendered.registrations]
    assert "gcp:lustre/instance:Instance" in types and "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet" in types
    (pool,) = [r for r in rendered.registrations if r.type == "gcp:container/nodePool:NodePool" and r.inputs["nodeConfig"]["machineType"] == "a4-highgpu-8g"]
    assert len(pool.inputs["networkConfig"]["additionalNodeNetworkConfigs"]) == 9
