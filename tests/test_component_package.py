"""The Pulumi package `trainstack` (provider/, trainstack.app.package): the schema the SDK's
analyzer infers offline, the provider's construct path with the dict args it passes, and the
Pulumi YAML example against that schema."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi import ComponentResource

from trainstack import components, workloads
from trainstack.app.package import COMPONENTS, NAME

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "two-gpu-pools" / "Pulumi.yaml"
EXPORTED = sorted(
    name
    for module in (components, workloads)
    for name in module.__all__
    if isinstance(getattr(module, name), type) and hasattr(getattr(module, name), "register_outputs")
)


@cache
def probe() -> dict[str, Any]:
    """tests/package_probe.py's schema and construct results (a process of its own)."""
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "package_probe.py")], capture_output=True, text=True, cwd=ROOT / "tests", check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def schema() -> dict[str, Any]:
    return probe()["schema"]


def token(component: str) -> str:
    return f"{NAME}:index:{component}"


def object_properties(prop: dict[str, Any]) -> dict[str, Any] | None:
    """The properties of the object type a property refers to (None: not one of ours)."""
    ref = prop.get("$ref", "")
    if ref.startswith(f"#/types/{NAME}:"):
        return schema()["types"][ref.removeprefix("#/types/")]["properties"]
    return None


# --- the schema -----------------------------------------------------------------------------------


def test_every_exported_component_but_the_training_job_is_in_the_package() -> None:
    assert sorted(c.__name__ for c in COMPONENTS) == [n for n in EXPORTED if n != "TrainingJob"]
    assert sorted(schema()["resources"]) == sorted(token(c.__name__) for c in COMPONENTS)


@pytest.mark.parametrize("component", sorted(c.__name__ for c in COMPONENTS))
def test_each_component_input_and_output_is_described(component: str) -> None:
    resource = schema()["resources"][token(component)]
    assert resource["isComponent"] and resource["description"]
    assert resource["inputProperties"], "every component takes inputs"
    undescribed = [k for k, v in {**resource["inputProperties"], **resource.get("properties", {})}.items() if not v.get("description")]
    assert undescribed == []


def test_every_object_type_property_is_described() -> None:
    assert [(t, k) for t, d in schema()["types"].items() for k, v in d["properties"].items() if not v.get("description")] == []


def test_defaults_are_optional_inputs_and_the_machine_is_a_type_name() -> None:
    pool = schema()["resources"][token("GpuNodePool")]
    assert sorted(pool["requiredInputs"]) == ["cluster", "location", "machineType", "name", "project", "serviceAccount", "zones"]
    assert pool["inputProperties"]["machineType"]["type"] == "string"
    assert pool["inputProperties"]["extraNetworks"]["items"]["$ref"] == f"#/types/{NAME}:index:ExtraNetwork"
    assert {"pool", "nodeSelector", "tolerations"} <= set(pool["properties"])


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.__name__)
def test_an_input_is_required_exactly_when_its_field_has_no_default(component: type[ComponentResource]) -> None:
    """Args fields are typed as they are at run time (`labels: dict[str, str] = {}`); the package still
    offers each field with a default as optional, the nested types' fields too."""
    args = inspect.get_annotations(component.__init__, eval_str=True)["args"]
    resource = schema()["resources"][token(component.__name__)]
    assert sorted(resource.get("requiredInputs", [])) == required(args)
    for prop in resource["inputProperties"].values():
        ref = prop.get("items", prop).get("$ref", "").removeprefix(f"#/types/{NAME}:index:")
        nested = getattr(components, ref, None) or getattr(workloads, ref, None)
        if isinstance(nested, type) and dataclasses.is_dataclass(nested):
            assert sorted(schema()["types"][f"{NAME}:index:{ref}"].get("required", [])) == required(nested), ref


def required(args: type) -> list[str]:
    """The camelCase names of `args`' fields without a default."""
    return sorted(
        re.sub(r"_(\w)", lambda m: m.group(1).upper(), f.name)
        for f in dataclasses.fields(args)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    )


# --- the construct path with dict args ------------------------------------------------------------


