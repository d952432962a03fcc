"""`trainstack metrics memory` without a stack: a measured configuration as JSON (`--from-json`)
or the same model and setup as options; states, activations, the peak and its phase, the
allowances and the verdict; exit 0 fits, 4 does not fit, 2 bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from test_memory_measured import NAMES, entry, estimated
from trainstack.app.metrics.cli import metrics
from trainstack.app.metrics.memory import from_entry
from trainstack.core import memory


def run(*args: str) -> Result:
    return CliRunner().invoke(metrics, ["memory", *args])


def from_json(tmp_path: Path, config: Any, *args: str) -> Result:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return run("--from-json", str(path), *args)


@pytest.mark.parametrize("name", NAMES)
def test_a_measured_configuration_as_json_reports_the_estimate(tmp_path: Path, name: str) -> None:
    result = from_json(tmp_path, entry(name), "--accelerator-type", "h200", "--format", "json")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    expected = estimated(name)[2]
    assert figures["peak"] == round(expected.peak / 1e9, 2) and figures["phase"] == expected.peak_phase.name
    assert figures["states"] == round(expected.states / 1e9, 2) and figures["activations"] == round(expected.activations / 1e9, 2)
    assert figures["allowance"] == round(memory.OUTSIDE_ALLOCATOR_BYTES / 1e9, 2)
    assert figures["total"] == pytest.approx(figures["peak"] + figures["allowance"] + figures["fragmentation"], abs=0.02)
    assert figures["fits"] is True and figures["gpu_memory"] == 150.75  # 143771 MiB


def test_a_job_that_does_not_fit_exits_4_and_says_so(tmp_path: Path) -> None:
    """97 GB (the rematerialised attention's backward at sequence 8192) on an H100's 81.2."""
    result = from_json(tmp_path, entry("l8b-L4-s8192-b2-selective-local"), "--accelerator-type", "h100")
    assert result.exit_code == 4, result.output
    assert "peak         87.67 GB in the backward (the last layer's attention backward, its attention rematerialised)" in result.output
    assert "verdict      does not fit" in result.output
    assert from_json(tmp_path, entry("l8b-L4-s8192-b2-selective-local")).exit_code == 0  # no GPU, no verdict


def test_the_same_model_and_setup_as_options_gives_the_same_answer(tmp_path: Path) -> None:
    options = [
        "--model", "llama3.1-8b", "--layers", "4", "--seq-length", "8192", "--micro-batch-size", "2", "--recompute", "selective",
        "--attention", "local", "--framework", "megatron-core", "--optimizer", "torch-adamw-foreach", "--zero-stage", "1",
    ]  # fmt: skip
    by_options = run(*options, "--format", "json")
    assert by_options.exit_code == 0, by_options.output
    by_json = from_json(tmp_path, entry("l8b-L4-s8192-b2-selective-local"), "--format", "json")
    assert json.loads(by_options.output) == json.loads(by_json.output)
    shape = ["--layers", "4", "--hidden", "4096", "--ffn", "14336", "--heads", "32", "--kv-heads", "8", "--vocab", "128256", "--gated-mlp"]
    own = run(*shape, "--position", "rope", *options[4:], "--format", "json")
    assert json.loads(own.output) == json.loads(by_json.output)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"framework": None}, "framework: missing (required)"),
        ({"optimizer": "adam"}, "optimizer must be one of torch-adamw-foreach"),
        ({"attention": "magic"}, "attention = 'magic': must be one of"),
        ({"seq": 0}, "seq = 0: must be at least 1"),
        ({"shape": {"hidden": 4096}}, "shape.ffn: missing (required)"),
        ({"shape": 3}, "shape = 3: must be an object"),
        ({"softmax_fp32": "yes"}, "softmax_fp32 = 'yes': must be true or false"),
    ],
)
def test_bad_input_exits_2_naming_the_key(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    config = {**entry("l8b-L4-s4096-b1-none-sdpa"), **change}
    config = {k: v for k, v in config.items() if v is not None}
    result = from_json(tmp_path, config)
    assert result.exit_code == 2 and message in result.output, result.output


def test_other_bad_input_exits_2(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{")
    assert run("--from-json", str(tmp_path / "broken.json")).exit_code == 2
    assert run().exit_code == 2
    assert run("--model", "llama3.1-8b", "--hidden", "10").exit_code == 2
    assert run("--model", "llama9").exit_code == 2
    assert run("--model", "llama3.1-8b", "--params", "1e9").exit_code == 2


def test_fp8_primary_weights_reach_the_estimate_from_json_and_from_options(tmp_path: Path) -> None:
    """`fp8_param_gather` (Megatron's name, which Megatron-Bridge's fp8_cs sets) reaches the estimate
    as the launcher's `fp8_params` does: the weights shrink to their 1-byte FP8 copies; without
    precision fp8 it is refused, naming the rule."""
    fp8 = {**entry("l8b-L4-s4096-b1-none-sdpa"), "precision": "fp8"}
    plain, primary = (json.loads(from_json(tmp_path, {**fp8, "fp8_param_gather": on}, "--format", "json").output) for on in (False, True))
    shape, training = from_entry({**fp8, "fp8_param_gather": True})  # the same estimate, computed directly
    assert primary["states"] == round(memory.estimate(shape, training, None).states / 1e9, 2) < plain["states"]
    options = ["--model", "llama3.1-8b", "--layers", "4", "--seq-length", "4096", "--precision", "fp8", "--format", "json"]
    assert json.loads(run(*options, "--fp8-params").output)["states"] < json.loads(run(*options).output)["states"]
    refused = from_json(tmp_path, {**fp8, "precision": "bf16", "fp8_param_gather": True})
    assert refused.exit_code == 2 and "fp8_params needs precision fp8" in refused.output, refused.output
