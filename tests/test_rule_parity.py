"""Every rule between a resource's fields (core/resource_rules.py) refuses the same value with the
same words through both doors: the stack file's section (infra/stack.py) and the component's Args
(`XArgs.checked`), each naming the key as its user writes it. The cases are checked against the
rules' registry, so a new rule without a case fails here; and each rule, made a no-op in turn,
fails its case: no component rule can be deleted with every test green. The node pools have one
door, their spec (tests/test_pool_spec.py)."""

from __future__ import annotations

import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from trainstack.app.deploy.stacks import raw_stack_config
from trainstack.components import gcp_network, gke_cluster
from trainstack.components.args import Args, Each, _build
from trainstack.components.storage import filestore, gcs, lustre, nfs
from trainstack.core import resource_rules, rules
from trainstack.core.errors import ArgsError, ConfigError, Problem
from trainstack.infra import stack as config

DROP = object()  # a change that removes the key


@dataclass(frozen=True)
class Door:
    """A resource's two doors and a valid item of each, which a case changes."""

    args: type[Args]
    section: type[BaseModel]
    args_base: dict[str, Any]
    config_base: dict[str, Any]


NETWORK = {"network": "vpc", "subnetwork": "subnet", "pods_range": "pods", "services_range": "services"}
CLUSTER = {
    "project": "my-project",
    "location": "us-central1",
    "name": "c",
    "node_locations": ["us-central1-a"],
    "network": NETWORK,
    "node_service_account": "sa",
}
ALLOWED = [{"cidr_block": "10.0.0.0/8"}]
DOORS = {
    "cluster": Door(
        gke_cluster.GkeClusterArgs,
        config.ClusterConfig,
        {**CLUSTER, "authorized_networks": ALLOWED},
        {"name": "c", "authorizedNetworks": [{"cidrBlock": "10.0.0.0/8"}]},
    ),
    "maintenance_window": Door(
        gke_cluster.MaintenanceWindow,
        config.MaintenanceWindow,
        {"start": "2026-01-03T03:00:00Z", "end": "2026-01-03T11:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU"},
        {},
    ),
    "bucket": Door(gcs.CheckpointBucketArgs, gcs.BucketSpec, {"project": "my-project", "name": "my-bucket", "location": "us-central1"}, {}),
    "filestore": Door(
        filestore.FilestoreShareArgs,
        filestore.FilestoreSpec,
        {"project": "my-project", "name": "fs", "location": "us-central1-a", "tier": "ZONAL", "capacity_gib": 1024, "share_name": "share1", "network": "vpc"},
        {"tier": "ZONAL"},
    ),
    "lustre": Door(
        lustre.LustreInstanceArgs,
        lustre.LustreSpec,
        {"project": "my-project", "zone": "us-central1-a", "instance_id": "lustre", "network": "vpc", "capacity_gib": 9000},
        {},
    ),
}


@dataclass(frozen=True)
class Case:
    """A value one rule refuses: the changes to each door's item, and the key each door names."""

    resource: str
    rule: str
    args: dict[str, Any]
    config: dict[str, Any]
    args_key: tuple[str | int, ...]
    config_key: tuple[str | int, ...]

    @property
    def id(self) -> str:
        return f"{self.resource}.{self.rule}"


