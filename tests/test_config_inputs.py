"""Every input gets a clean answer: values the APIs would reject are refused at validation with the
key, the value and the rule; config as the Pulumi CLI writes it is accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import load_platform, merge, workload_of
from trainstack.app.cli import main
from trainstack.app.deploy import validation
from trainstack.app.deploy.stack_file import load
from trainstack.app.deploy.stacks import project_root, raw_stack_config
from trainstack.app.plan.plan import render
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
    (
        {"trainstack:gpuPool": {"reservation": {"name": "-x"}}},
        "trainstack:gpuPool.reservation.name = '-x': must be a reservation name, optionally with /reservationBlocks/<block>",
    ),
    ({"trainstack:storage": {"bucket": {"name": "goog-data"}}}, "must not begin with 'goog' or contain 'google'"),
    ({"trainstack:storage": {"bucket": {"name": "my-google-data"}}}, "must not begin with 'goog' or contain 'google'"),
    ({"trainstack:storage": {"bucket": {"name": "10.0.0.1"}}}, "must not look like an IP address"),
    ({"trainstack:workload": {"name": "1abc"}}, "trainstack:workload.name = '1abc': must be a DNS-1035 label"),
    ({"trainstack:gpuPool": {"name": "1abc"}}, "trainstack:gpuPool.name = '1abc': must be a GKE node pool name"),
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
    config = load_platform(STACK, raw)
    assert workload_of(config).env["NCCL_WORK_FIFO_DEPTH"] == "4194304" and workload_of(config).env["DEBUG"] == "true"
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
        ('config:\n  trainstack:cluster: {name: "unterminated}\n', "not valid YAML"),
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


def found(stack: str, changes: dict[str, Any]) -> list[str]:
    """The problems validation finds in `stack` with `changes` (none: accepted)."""
    try:
        validation.validate(stack, merge(raw_stack_config(stack), changes), project_root())
    except ConfigError as error:
        return error.problems
    return []


def _bucket(name: str) -> dict[str, Any]:
    return {"trainstack:storage": {"bucket": {"name": name}}}


def _existing(**keys: Any) -> dict[str, Any]:
    return {"trainstack:platform": {"existingCluster": keys}}


def _dotted(last: int) -> str:
    """Three parts of 63 characters and one of `last`, joined by dots: 222 characters with 30."""
    return ".".join(["b" * 63] * 3 + ["b" * last])


TOOLKIT = "toolkit-a3mega-gpt3-175b"
# Each rule with a limit: (stack, config just inside, config just outside, the outside config's problem).
LIMITS = [
    # Cloud Storage bucket names (cloud.google.com/storage/docs/buckets#naming).
    (STACK, _bucket("abc"), _bucket("ab"), "trainstack:storage.bucket.name = 'ab': must be a valid bucket name"),
    (STACK, _bucket("a" * 63), _bucket("a" * 64), f"trainstack:storage.bucket.name = '{'a' * 56}...: must be at most 63 characters"),
    (STACK, _bucket(_dotted(30)), _bucket(_dotted(31)), f"trainstack:storage.bucket.name = '{'b' * 56}...: must be a valid bucket name"),
    (
        STACK,
        _bucket("a" * 63 + ".b"),
        _bucket("a" * 64 + ".b"),
        f"trainstack:storage.bucket.name = '{'a' * 56}...: must be at most 63 characters, or, with dots",
    ),
    (STACK, _bucket("a.b"), _bucket("a..b"), "trainstack:storage.bucket.name = 'a..b': must not hold two dots in a row or a dash next to a dot"),
    (STACK, _bucket("a-b.c"), _bucket("a-.c"), "trainstack:storage.bucket.name = 'a-.c': must not hold two dots in a row"),
    (STACK, _bucket("a.b-c"), _bucket("a.-c"), "trainstack:storage.bucket.name = 'a.-c': must not hold two dots in a row"),
    (STACK, _bucket("goo-data"), _bucket("goog-data"), "trainstack:storage.bucket.name = 'goog-data': must not begin with 'goog'"),
    (STACK, _bucket("my-googl-data"), _bucket("my-google-data"), "trainstack:storage.bucket.name = 'my-google-data': must not begin with 'goog'"),
    (STACK, _bucket("10.0.0.a"), _bucket("10.0.0.1"), "trainstack:storage.bucket.name = '10.0.0.1': must not look like an IP address"),
    # GKE cluster names (GKE API v1 Cluster.name): also a cluster trainstack did not make.
    (
        TOOLKIT,
        _existing(name="a" + "0" * 39),
        _existing(name="a" + "0" * 40),
        f"trainstack:platform.existingCluster.name = 'a{'0' * 40}': String should have at most 40 characters",
    ),
    (TOOLKIT, _existing(name="a3mega-x"), _existing(name="A3mega-x"), "trainstack:platform.existingCluster.name = 'A3mega-x': must start with a letter"),
    (TOOLKIT, _existing(name="a3mega-x"), _existing(name="a3mega-ñ"), "trainstack:platform.existingCluster.name = 'a3mega-ñ': must start with a letter"),
    (TOOLKIT, _existing(name="a3mega-x"), _existing(name="a3mega-"), "trainstack:platform.existingCluster.name = 'a3mega-': must start with a letter"),
    (
        TOOLKIT,
        _existing(location="us-central1-c"),
        _existing(location="us-central1-"),
        "trainstack:platform.existingCluster.location = 'us-central1-': must be a GCP region or zone",
    ),
    # Its nodes' zone is a zone of its location's region (Compute Engine regions and zones; NodePool.locations).
    (
        TOOLKIT,
        _existing(zone="us-central1-ai1a"),
        _existing(zone="us-east1-b"),
        "trainstack:platform.existingCluster.zone = 'us-east1-b': must be a zone of the cluster's region (us-central1)",
    ),
    (
        TOOLKIT,
        _existing(location="us-central1-a", zone="us-central1-b"),
        _existing(location="us-east1-b"),
        "trainstack:platform.existingCluster.zone = 'us-central1-c': must be a zone of the cluster's region (us-east1)",
    ),
    # Node pool upgrade settings: int32 in the GKE API, and no more nodes than a pool holds.
    (
        STACK,
        {"trainstack:gpuPool": {"upgrade": {"maxSurge": 1000}}},
        {"trainstack:gpuPool": {"upgrade": {"maxSurge": 1001}}},
        "trainstack:gpuPool.upgrade.maxSurge = 1001: must be between 0 and 1000 (a pool holds at most 1000 nodes a zone)",
    ),
    (
        STACK,
        {"trainstack:cpuPool": {}},
        {"trainstack:gpuPool": {"upgrade": {"maxSurge": 10**9}}},
        "trainstack:gpuPool.upgrade.maxSurge = 1000000000: must be between 0 and 1000 (a pool holds at most 1000 nodes a zone)",
    ),
    (
        STACK,
        {"trainstack:gpuPool": {"nodeCount": None, "autoscaling": {"maxNodes": 1000}, "upgrade": {"maxUnavailable": 1000}}},
        {"trainstack:gpuPool": {"upgrade": {"maxUnavailable": 1001}}},
        "trainstack:gpuPool.upgrade.maxUnavailable = 1001: must be between 0 and 1000 (a pool holds at most 1000 nodes a zone)",
    ),
    # Image references (github.com/distribution/reference): ASCII tags, no empty path component.
    (
        STACK,
        {"trainstack:image": {"prebuilt": "nvcr.io/nvidia/ne.mo:24.07"}},
        {"trainstack:image": {"prebuilt": "nvcr.io/nvidia/ne..mo:24.07"}},
        "trainstack:image.prebuilt = 'nvcr.io/nvidia/ne..mo:24.07': must be an image reference",
    ),
    (
        STACK,
        {"trainstack:image": {"prebuilt": "nvcr.io/nvidia/nemo:" + "v" * 128}},
        {"trainstack:image": {"prebuilt": "nvcr.io/nvidia/nemo:vñ"}},
        "trainstack:image.prebuilt = 'nvcr.io/nvidia/nemo:vñ': must be an image reference",
    ),
    (
        TOOLKIT,
        {"trainstack:image": {"build": {"tag": "v" * 128}}},
        {"trainstack:image": {"build": {"tag": "v" * 129}}},
        f"trainstack:image.build.tag = '{'v' * 56}...: must be a valid image tag",
    ),
    (
        TOOLKIT,
        {"trainstack:image": {"build": {"tag": "v1"}}},
        {"trainstack:image": {"build": {"tag": "vñ"}}},
        "trainstack:image.build.tag = 'vñ': must be a valid image tag",
    ),
    # A job's nodes: no GKE node pool holds more than 1000.
    (
        STACK,
        {"trainstack:workload": {"nodes": 1000}},
        {"trainstack:workload": {"nodes": 1001}},
        "trainstack:workload.nodes = 1001: must be at most 1000: no GKE node pool holds more nodes",
    ),
]


@pytest.mark.parametrize(("stack", "inside", "outside", "expected"), LIMITS, ids=[e[:48] for *_, e in LIMITS])
def test_a_limit_accepts_the_value_just_inside_and_refuses_the_one_just_outside(
    stack: str, inside: dict[str, Any], outside: dict[str, Any], expected: str
) -> None:
    rule = expected.rsplit(": ", 1)[-1]
    assert not [p for p in found(stack, inside) if rule in p], found(stack, inside)
    assert any(expected in p for p in found(stack, outside)), found(stack, outside)


def test_a_job_larger_than_its_pool_is_refused_for_that_alone() -> None:
    """Nothing else that scales with nodes is checked: not the framework's split, not the hostnames."""
    assert found(TOOLKIT, {"trainstack:workload": {"nodes": 1000, "name": "j" * 60}}) == [
        "trainstack:workload.nodes = 1000: exceeds the GPU pool's maximum of 32 nodes (trainstack:platform.existingCluster.nodeCount)"
    ]


