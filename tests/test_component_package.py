"""The Pulumi package `trainstack` (provider/, trainstack.app.deploy.package): the schema the SDK's
analyzer infers offline, the provider's construct path with the dict args it passes, and the
Pulumi YAML example against that schema."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import subprocess
import sys
import typing
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import UnionType
from typing import Any, Literal

import pytest
import yaml
from pulumi import ComponentResource
from pydantic import BaseModel

from trainstack import components, workloads
from trainstack.app.deploy.package import COMPONENTS, NAME, SECTION_FIELDS
from trainstack.components.args import spec_model

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
        return schema()["types"][ref.removeprefix("#/types/")].get("properties")  # None: an enum
    return None


# --- the schema -----------------------------------------------------------------------------------


def test_every_exported_component_but_the_training_job_is_in_the_package() -> None:
    assert sorted(c.__name__ for c in COMPONENTS) == sorted([n for n in EXPORTED if n != "TrainingJob"] + ["TrainingPlatform", "TrainingWorkload"])
    assert sorted(schema()["resources"]) == sorted(token(c.__name__) for c in COMPONENTS)


@pytest.mark.parametrize("component", sorted(c.__name__ for c in COMPONENTS))
def test_each_component_input_and_output_is_described(component: str) -> None:
    resource = schema()["resources"][token(component)]
    assert resource["isComponent"] and resource["description"]
    assert resource["inputProperties"], "every component takes inputs"
    undescribed = [k for k, v in {**resource["inputProperties"], **resource.get("properties", {})}.items() if not v.get("description")]
    assert undescribed == []


def test_every_object_type_property_is_described() -> None:
    assert [(t, k) for t, d in schema()["types"].items() for k, v in d.get("properties", {}).items() if not v.get("description")] == []


def _walk(model: type[BaseModel], prop: dict[str, Any], path: str) -> Iterator[str]:
    """What differs between `model` and the schema type `prop` refers to: keys, required keys,
    enum values, nested types (each nested model walked the same way)."""
    found = schema()["types"][_element(prop)["$ref"].removeprefix("#/types/")]
    if set(found["properties"]) != {f.alias or n for n, f in model.model_fields.items()}:
        yield f"{path}: keys {sorted(found['properties'])}"
    if set(found.get("required", [])) != {f.alias or n for n, f in model.model_fields.items() if f.is_required()}:
        yield f"{path}: required {found.get('required')}"
    for name, info in model.model_fields.items():
        key, sub = info.alias or name, found["properties"][info.alias or name]
        literal = _inside(info.annotation, lambda a: typing.get_origin(a) is Literal)
        nested = _inside(info.annotation, lambda a: isinstance(a, type) and issubclass(a, BaseModel))
        if literal is not None:
            enum = schema()["types"][_element(sub)["$ref"].removeprefix("#/types/")]["enum"]  # a Literal, or a list of them
            if [e["value"] for e in enum] != list(typing.get_args(literal)):
                yield f"{path}.{key}: enum {enum}"
        elif nested is not None and _element(sub).get("$ref") == "pulumi.json#/Any":
            if (
                _inside(
                    info.annotation,
                    lambda a: len([x for x in typing.get_args(a) if x is not type(None)]) > 1 and typing.get_origin(a) in (typing.Union, UnionType),
                )
                is None
            ):
                yield f"{path}.{key}: Any, though one type"
        elif nested is not None:
            yield from _walk(nested, sub, f"{path}.{key}")


def _element(prop: dict[str, Any]) -> dict[str, Any]:
    """The property of a list's items or a map's values; else `prop`."""
    return prop.get("items") or prop.get("additionalProperties") or prop


def _inside(annotation: Any, wanted: Any) -> Any:
    """The first type in `annotation` (through Annotated, Optional, list, dict) `wanted` accepts."""
    if wanted(annotation):
        return annotation
    return next((found for a in typing.get_args(annotation) if (found := _inside(a, wanted)) is not None), None)


@pytest.mark.parametrize("component", sorted(SECTION_FIELDS))
def test_the_sections_are_typed_by_the_stack_file_models(component: str) -> None:
    """One definition: each section input's type is generated from its infra.stack model, keys
    camelCase as a stack file writes them, required as the model requires them, Literals as enums."""
    inputs = schema()["resources"][token(component)]["inputProperties"]
    args = inspect.get_annotations(next(c for c in COMPONENTS if c.__name__ == component).__init__, eval_str=True)["args"]
    keys = {re.sub(r"_(\w)", lambda m: m.group(1).upper(), f): f for f in SECTION_FIELDS[component]}
    assert set(keys) <= set(inputs) and {f.name for f in dataclasses.fields(args)} >= set(keys.values())
    differences = []
    for key, field in keys.items():
        model = _inside(SECTION_FIELDS[component][field], lambda a: isinstance(a, type) and issubclass(a, BaseModel))
        if model is not None:
            differences += list(_walk(model, inputs[key], key))
    assert differences == []
    assert [k for k in keys if _element(inputs[k]).get("$ref") == "pulumi.json#/Any"] == []


def test_defaults_are_optional_inputs_and_the_machine_is_a_type_name() -> None:
    pool = schema()["resources"][token("GpuNodePool")]
    assert sorted(pool["requiredInputs"]) == ["cluster", "location", "machineType", "project", "serviceAccount", "zones"]
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
    """The camelCase names of `args`' fields without a default; of Args with a spec, the spec's
    required keys and those the component needs beside them (`spec_required`)."""
    spec = spec_model(args)
    own = {
        re.sub(r"_(\w)", lambda m: m.group(1).upper(), f.name)
        for f in dataclasses.fields(args)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    if spec is None:
        return sorted(own)
    keys = {info.alias or name for name, info in spec.model_fields.items() if info.is_required()}
    return sorted(own - {"spec"} | keys | set(args.spec_required()))  # type: ignore[attr-defined]


# --- the construct path with dict args ------------------------------------------------------------


def test_the_provider_constructs_components_from_camel_case_inputs() -> None:
    """ComponentProvider.construct maps the camelCase inputs to a dict of Python names with nested
    dicts and whole floats; each component builds its Args from it and registers its children."""
    registrations, states = probe()["registrations"], probe()["states"]
    (pool,) = [r for r in registrations if r["type"] == "gcp:container/nodePool:NodePool" and r["name"] == "gpunodepool"]
    assert (pool["inputs"]["nodeConfig"]["machineType"], pool["inputs"]["nodeCount"]) == ("a3-highgpu-8g", 2)
    (firewall,) = [r for r in registrations if r["type"] == "gcp:compute/firewall:Firewall" and r["name"].startswith("gkecluster")]
    assert firewall["inputs"]["allows"] == [{"protocol": "tcp", "ports": ["9443"]}]
    types = {r["type"] for r in registrations}
    assert {"gcp:container/cluster:Cluster", "kubernetes:helm.sh/v3:Release", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"} <= types
    assert states["Kueue"]["localQueueName"] == "research"
    assert states["GpuNodePool"]["nodeSelector"]["cloud.google.com/gke-nodepool"] == "h100"
    assert {"clusterId", "kubeconfig", "name"} <= set(states["GkeCluster"])


def test_a_spot_pool_through_the_package_that_names_no_reservation_consumes_none() -> None:
    """The component applies the stack file's rule (node_pools.default_affinity): spot,
    flex-start and queued capacity consumes no reservation, so the program need not say so."""
    (spot,) = [r for r in probe()["registrations"] if r["type"] == "gcp:container/nodePool:NodePool" and r["name"] == "spotpool"]
    assert spot["inputs"]["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    assert spot["inputs"]["nodeConfig"]["spot"] is True
    (on_demand,) = [r for r in probe()["registrations"] if r["type"] == "gcp:container/nodePool:NodePool" and r["name"] == "gpunodepool"]
    assert on_demand["inputs"]["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}  # said so


def test_the_platform_is_built_from_a_stack_files_sections_with_its_nics() -> None:
    """TrainingPlatform from the camelCase sections of an A4 stack: the pool gets its eight NIC
    networks, the platform its RDMA installers and Lustre, and the contract names the NICs."""
    registrations, states = probe()["registrations"], probe()["states"]
    (pool,) = [r for r in registrations if r["type"] == "gcp:container/nodePool:NodePool" and r["inputs"]["nodeConfig"]["machineType"] == "a4-highgpu-8g"]
    assert len(pool["inputs"]["networkConfig"]["additionalNodeNetworkConfigs"]) == 9  # gVNIC + 8 RDMA
    assert "gcp:lustre/instance:Instance" in {r["type"] for r in registrations}
    networks = [r["inputs"]["metadata"]["name"] for r in registrations if r["type"] == "kubernetes:networking.gke.io/v1:Network"]
    assert sorted(networks) == ["gvnic-1", *(f"rdma-{i}" for i in range(8))]
    assert {"kubeconfig", "clusterName", "localQueue", "storageClaim", "nicNetworks", "platform"} <= set(states["TrainingPlatform"])


def test_a_bad_platform_input_is_an_input_properties_error_naming_it_as_written() -> None:
    (error,) = [e for e in probe()["errors"] if e["component"] == "TrainingPlatform"]
    assert error["type"] == "InputPropertiesError"
    assert {"property_path": "gpuPool.nodeCount", "reason": "-1: must be between 0 and 1000 (GKE allows at most 1000 nodes a pool per zone)"} in error["errors"]


def test_a_components_bad_args_are_an_input_properties_error_naming_each_input_as_the_schema_does() -> None:
    """A component's ArgsError reaches the engine as InputPropertiesError, not a failed construct:
    a spec key and a wiring field (`workload_policy_name`) each by its schema input's name."""
    (error,) = [e for e in probe()["errors"] if e["component"] == "GpuNodePool"]
    assert error["type"] == "InputPropertiesError"
    paths = {e["property_path"]: e["reason"] for e in error["errors"]}
    assert paths["nodeCount"].startswith("-1: must be between 0 and 1000")
    assert paths["workloadPolicyName"].startswith("'Not_A_Name': must be")
    assert set(paths) <= set(schema()["resources"][token("GpuNodePool")]["inputProperties"])


