"""Will it fit, for our stacks: the historic out-of-memory configs are refused before anything is
created, with a message naming the workload keys that fix them; the fixed ones fit; every plan
shows its estimate; `metrics memory` answers what-if questions."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from helpers import merge, present
from trainstack.app.deploy import validation
from trainstack.app.deploy.stacks import project_root, raw_stack_config, stack_names, stacks_dir
from trainstack.app.metrics.cli import metrics
from trainstack.app.plan.plan import render
from trainstack.core import catalog
from trainstack.core.errors import ConfigError
from trainstack.workloads import fit, launchers


def check(stack: str, **workload: Any) -> list[str]:
    try:
        validation.validate(stack, merge(raw_stack_config(stack), {"trainstack:workload": workload}), project_root())
    except ConfigError as exc:
        return exc.problems
    return []


def test_gpt3_175b_without_the_distributed_optimizer_is_refused_naming_the_fix() -> None:
    """Recipe 002 as trainstack first shipped it: NeMo's default fused_adam at TP4 x PP8 holds
    the whole optimizer state on every data-parallel rank (~100 GB of model states on an H100)."""
    (problem,) = check("a3mega-gpt3-175b", zeroStage=None, masterWeights=None)
    assert problem.startswith("trainstack:workload = 'gpt3-175b on 256 x h100': needs about ")
    assert "trainstack:workload.zeroStage: 1: the distributed optimizer" in problem
    assert "trainstack:workload.masterWeights: true" in problem
    assert check("a3mega-gpt3-175b") == []  # as the upstream recipe: distributed_fused_adam with O2


def test_gpt_5b_with_nemo_defaults_is_refused_and_fits_as_the_recipe_configures_it() -> None:
    (problem,) = check("a3high-nemo-gpt5b", zeroStage=None, masterWeights=None, recompute=None)
    assert "gpt3-5b on 16 x h100" in problem and "trainstack:workload.masterWeights: true" in problem
    assert check("a3high-nemo-gpt5b") == []  # O2, distributed_fused_adam, selective recompute


def test_llama_405b_at_tp8_pp18_vp7_fits_an_h200() -> None:
    ctx = validation.validate("a3ultra-405b", raw_stack_config("a3ultra-405b"), project_root())
    result = fit.estimate(present(ctx.workload), ctx.machine)
    assert result.fits and result.gpu_memory == catalog.GPUS["h200"].memory_bytes
    assert 100e9 < result.total < 130e9  # 118.9 GB: activations of 8192-token sequences dominate


def test_llama3_70b_on_a4_fits_as_the_upstream_script_runs_it() -> None:
    """gpu-recipes e515bfc's A4 recipe reduces gradients in bf16 into Megatron's precision-aware
    optimizer (NVIDIA/NeMo v2.4.0 scripts/performance/helpers.py set_precision_configs), as the
    generated script now does: the stack passes the memory check it no longer turns to warn."""
    assert "memoryCheck" not in raw_stack_config("a4-llama3-70b")["trainstack:workload"]
    ctx = validation.validate("a4-llama3-70b", raw_stack_config("a4-llama3-70b"), project_root())
    result = fit.estimate(present(ctx.workload), ctx.machine)
    assert result.fits and result.total == pytest.approx(167.2e9, rel=1e-3)  # of 182.7 GB after 5% headroom
    # Under the resilient script, which keeps its plugin's fp32 reduction, the same split is refused,
    # naming the phase of the step that does not fit.
    refused = check("a4-llama3-70b", resiliency={"enabled": True, "nodesPerDataParallelReplica": 8})
    assert any(
        "needs about 188.31 GB per GPU, peaking in the backward at 179.78 GB (the last layer's MLP backward; weights 18.16, gradients 36.33" in problem
        for problem in refused
    ), refused


def _advised(message: str) -> list[tuple[str, Any]]:
    """The (workload key, value) pairs a refusal tells the user to set:
    `...; would help: trainstack:workload.zeroStage: 1: the distributed ...; trainstack:workload.
    parallelism.tensor: 4 (data parallel 2): -79.0 GB (fits)[; or set ...memoryCheck: warn]`."""
    helps = message.split("; would help: ", 1)[1].rsplit("; or set trainstack:workload.memoryCheck", 1)[0]
    advised = []
    for entry in helps.split("; "):
        key, text = entry.removeprefix("trainstack:workload.").split(": ", 1)
        advised.append((key, yaml.safe_load(text.split(":")[0].split(" (")[0])))
    return advised


@pytest.mark.parametrize("stack", [s for s in stack_names() if "trainstack:workload" in raw_stack_config(s)])
def test_advice_offers_only_what_validate_accepts(stack: str) -> None:
    """Each stack's job on a GPU too small for it: every knob the refusal names, set as it says,
    passes `validate` (NeMo 2.0 and NeMo-Megatron are never told zeroStage 2, which their
    launchers refuse)."""
    from trainstack.app.plan.engine import validate_offline

    ctx = validate_offline(stack, raw_stack_config(stack))
    assert ctx.workload is not None
    result = fit.estimate(ctx.workload, ctx.machine)
    advised = _advised(fit.misfit(dataclasses.replace(result, gpu_memory=0.7 * result.total), ctx.workload, ctx.machine))
    assert advised  # every stack has something to offer
    for key, value in advised:
        raw = merge(raw_stack_config(stack), {"trainstack:workload": {"memoryCheck": "off"}})
        *sections, leaf = key.split(".")
        target = raw["trainstack:workload"]
        for section in sections:
            target = target.setdefault(section, {})
        target[leaf] = value
        validate_offline(stack, raw)  # raises ConfigError naming a refused change


def test_memory_check_warn_or_off_lets_a_user_who_knows_better_proceed() -> None:
    assert check("a3mega-gpt3-175b", zeroStage=None, masterWeights=None, memoryCheck="warn") == []
    assert check("a3mega-gpt3-175b", zeroStage=None, masterWeights=None, memoryCheck="off") == []


@pytest.mark.parametrize(("setting", "warned"), [("warn", True), ("off", False)])
def test_validate_warns_under_warn_and_says_nothing_under_off(setting: str, warned: bool) -> None:
    """`memoryCheck: off` is silent; `warn` warns without telling the user to set what is set."""
    from trainstack.app.cli import main

    raw = merge(raw_stack_config("a3mega-gpt3-175b"), {"trainstack:workload": {"zeroStage": None, "masterWeights": None, "memoryCheck": setting}})
    ctx = validation.validate("a3mega-gpt3-175b", raw, project_root())
    result = fit.estimate(present(ctx.workload), ctx.machine)
    assert result.fits is False
    warnings = fit.warnings(result, present(ctx.workload), ctx.machine)
    assert bool(warnings) is warned
    assert all("memoryCheck" not in w and "peaking in the" in w for w in warnings)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("trainstack.app.cli.raw_stack_config", lambda stack: raw)
        output = CliRunner().invoke(main, ["validate", "a3mega-gpt3-175b", "--format", "json"])
    assert output.exit_code == 0, output.output
    reported = json.loads(output.output)["a3mega-gpt3-175b"]["warnings"]
    assert any("needs about" in w for w in reported) is warned


@pytest.mark.parametrize("stack", stack_names())
def test_every_plan_with_a_job_shows_its_estimate_and_headroom(stack: str) -> None:
    memory = render(stack, raw_stack_config(stack)).summary()["memory"]
    if "trainstack:workload" not in raw_stack_config(stack):
        assert memory is None
        return
    if raw_stack_config(stack)["trainstack:workload"].get("memoryCheck") == "warn":
        # A recipe that runs upstream beyond this estimate's headroom: shown, not refused, and
        # the stack file says why next to the setting.
        lines = (stacks_dir() / f"Pulumi.{stack}.yaml").read_text().splitlines()
        at = next(i for i, line in enumerate(lines) if line.strip() == "memoryCheck: warn")
        assert memory["fits"] is False and lines[at - 1].strip().startswith("#")
    else:
        assert memory["fits"] is True and memory["headroom"] > 0
    assert memory["total"] == pytest.approx(memory["peak"] + memory["allowance"] + memory["fragmentation"], abs=0.02)
    assert memory["peak"] == max(memory[k] for k in ("peak_forward", "peak_backward", "peak_optimizer_step"))


def test_the_launcher_renders_what_the_estimate_assumes() -> None:
    """The estimate is of the config the framework gets: NeMo's Hydra config states O2, the
    distributed optimizer and recompute as the stack sets them."""
    plan = render("a3high-nemo-gpt5b", raw_stack_config("a3high-nemo-gpt5b"))
    (config_map,) = [r for r in plan.resources if r["type"] == "kubernetes:core/v1:ConfigMap" and "nemo-config" in r["inputs"]["metadata"]["name"]]

    model = yaml.safe_load(next(iter(config_map["inputs"]["data"].values())))["model"]
    assert model["megatron_amp_O2"] is True and model["optim"]["name"] == "distributed_fused_adam"
    assert model["activations_checkpoint_granularity"] == "selective"


def test_metrics_memory_without_a_stack_reproduces_zero_stage_1() -> None:
    """ZeRO's Figure 1: 7.5B weights on 64 GPUs, stage 1: 31.4 GB (model states only)."""
    args = ["memory", "--params", "7.5e9", "--data-parallel", "64", "--zero-stage", "1", "--precision", "fp16", "--format", "json"]
    result = CliRunner().invoke(metrics, args)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert set(figures) >= {"weights", "gradients", "optimizer", "states", "activations", "peak", "phase", "total", "gpu_memory", "fits"}
    assert figures["total"] == pytest.approx(31.4, rel=0.05) and figures["activations"] == 0


