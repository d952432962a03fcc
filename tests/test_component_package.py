"""The Pulumi package `trainstack` (provider/, trainstack.app.package): the schema the SDK's
analyzer infers offline, the provider's construct path with the dict args it passes, and the
Pulumi YAML example against that schema."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import of_type, render_with
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from trainstack import components, workloads
from trainstack.app.package import COMPONENTS, NAME, package_version, prepared

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "two-gpu-pools" / "Pulumi.yaml"
EXPORTED = sorted(
    name for module in (components, workloads) for name in module.__all__
    if isinstance(getattr(module, name), type) and hasattr(getattr(module, name), "register_outputs")
)


@cache
def schema() -> dict[str, Any]:
    result = Analyzer(NAME).analyze(prepared())
    dependencies = sorted(result["dependencies"], key=lambda d: d.name)
    return generate_schema(NAME, package_version(), None, result["component_definitions"], result["type_definitions"], dependencies).to_json()


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


# --- the construct path with dict args ------------------------------------------------------------


def test_the_provider_constructs_components_from_camel_case_inputs() -> None:
    provider = ComponentProvider(prepared(), NAME, version=package_version())
    states: dict[str, dict[str, Any]] = {}

    def body(ctx: Any) -> None:
        cluster = provider.construct("cluster", token("GkeCluster"), {
            "project": "my-project", "location": "us-central1", "name": "research", "nodeLocations": ["us-central1-a"],
            "network": {"network": "vpc", "subnetwork": "subnet", "podsRange": "pods", "servicesRange": "services"},
            "nodeServiceAccount": "nodes@my-project.iam.gserviceaccount.com", "controlPlanePorts": [9443.0],
            "authorizedNetworks": [{"cidrBlock": "203.0.113.0/24"}],
        })
        pool = provider.construct("h100", token("GpuNodePool"), {
            "project": "my-project", "location": "us-central1", "cluster": "projects/my-project/locations/us-central1/clusters/research",
            "name": "h100", "zones": ["us-central1-a"], "machineType": "a3-highgpu-8g", "serviceAccount": "nodes@my-project.iam.gserviceaccount.com",
            "nodeCount": 2.0, "reservation": {"affinity": "none"},
        })
        kueue = provider.construct("kueue", token("Kueue"), {
            "clusterQueue": "research", "localQueue": "research", "namespace": "default",
            "flavors": [{"name": "h100", "nodePool": "h100", "machineType": "a3-highgpu-8g", "nodes": 2.0, "topologyAware": False}],
        })
        states.update(cluster=cluster.state, pool=pool.state, kueue=kueue.state)

    rendered = render_with(body)
    (pool,) = of_type(rendered, "gcp:container/nodePool:NodePool")
    assert (pool.inputs["nodeConfig"]["machineType"], pool.inputs["nodeCount"]) == ("a3-highgpu-8g", 2)
    (firewall,) = of_type(rendered, "gcp:compute/firewall:Firewall")
    assert firewall.inputs["allows"] == [{"protocol": "tcp", "ports": ["9443"]}]
    assert of_type(rendered, "gcp:container/cluster:Cluster") and of_type(rendered, "kubernetes:helm.sh/v3:Release")
    assert states["kueue"]["localQueueName"] == "research"
    assert states["pool"]["nodeSelector"]["cloud.google.com/gke-nodepool"] == "h100"
    assert {"clusterId", "kubeconfig", "name"} <= set(states["cluster"])


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