CASES = [
    Case(
        "cluster",
        "private_endpoint_nodes",
        {"private_endpoint": True, "private_nodes": False},
        {"privateEndpoint": True, "privateNodes": False},
        ("private_endpoint",),
        ("privateEndpoint",),
    ),
    Case(
        "cluster",
        "authorized_network_count",
        {"authorized_networks": [{"cidr_block": f"10.0.{i}.0/24"} for i in range(51)]},
        {"authorizedNetworks": [{"cidrBlock": f"10.0.{i}.0/24"} for i in range(51)]},
        ("authorized_networks",),
        ("authorizedNetworks",),
    ),
    Case(
        "cluster",
        "private_endpoint_ranges",
        {"private_endpoint": True, "authorized_networks": [{"cidr_block": "8.8.8.0/24"}]},
        {"privateEndpoint": True, "authorizedNetworks": [{"cidrBlock": "8.8.8.0/24"}]},
        ("authorized_networks", 0, "cidr_block"),
        ("authorizedNetworks", 0, "cidrBlock"),
    ),
    Case("maintenance_window", "window", {"end": "2026-01-03T05:00:00Z"}, {"end": "2026-01-03T05:00:00Z"}, ("end",), ("end",)),
    Case("bucket", "hns_uniform", {"uniform_access": False}, {"uniformAccess": False}, ("uniform_access",), ("uniformAccess",)),
    Case("filestore", "filestore_size", {"capacity_gib": 1000}, {"capacityGib": 1000}, ("capacity_gib",), ("capacityGib",)),
    Case("lustre", "lustre_size", {"capacity_gib": 100}, {"capacityGib": 100}, ("capacity_gib",), ("capacityGib",)),
]


def _changed(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in {**base, **changes}.items() if v is not DROP}


def _args_problems(case: Case) -> list[Problem]:
    door = DOORS[case.resource]
    try:
        door.args.checked(_changed(door.args_base, case.args), door.args, "parity")
    except ArgsError as error:
        return error.problems
    return []


def _config_problems(case: Case) -> list[Problem]:
    door = DOORS[case.resource]
    try:
        door.section.model_validate(_changed(door.config_base, case.config))
    except ValidationError as error:
        return [Problem(tuple(e["loc"]), e["input"], e["msg"]) for e in error.errors(include_url=False)]
    return []


def check_case(case: Case) -> None:
    """The case's rule refuses its value through both doors with one text, under each door's key."""
    from_args = [p for p in _args_problems(case) if p.key == case.args_key]
    from_config = [p for p in _config_problems(case) if p.key == case.config_key]
    rule = resource_rules.RULES[case.resource][case.rule]
    assert from_args, f"{case.id}: the component accepts {case.args_key} ({_args_problems(case)})"
    assert from_config, f"{case.id}: the stack file accepts {case.config_key} ({_config_problems(case)})"
    texts = {p.rule for p in from_args}
    assert texts == {p.rule for p in from_config}, (from_args, from_config)
    assert texts <= {p.rule for p in _own(rule, case)}, f"{case.id}: {texts} are another rule's"


def _own(rule: resource_rules.Check, case: Case) -> Iterable[Problem]:
    """What `rule` itself says of the case's Args, built unchecked."""
    door = DOORS[case.resource]
    return list(rule(_build(door.args, _changed(door.args_base, case.args))))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_rule_refuses_the_same_value_with_the_same_words_through_both_doors(case: Case) -> None:
    check_case(case)