def test_metrics_memory_of_a_stack_answers_what_if() -> None:
    runner = CliRunner()
    now = json.loads(runner.invoke(metrics, ["memory", "a3mega-gpt3-175b", "--format", "json"]).output)
    what_if = json.loads(runner.invoke(metrics, ["memory", "a3mega-gpt3-175b", "--set", "workload.zeroStage=0", "--format", "json"]).output)
    assert now["fits"] is True and what_if["fits"] is False and what_if["optimizer"] > 5 * now["optimizer"]
    assert runner.invoke(metrics, ["memory", "a3mega-gpt3-175b", "--set", "workload.zeroStage=0"]).exit_code == 4
    bad = runner.invoke(metrics, ["memory", "a3mega-gpt3-175b", "--set", "zeroStage=0"])
    assert bad.exit_code == 2 and "must be workload.KEY=VALUE" in bad.output


def test_a4x_max_fits_with_fp8_weights_and_fp8_saved_inputs_counted() -> None:
    """The A4X Max recipe's fp8_cs trains FP8 primary weights (Megatron-Bridge 9c9dd84
    bf16_with_fp8_current_scaling_mixed: fp8_param_gather) and TE saves FP8 GEMM inputs: the stack
    fits without memoryCheck: warn, and its bf16 twin holds no FP8 weights."""
    ctx = validation.validate("a4xmax-llama31-405b", raw_stack_config("a4xmax-llama31-405b"), project_root())
    workload = present(ctx.workload)
    assert "memoryCheck" not in raw_stack_config("a4xmax-llama31-405b")["trainstack:workload"]
    assert launchers.training(workload, ctx.machine).fp8_params
    assert not launchers.training(workload.model_copy(update={"precision": "bf16"}), ctx.machine).fp8_params
    result = fit.estimate(workload, ctx.machine)
    assert result.fits and result.total < 250e9  # 243.1 GB of GB300's 265.05 after headroom