def test_validation_builds_no_hostname_list(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainstack import workloads

    def refuse(*args: Any) -> None:
        raise AssertionError("validation listed every pod's hostname")

    monkeypatch.setattr(workloads, "pod_hosts", refuse)
    assert found(STACK, {"trainstack:workload": {"name": "j" * 41}}) == []
    assert "over 63" in found(STACK, {"trainstack:workload": {"name": "j" * 42}})[0]


@pytest.mark.parametrize(
    ("stack", "path", "key", "expected"),
    [
        (STACK, (), 1, "(stack config): key 1 is not a string; keys are names (quote it in YAML)"),
        (STACK, (), None, "(stack config): key None is not a string"),
        (STACK, ("trainstack:cluster",), None, "trainstack:cluster: key None is not a string"),
        (STACK, ("trainstack:cluster", "authorizedNetworks", 0), 1, "trainstack:cluster.authorizedNetworks[0]: key 1 is not a string"),
        (STACK, ("trainstack:workload", "env"), True, "trainstack:workload.env: key True is not a string"),
        (STACK, ("trainstack:labels",), 1.5, "trainstack:labels: key 1.5 is not a string"),
        (TOOLKIT, ("trainstack:platform", "existingCluster"), 0, "trainstack:platform.existingCluster: key 0 is not a string"),
        ("a3ultra-405b-job", ("trainstack:workload",), 1, "trainstack:workload: key 1 is not a string"),
    ],
)
def test_a_key_that_is_no_string_is_refused_naming_where_it_is(stack: str, path: tuple, key: Any, expected: str) -> None:
    raw = raw_stack_config(stack)
    node: Any = raw
    for step in path:
        node = node.setdefault(step, {}) if isinstance(node, dict) else node[step]
    node[key] = "x"
    with pytest.raises(ConfigError) as caught:
        validation.validate(stack, raw, project_root())
    assert any(expected in p for p in caught.value.problems), caught.value.problems


def test_a_nested_key_that_is_no_string_in_a_stack_file_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.broken.yaml").write_text("config:\n  trainstack:cluster:\n    name: c\n    null: x\n")
    monkeypatch.setenv("TRAINSTACK_ROOT", str(tmp_path))
    result = CliRunner().invoke(main, ["validate", "broken"])
    assert result.exit_code == 2 and "trainstack:cluster: key None is not a string" in result.output, result.output
