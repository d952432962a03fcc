"""Every input gets a clean answer: values the APIs would reject are refused at validation with the
key, the value and the rule; config as the Pulumi CLI writes it is accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import merge
from trainstack.app import validation
from trainstack.app.cli import main
from trainstack.app.plan.plan import render
from trainstack.app.stacks import project_root, raw_stack_config
from trainstack.core.config import load
from trainstack.core.errors import ConfigError

STACK = "a3ultra-405b"


def problems(changes: dict[str, Any], stack: str = STACK) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        validation.validate(stack, merge(raw_stack_config(stack), changes), project_root())
    return caught.value.problems


REFUSED = [
    ({"trainstack:network": {"subnetCidr": "10.0.0.0/33"}}, "trainstack:network.subnetCidr = '10.0.0.0/33': must be an IPv4 CIDR block"),
    ({"trainstack:network": {"subnetCidr": "999.1.1.1/32"}}, "trainstack:network.subnetCidr = '999.1.1.1/32': must be an IPv4 CIDR block"),
    ({"trainstack:cluster": {"masterIpv4Cidr": "172.16.0.33/28"}}, "its host bits are set"),
    ({"trainstack:gpuPool": {"reservation": {"name": "-x"}}}, "trainstack:gpuPool.reservation.name = '-x': must be a GCP resource name"),
    ({"trainstack:storage": {"bucket": {"name": "goog-data"}}}, "must not begin with 'goog' or contain 'google'"),
    ({"trainstack:storage": {"bucket": {"name": "my-google-data"}}}, "must not begin with 'goog' or contain 'google'"),
    ({"trainstack:storage": {"bucket": {"name": "10.0.0.1"}}}, "must not look like an IP address"),
    ({"trainstack:workload": {"name": "1abc"}}, "trainstack:workload.name = '1abc': must be a DNS-1035 label"),
    ({"trainstack:gpuPool": {"name": "1abc"}}, "trainstack:gpuPool.name = '1abc': must be a DNS-1035 label"),
    ({"trainstack:workload": {"env": {"A=B": "1"}}}, "trainstack:workload.env.A=B"),
    ({"trainstack:workload": {"env": {"": "1"}}}, "must be an environment variable name"),
    ({"trainstack:image": {"prebuilt": ""}}, "trainstack:image.prebuilt = '': must be an image reference"),
    ({"trainstack:workload": {"maxRestarts": 2**31}}, "trainstack:workload.maxRestarts = 2147483648"),
    ({"trainstack:kueue": {"priorityClasses": [{"name": "p", "value": 2**31}]}}, "trainstack:kueue.priorityClasses[0].value = 2147483648"),
    ({"trainstack:gpuPool": {"nodeCount": None, "autoscaling": {"maxNodes": 2**63}}}, "trainstack:gpuPool.autoscaling.maxNodes"),
    ({"trainstack:labels": {"trainstack-ephemeral": "true"}}, "label 'trainstack-ephemeral' is trainstack's own"),
    ({"trainstack:labels": {"trainstack-expires": "2000-01-01t0000z"}}, "label 'trainstack-expires' is trainstack's own"),
    ({"trainstack:labels": {"Team": "ml"}}, "label key 'Team' must start with a lowercase letter"),
    ({"trainstack:labels": {"team": "ML Research"}}, "label value 'ML Research'"),
    ({"trainstack:labels": {f"k{i}": "v" for i in range(61)}}, "at most 60 labels"),
    ({"trainstack:image": {"prebuilt": None, "build": {"context": "images/" + "x" * 300, "imageName": "i", "tag": "t"}}}, "trainstack:image.build.context"),
]


@pytest.mark.parametrize(("changes", "expected"), REFUSED, ids=[e[:40] for _, e in REFUSED])
def test_values_the_apis_would_reject_are_refused_naming_the_key(changes: dict[str, Any], expected: str) -> None:
    assert any(expected in p for p in problems(changes)), problems(changes)


def test_config_as_the_pulumi_cli_writes_it_is_accepted() -> None:
    """`pulumi config set --path` stores numbers and booleans typed; stacks carry other namespaces
    and gcp provider settings trainstack does not read; a key set to null is absent."""
    raw = merge(
        raw_stack_config(STACK),
        {
            "trainstack:workload": {"env": {"NCCL_WORK_FIFO_DEPTH": 4194304, "DEBUG": True}},
            "pulumi:template": "gcp-python",
            "kubernetes:enableServerSideApply": "true",
            "gcp:requestTimeout": "60s",
            "gcp:defaultLabels": {"team": "ml"},
            "trainstack:ephemeral": None,
        },
    )
    config = load(STACK, raw)
    assert config.workload.env["NCCL_WORK_FIFO_DEPTH"] == "4194304" and config.workload.env["DEBUG"] == "true"
    plan = render(STACK, raw)
    (jobset,) = [r for r in plan.resources if r["type"] == "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"]
    env = jobset["inputs"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "NCCL_WORK_FIFO_DEPTH", "value": "4194304"} in env


def test_an_empty_workload_section_on_a_workload_stack_is_a_clean_error() -> None:
    raw = {**raw_stack_config("toolkit-a3mega-gpt3-175b"), "trainstack:workload": None, "gcp:project": None}
    with pytest.raises(ConfigError, match=r"trainstack:workload: required key is missing"):
        load("toolkit", raw)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("config:\n  on: 1\n", "config keys must be strings"),
        ("config:\n  1: x\n", "config keys must be strings"),
        ("config:\n  ~: x\n", "config keys must be strings"),
        ("config:\n  a: [1, 2\n", "line 3, column 1: not valid YAML"),
        ("- a\n- b\n", "the file must be a mapping"),
        ("config: " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
        ("config:\n  trainstack:cluster: {name: \"unterminated}\n", "not valid YAML"),
    ],
)
def test_a_stack_file_that_cannot_be_read_exits_2_with_file_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: str) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.broken.yaml").write_text(text)
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = CliRunner().invoke(main, ["validate", "broken"])
    assert result.exit_code == 2, result.output
    assert expected in result.output and "Pulumi.broken.yaml" in result.output


def test_a_non_utf8_stack_file_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.broken.yaml").write_bytes(b"config:\n  gcp:project: caf\xe9\n")
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = CliRunner().invoke(main, ["validate", "broken"])
    assert result.exit_code == 2 and "is not UTF-8" in result.output