def test_the_provider_constructs_components_from_camel_case_inputs() -> None:
    """ComponentProvider.construct maps the camelCase inputs to a dict of Python names with nested
    dicts and whole floats; each component builds its Args from it and registers its children."""
    registrations, states = probe()["registrations"], probe()["states"]
    (pool,) = [r for r in registrations if r["type"] == "gcp:container/nodePool:NodePool"]
    assert (pool["inputs"]["nodeConfig"]["machineType"], pool["inputs"]["nodeCount"]) == ("a3-highgpu-8g", 2)
    (firewall,) = [r for r in registrations if r["type"] == "gcp:compute/firewall:Firewall"]
    assert firewall["inputs"]["allows"] == [{"protocol": "tcp", "ports": ["9443"]}]
    types = {r["type"] for r in registrations}
    assert {"gcp:container/cluster:Cluster", "kubernetes:helm.sh/v3:Release", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"} <= types
    assert states["Kueue"]["localQueueName"] == "research"
    assert states["GpuNodePool"]["nodeSelector"]["cloud.google.com/gke-nodepool"] == "h100"
    assert {"clusterId", "kubeconfig", "name"} <= set(states["GkeCluster"])


# --- the YAML example -----------------------------------------------------------------------------


def unknown_properties(given: dict[str, Any], properties: dict[str, Any], required: list[str], path: str) -> list[str]:
    """Each property `given` that the schema lacks, and each required one it leaves out, recursively."""
    found = [f"{path}{name}: missing" for name in required if name not in given]
    for name, value in given.items():
        prop = properties.get(name)
        if prop is None:
            found.append(f"{path}{name}: not in the schema")
            continue
        items = prop.get("items", {})
        nested = object_properties(items if isinstance(value, list) else prop)
        if nested is not None:
            kind = schema()["types"][(items if isinstance(value, list) else prop)["$ref"].removeprefix("#/types/")]
            needed = kind.get("required", [])
            for i, item in enumerate(value if isinstance(value, list) else [value]):
                where = f"{path}{name}[{i}]." if isinstance(value, list) else f"{path}{name}."
                found += unknown_properties(item, nested, needed, where)
    return found


def test_the_yaml_example_uses_only_what_the_schema_has() -> None:
    program = yaml.safe_load(EXAMPLE.read_text())
    assert (EXAMPLE.parent / program["packages"][NAME] / "PulumiPlugin.yaml").is_file()
    resources = program["resources"]
    ours = {name: r for name, r in resources.items() if r["type"].startswith(f"{NAME}:")}
    assert {r["type"] for r in ours.values()} == {token("GkeCluster"), token("GpuNodePool"), token("Kueue")}
    problems = []
    for name, resource in ours.items():
        definition = schema()["resources"].get(resource["type"])
        assert definition is not None, resource["type"]
        problems += unknown_properties(resource.get("properties", {}), definition["inputProperties"], definition.get("requiredInputs", []), f"{name}.")
    assert problems == []
    # Every ${resource.output} the program reads is an output of that component.
    for ref in re.findall(r"\$\{(\w+)\.(\w+)\}", EXAMPLE.read_text()):
        if ref[0] in ours:
            assert ref[1] in schema()["resources"][ours[ref[0]]["type"]]["properties"], ref


def test_the_yaml_example_has_two_pools_of_different_machines_and_a_flavor_each() -> None:
    resources = yaml.safe_load(EXAMPLE.read_text())["resources"]
    pools = {n: r["properties"] for n, r in resources.items() if r["type"] == token("GpuNodePool")}
    assert len(pools) == 2 and len({p["machineType"] for p in pools.values()}) == 2
    flavors = resources["kueue"]["properties"]["flavors"]
    assert sorted((f["nodePool"], f["machineType"]) for f in flavors) == sorted((p["name"], p["machineType"]) for p in pools.values())


def test_the_plugin_folder_is_what_pulumi_package_add_loads() -> None:
    plugin = ROOT / "provider"
    assert yaml.safe_load((plugin / "PulumiPlugin.yaml").read_text()) == {"runtime": "python"}
    assert "component_provider_host(prepared(), NAME" in (plugin / "__main__.py").read_text()
    assert [line for line in (plugin / "requirements.txt").read_text().splitlines() if line and not line.startswith("#")] == [".."]