def test_a_workload_runs_on_the_platform_a_program_references() -> None:
    """TrainingWorkload from a workload section and a reference to a TrainingPlatform (as a YAML
    program passes `${platform}`): the job's JobSet on the platform's queue and NICs, its outputs."""
    registrations, state = probe()["registrations"], probe()["states"]["TrainingWorkload"]
    (jobset,) = [r for r in registrations if r["type"] == "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet" and r["inputs"]["metadata"]["name"] == "llama31-8b"]
    assert jobset["inputs"]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "a4"
    annotations = jobset["inputs"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["annotations"]
    assert "rdma-7" in annotations["networking.gke.io/interfaces"]
    assert {"jobName", "watchJob", "followLogs", "logDir", "queue"} <= set(state)


def test_a_bad_workload_input_is_an_input_properties_error_naming_it_as_written() -> None:
    found = {e["case"]: e for e in probe()["errors"] if e["component"] == "TrainingWorkload"}
    assert set(found) == {"workload.nodes", "workload.framework", "platform", "workload.parallelism.tensr"}
    for case, error in found.items():
        assert error["type"] == "InputPropertiesError" and error["errors"][0]["property_path"].startswith(case), error
    misspelled = found["workload.parallelism.tensr"]["errors"]
    assert misspelled == [{"property_path": "workload.parallelism.tensr", "reason": "unknown key (value 2.0); did you mean workload.parallelism.tensor?"}]


def test_a_yaml_program_with_a_misspelled_key_is_refused_naming_it_as_written(tmp_path: Path) -> None:
    """The SDK maps only the inputs its schema has, so the provider refuses any other before it:
    a misspelled key nested in a YAML program's section stops the program (it used to be dropped)."""
    program = yaml.safe_load(A4_EXAMPLE.read_text())
    program["resources"]["platform"]["properties"]["gpuPool"]["nodeCont"] = 8
    (tmp_path / "Pulumi.yaml").write_text(yaml.safe_dump(program, sort_keys=False))
    done = probe_example(tmp_path / "Pulumi.yaml")
    assert done.returncode != 0
    assert "gpuPool.nodeCont: unknown key (value 8); did you mean gpuPool.nodeCount?" in done.stderr
    program["resources"]["platform"]["properties"]["gpuPool"].pop("nodeCont")
    program["resources"]["job"]["properties"]["workload"]["nodeCuont"] = 3
    (tmp_path / "Pulumi.yaml").write_text(yaml.safe_dump(program, sort_keys=False))
    done = probe_example(tmp_path / "Pulumi.yaml")
    assert done.returncode != 0 and "workload.nodeCuont: unknown key (value 3)" in done.stderr


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


# --- the A4 example: TrainingPlatform and TrainingWorkload from Pulumi YAML ---------------------------

A4_EXAMPLE = ROOT / "examples" / "a4-lustre-nemo" / "Pulumi.yaml"
SCALAR_TYPES = {"string": str, "boolean": bool, "integer": int, "number": int | float}


def type_problems(value: Any, prop: dict[str, Any], path: str, resources: dict[str, Any]) -> list[str]:
    """Where `value` is not of the schema property `prop`'s type: a scalar of another type, an enum's
    missing value, an object's unknown or missing key, a reference to a resource of another type."""
    ref = prop.get("$ref", "")
    if ref.startswith("#/resources/"):
        name = value[2:-1] if isinstance(value, str) and value.startswith("${") else None
        wanted = ref.removeprefix("#/resources/")
        return [] if name in resources and resources[name]["type"] == wanted else [f"{path}: {value!r} is no {wanted}"]
    if ref == "pulumi.json#/Any":
        return []
    if ref:
        kind = schema()["types"][ref.removeprefix("#/types/")]
        if "enum" in kind:
            return [] if value in [e["value"] for e in kind["enum"]] else [f"{path}: {value!r} is not one of {[e['value'] for e in kind['enum']]}"]
        return object_problems(value, kind.get("properties", {}), kind.get("required", []), path, resources)
    kind = prop.get("type")
    if kind == "array":
        return (
            [p for i, item in enumerate(value) for p in type_problems(item, prop["items"], f"{path}[{i}]", resources)]
            if isinstance(value, list)
            else [f"{path}: not a list"]
        )
    if kind == "object":
        values = prop.get("additionalProperties", {})
        return [p for k, v in value.items() for p in type_problems(v, values, f"{path}.{k}", resources)] if isinstance(value, dict) else [f"{path}: not a map"]
    if kind in SCALAR_TYPES and (not isinstance(value, SCALAR_TYPES[kind]) or (kind != "boolean" and isinstance(value, bool))):
        return [f"{path}: {value!r} is not a {kind}"]
    return []


def object_problems(value: Any, properties: dict[str, Any], required: list[str], path: str, resources: dict[str, Any]) -> list[str]:
    if not isinstance(value, dict):
        return [f"{path}: not an object"]
    found = [f"{path}.{name}: missing" for name in required if name not in value]
    for name, item in value.items():
        found += type_problems(item, properties[name], f"{path}.{name}", resources) if name in properties else [f"{path}.{name}: not in the schema"]
    return found


def test_the_a4_example_sets_only_what_the_schema_has_with_its_types() -> None:
    program = yaml.safe_load(A4_EXAMPLE.read_text())
    assert (A4_EXAMPLE.parent / program["packages"][NAME] / "PulumiPlugin.yaml").is_file()
    resources = program["resources"]
    assert [r["type"] for r in resources.values()] == [token("TrainingPlatform"), token("TrainingWorkload")]
    problems = []
    for name, resource in resources.items():
        definition = schema()["resources"][resource["type"]]
        problems += object_problems(resource["properties"], definition["inputProperties"], definition.get("requiredInputs", []), name, resources)
    assert problems == []
    for name, output in re.findall(r"\$\{(\w+)\.(\w+)\}", A4_EXAMPLE.read_text()):
        assert output in schema()["resources"][resources[name]["type"]]["properties"], (name, output)


def test_the_type_check_sees_a_wrong_type_an_unknown_key_and_a_wrong_reference() -> None:
    program = yaml.safe_load(A4_EXAMPLE.read_text())
    resources = program["resources"]
    platform, job = resources["platform"]["properties"], resources["job"]["properties"]
    inputs = schema()["resources"][token("TrainingPlatform")]["inputProperties"]
    assert type_problems({**platform["gpuPool"], "nodeCount": "8"}, inputs["gpuPool"], "gpuPool", resources) == ["gpuPool.nodeCount: '8' is not a integer"]
    assert type_problems({**platform["storage"], "kind": "lustr"}, inputs["storage"], "storage", resources)[0].startswith("storage.kind: 'lustr' is not one of")
    assert type_problems({**platform["cluster"], "nam": "x"}, inputs["cluster"], "cluster", resources) == ["cluster.nam: not in the schema"]
    workload_inputs = schema()["resources"][token("TrainingWorkload")]["inputProperties"]
    assert type_problems("${job}", workload_inputs["platform"], "platform", resources) == [f"platform: '${{job}}' is no {token('TrainingPlatform')}"]
    assert type_problems(job["workload"], workload_inputs["workload"], "workload", resources) == []


def test_the_a4_example_is_the_a4_stack_files_sections() -> None:
    """The example is stacks/Pulumi.a4-llama3-70b.yaml as a YAML program, so every check of that stack
    (validation, plan, cost, memory fit) covers it."""
    resources = yaml.safe_load(A4_EXAMPLE.read_text())["resources"]
    stack = yaml.safe_load((ROOT / "stacks" / "Pulumi.a4-llama3-70b.yaml").read_text())["config"]
    sections = {key.split(":", 1)[1]: value for key, value in stack.items() if key != "trainstack:workload"}
    assert resources["platform"]["properties"] == sections
    assert resources["job"]["properties"]["workload"] == stack["trainstack:workload"]


def probe_example(program: Path) -> subprocess.CompletedProcess[str]:
    """tests/package_probe.py run on the YAML program `program`."""
    return subprocess.run(
        [sys.executable, str(ROOT / "tests" / "package_probe.py"), "--example", str(program)], capture_output=True, text=True, cwd=ROOT / "tests", check=False
    )


@cache
def example_probe() -> dict[str, Any]:
    done = probe_example(A4_EXAMPLE)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_a4_example_deploys_through_the_provider() -> None:
    """The YAML program's resources constructed by the provider as the engine asks (the job's platform a
    reference): the A4 pool with its nine NICs, Lustre, and the job's JobSet on the platform's queue."""
    registrations = example_probe()["registrations"]
    (pool,) = [r for r in registrations if r["type"] == "gcp:container/nodePool:NodePool" and r["inputs"]["nodeConfig"]["machineType"] == "a4-highgpu-8g"]
    assert len(pool["inputs"]["networkConfig"]["additionalNodeNetworkConfigs"]) == 9
    assert "gcp:lustre/instance:Instance" in {r["type"] for r in registrations}
    (jobset,) = [r for r in registrations if r["type"] == "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet" and r["inputs"]["metadata"]["name"] == "llama31-70b"]
    assert jobset["inputs"]["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "a4"
    assert jobset["parent"].split("::")[2].startswith(f"{token('TrainingWorkload')}$")  # the job's, not the stack's
    assert set(example_probe()["states"]) == {"platform", "job"}


def test_the_plugin_folder_is_what_pulumi_package_add_loads() -> None:
    plugin = ROOT / "provider"
    assert yaml.safe_load((plugin / "PulumiPlugin.yaml").read_text()) == {"runtime": "python"}
    assert "main(provider(), sys.argv[1:])" in (plugin / "__main__.py").read_text()
    assert [line for line in (plugin / "requirements.txt").read_text().splitlines() if line and not line.startswith("#")] == [".."]
