"""The README stays true: its recipe example is a valid stack that plans, its platform program runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from helpers import render_with
from trainstack.app.cli import main
from trainstack.app.deploy import validation
from trainstack.app.deploy.stacks import project_root, raw_stack_config
from trainstack.app.plan.plan import render
from trainstack.core import catalog

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_readme_recipe_example_is_a_valid_stack_that_plans() -> None:
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", README, re.DOTALL) if b.startswith("config:")]
    raw = yaml.safe_load(block)["config"]
    ctx = validate_stack("readme-example", raw)
    assert ctx.stack_file.gpu_pool.machine.gpudirect.value == "tcpxo"
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


def test_the_quickstart_stack_with_your_values_validates_without_a_placeholder_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quickstart copies a3ultra-405b and sets the project, the reservation and the network:
    with those set, `validate` warns of no placeholder left (and warned of each before)."""
    (block,) = [b for b in re.findall(r"```bash\n(.*?)```", README, re.DOTALL) if "cp stacks/Pulumi.a3ultra-405b.yaml stacks/Pulumi.mine.yaml" in b]
    assert all(f"trainstack {command} mine" in block for command in ("validate", "plan", "up"))
    raw = raw_stack_config("a3ultra-405b")
    (tmp_path / "stacks").mkdir()
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    (tmp_path / "stacks" / "Pulumi.mine.yaml").write_text(yaml.safe_dump({"config": raw}))
    before = CliRunner().invoke(main, ["validate", "mine"])
    assert before.exit_code == 0 and before.output.count("warning:") == 3, before.output
    raw["gcp:project"] = "acme-research"
    raw["trainstack:gpuPool"]["reservation"]["name"] = "acme-h200-block"
    raw["trainstack:cluster"]["authorizedNetworks"][0]["cidrBlock"] = "10.20.0.0/16"
    (tmp_path / "stacks" / "Pulumi.mine.yaml").write_text(yaml.safe_dump({"config": raw}))
    after = CliRunner().invoke(main, ["validate", "mine"])
    assert after.exit_code == 0 and "warning:" not in after.output, after.output
