"""The stack config: the shipped stacks are valid; each invalid config is rejected, clearly."""

from __future__ import annotations

from pathlib import Path

import pulumi
import pytest
import yaml
from click.testing import CliRunner

from helpers import load_platform, merge
from trainstack.app.cli import main
from trainstack.app.deploy import program, stack_file, validation
from trainstack.app.deploy.stack_file import load
from trainstack.app.deploy.stacks import project_root, raw_stack_config, stack_names
from trainstack.app.plan import engine
from trainstack.core.errors import ConfigError, key_path
from trainstack.core.rules import duration_seconds
from trainstack.infra import fleet_stack as fleet
from trainstack.infra import training_platform
from trainstack.infra.stack import StackConfig, WorkloadStackConfig

CORPUS = sorted((Path(__file__).parent / "invalid_configs").glob("*.yaml"))


def test_every_shipped_stack_is_valid() -> None:
    assert "a3ultra-405b" in stack_names()
    for name in stack_names():
        raw = raw_stack_config(name)
        if fleet.is_fleet(raw):  # a third kind, with a model of its own
            assert isinstance(fleet.load(name, raw), fleet.FleetStackConfig)
            continue
        expected = WorkloadStackConfig if "trainstack:platform" in raw else StackConfig
        assert isinstance(load(name, raw), expected)


@pytest.mark.parametrize("case", CORPUS, ids=lambda p: p.stem)
def test_invalid_config_is_rejected_with_its_message(case: Path) -> None:
    spec = yaml.safe_load(case.read_text())
    raw = merge(raw_stack_config(spec.get("base", "a3ultra-405b")), spec["changes"])
    with pytest.raises(ConfigError) as info:  # every rule validate applies, the launchers' included
        validation.validate("broken", raw, project_root())
    message = str(info.value)
    for expected in spec["expect"]:
        assert expected in message, f"{case.stem}: {expected!r} not in:\n{message}"


def test_single_problem_is_one_line() -> None:
    raw = merge(raw_stack_config("a3ultra-405b"), {"trainstack:workload": {"nodes": 72}})
    with pytest.raises(ConfigError) as info:
        load("x", raw)
    assert info.value.problems == ["trainstack:workload.nodes = 72: exceeds the GPU pool's maximum of 54 nodes (trainstack:gpuPool)"]


def test_defaults_a_real_user_wants() -> None:
    config = load_platform("a3ultra-405b", raw_stack_config("a3ultra-405b"))
    assert config.cluster.release_channel == "REGULAR"
    assert config.cluster.private_nodes is True
    assert config.gpu_pool.upgrade.max_surge == 0 and config.gpu_pool.upgrade.max_unavailable == 1
    assert config.gpu_zones == ["us-central1-b"] and config.cpu_zones == ["us-central1-b"]
    assert config.storage.disposable is False
    assert config.cluster_queue == config.local_queue == "a3-ultra"


def test_default_queue_names_follow_the_recipes() -> None:
    base = raw_stack_config("a3ultra-405b")
    for machine, queue in (("a3-megagpu-8g", "a3-mega"), ("a3-highgpu-8g", "a3-queue")):
        raw = merge(
            base,
            {
                "trainstack:gpuPool": {"machineType": machine},
                "trainstack:kueue": {"localQueue": None},
                "trainstack:workload": {"resiliency": {"enabled": False}},
            },
        )
        assert load_platform("x", raw).local_queue == queue


def test_key_path_and_durations() -> None:
    assert key_path(("trainstack:gpuPool", "zones", 0)) == "trainstack:gpuPool.zones[0]"
    assert duration_seconds("1h30m") == 5400 and duration_seconds("90s") == 90


def test_cli_validate_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["validate", "a3ultra-405b"])
    assert ok.exit_code == 0 and "432 GPUs" in ok.output
    (tmp_path / "Pulumi.yaml").write_text("name: trainstack\n")
    (tmp_path / "stacks").mkdir()
    bad = merge(raw_stack_config("a3ultra-405b"), {"trainstack:workload": {"nodes": 72}})
    (tmp_path / "stacks" / "Pulumi.bad.yaml").write_text(yaml.safe_dump({"config": bad}))
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = runner.invoke(main, ["validate", "bad"])
    assert result.exit_code == 2
    assert "trainstack:workload.nodes = 72" in result.output
    unknown = runner.invoke(main, ["validate", "nope"])
    assert unknown.exit_code == 2 and "unknown stack 'nope'" in unknown.output and "known stacks: bad" in unknown.output


def test_pulumi_up_reports_bad_config_as_a_clean_run_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under the Pulumi CLI the program reads its config from the engine: a bad one is a RunError
    (printed without a traceback), raised before anything is built."""

    built: list[object] = []
    monkeypatch.setattr(stack_file.PlatformStack, "build", lambda self, ctx, config, read: built.append(ctx))
    good = raw_stack_config("a3ultra-405b")
    bad = merge(good, {"trainstack:workload": {"nodes": 72}, "trainstack:gpuPool": {"nodeCout": 1}})
    ctx = engine.load_stack("a3ultra-405b")
    with pytest.raises(pulumi.RunError) as info:
        engine.execute(ctx, bad, program.main)
    assert "trainstack:gpuPool.nodeCout: unknown key" in str(info.value)
    assert built == []
    engine.execute(ctx, good, program.main)
    assert len(built) == 1  # the same path with a good config builds


def test_pulumi_up_validates_a_platforms_sections_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The program checks the stack file before any resource; the TrainingPlatform it builds takes
    that config as checked, with the same context validating its sections again would give (a
    package user's args are still validated: tests/test_program_dir.py)."""
    calls: list[object] = []
    original = training_platform.validate

    def counted(args: training_platform.TrainingPlatformArgs) -> StackConfig:
        calls.append(args)
        return original(args)

    monkeypatch.setattr(training_platform, "validate", counted)
    ctx = engine.load_stack("a3ultra-405b")
    engine.execute(ctx, raw_stack_config("a3ultra-405b"), program.main)
    assert calls == []
    config = stack_file.PLATFORM.load("a3ultra-405b", raw_stack_config("a3ultra-405b"))
    args = stack_file.platform_args(ctx, config)
    assert training_platform.context(args, config.platform_sections) == training_platform.context(args)
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"trainstack:gpuPool": {"nodeCont": 3}}, "trainstack:gpuPool.nodeCont: unknown key (value 3); did you mean trainstack:gpuPool.nodeCount?"),
        ({"trainstack:workload": {"parallelism": {"tensr": 2}}}, "did you mean trainstack:workload.parallelism.tensor?"),
        ({"trainstack:gpupool": {"nodeCount": 3}}, "trainstack:gpupool: unknown key (value {'nodeCount': 3}); did you mean trainstack:gpuPool?"),
        ({"trainstack:kueue": {"namespace": "x"}}, "trainstack:kueue.namespace: unknown key (value 'x'); check its spelling against the documented keys"),
    ],
)
def test_an_unknown_key_names_the_documented_key_it_resembles(changes: dict, expected: str) -> None:
    raw = {**raw_stack_config("a3ultra-405b")}
    for key, value in changes.items():
        raw[key] = {**raw.get(key, {}), **value}
    with pytest.raises(ConfigError) as caught:
        load("a3ultra-405b", raw)
    assert expected in str(caught.value)