def test_every_rule_of_every_resource_has_a_parity_case() -> None:
    registered = {(resource, name) for resource, found in resource_rules.RULES.items() for name in found}
    cased = {(c.resource, c.rule) for c in CASES}
    assert registered - cased == set(), "a rule with no parity case: add one to CASES"
    assert cased - registered == set(), "a parity case of no rule"
    assert set(resource_rules.RULES) == set(DOORS)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_valid_item_passes_both_doors(case: Case) -> None:
    """The bases the cases change are valid, so a case's problem is its own change's."""
    door = DOORS[case.resource]
    door.args.checked(door.args_base, door.args, "parity")
    door.section.model_validate(door.config_base)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_rule_made_a_no_op_fails_its_case(case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation: with the rule gone (as the architecture audit deleted four of a component's),
    the component, the stack file, or both accept the value, and its case fails."""
    monkeypatch.setitem(resource_rules.RULES[case.resource], case.rule, lambda item: iter(()))
    with pytest.raises(AssertionError):
        check_case(case)


# (component Args, stack file section, Args fields the section holds elsewhere: their path in it)
FIELD_PAIRS: list[tuple[type[Args], type[BaseModel], dict[str, tuple[str, ...]]]] = [
    (gke_cluster.GkeClusterArgs, config.ClusterConfig, {}),
    (gke_cluster.AuthorizedNetwork, config.AuthorizedNetwork, {}),
    (gke_cluster.MaintenanceWindow, config.MaintenanceWindow, {}),
    (gke_cluster.MaintenanceExclusion, config.MaintenanceExclusion, {}),
    (gcp_network.NetworkRef, config.ExistingNetwork, {"pods_range": ("pods_range_name",), "services_range": ("services_range_name",)}),
    (gcs.CheckpointBucketArgs, gcs.BucketSpec, {}),
    (filestore.FilestoreShareArgs, filestore.FilestoreSpec, {}),
    (nfs.NfsDiskArgs, nfs.NfsSpec, {"size_gb": ("disk_size_gb",)}),
    (lustre.LustreInstanceArgs, lustre.LustreSpec, {}),
]


def _shared(rule: Any) -> bool:
    """A rule of core/rules.py (a pattern, bounds or rule function), which both doors can hold."""
    return isinstance(rule, rules.Pattern | rules.Bounds) or getattr(rule, "__module__", None) == rules.__name__


def _field_rules(annotation: Any) -> set[int]:
    """The rules.* a config field's type applies (to it, or to its items)."""
    found = set()
    for item in getattr(annotation, "__metadata__", ()):
        wrapped = getattr(getattr(item, "func", None), "__wrapped__", None)
        if wrapped is not None:
            found.add(id(wrapped))
        for nested in getattr(item, "metadata", ()):  # a Field(...) in Annotated
            found |= _field_rules(typing.Annotated[int, nested])
    for arg in typing.get_args(annotation):
        found |= _field_rules(arg)
    return found


def _config_field(section: type[BaseModel], path: tuple[str, ...]) -> Any:
    for part in path[:-1]:
        nested = (
            typing.get_args(section.model_fields[part].annotation)[0]
            if typing.get_args(section.model_fields[part].annotation)
            else section.model_fields[part].annotation
        )
        assert isinstance(nested, type) and issubclass(nested, BaseModel), (part, nested)
        section = nested
    info = section.model_fields.get(path[-1])
    return None if info is None else typing.Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation


@pytest.mark.parametrize(("args", "section", "renames"), FIELD_PAIRS, ids=[f"{a.__name__}-{s.__name__}" for a, s, _ in FIELD_PAIRS])
def test_a_field_rule_both_doors_hold_is_the_same_rule(args: type[Args], section: type[BaseModel], renames: dict[str, tuple[str, ...]]) -> None:
    """Each core/rules.py rule of an Args field (its `_checks`) is the rule of the stack file's key
    for that field: the same object, so the same text."""
    missing = []
    for name, checks in args._checks.items():
        annotation = _config_field(section, renames.get(name, (name,)))
        if annotation is None:  # the stack file has no such key (the stack derives the field)
            continue
        held = _field_rules(annotation)
        for check in checks if isinstance(checks, tuple) else (checks,):
            rule = check.rule if isinstance(check, Each) else check
            if _shared(rule) and id(rule) not in held:
                missing.append((name, rule))
    assert missing == []


STACK_RULES = sorted(name for name, value in vars(config).items() if name.startswith("stack_") and callable(value))


@pytest.mark.parametrize("name", STACK_RULES)
def test_every_stack_rule_runs_on_its_own(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each stack rule (infra/stack.py `stack_*`) runs on a valid stack, whatever the others find:
    made to refuse, it is reported, and only it."""
    monkeypatch.setattr(config, name, lambda stack: iter([Problem(("trainstack:probe",), None, f"{name} refuses")]))
    with pytest.raises(ConfigError) as caught:
        config.load("probe", raw_stack_config("a3ultra-405b"))
    assert caught.value.problems == [f"trainstack:probe = None: {name} refuses"]
