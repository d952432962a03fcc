"""Run by tests/test_component_package.py in a process of its own: the SDK's component provider
(pulumi.provider) and google-cloud's protos both register `google.rpc.Status`, so they cannot
share one interpreter. Prints, as JSON, the package schema the analyzer infers, and what the
provider's construct path registers from camelCase dict inputs under the mock engine; with
`--example <Pulumi.yaml>`, what a Pulumi YAML program of the package's components registers."""

import json
import sys
from pathlib import Path
from typing import Any

import pulumi
import yaml
from google.protobuf import struct_pb2
from pulumi.runtime import rpc

from helpers import render_with
from trainstack.app.deploy.package import NAME
from trainstack.app.deploy.package import provider as package_provider

SA = "nodes@my-project.iam.gserviceaccount.com"
INPUTS: dict[str, dict[str, Any]] = {
    "GkeCluster": {
        "project": "my-project",
        "location": "us-central1",
        "name": "research",
        "nodeLocations": ["us-central1-a"],
        "network": {"network": "vpc", "subnetwork": "subnet", "podsRange": "pods", "servicesRange": "services"},
        "nodeServiceAccount": SA,
        "controlPlanePorts": [9443.0],
        "authorizedNetworks": [{"cidrBlock": "203.0.113.0/24"}],
    },
    "GpuNodePool": {
        "project": "my-project",
        "location": "us-central1",
        "cluster": "projects/my-project/locations/us-central1/clusters/research",
        "name": "h100",
        "zones": ["us-central1-a"],
        "machineType": "a3-highgpu-8g",
        "serviceAccount": SA,
        "nodeCount": 2.0,
        "reservation": {"affinity": "none"},
    },
    "Kueue": {
        "clusterQueue": "research",
        "localQueue": "research",
        "namespace": "default",
        "flavors": [{"name": "h100", "nodePool": "h100", "machineType": "a3-highgpu-8g", "nodes": 2.0, "topologyAware": False}],
    },
    "TrainingPlatform": {
        "project": "my-project",
        "region": "us-central1",
        "zone": "us-central1-b",
        "cluster": {"name": "a4-platform", "versionPrefix": "1.35.", "authorizedNetworks": [{"cidrBlock": "203.0.113.0/24"}]},
        "gpuPool": {"name": "a4", "machineType": "a4-highgpu-8g", "nodeCount": 2.0, "reservation": {"affinity": "none"}, "gpuDriver": "latest"},
        "storage": {"kind": "lustre", "lustre": {"capacityGib": 18000.0}},
        "image": {"prebuilt": "nvcr.io/nvidia/nemo:25.07"},
        "namespace": "trainstack",
    },
}
# A spot pool that names no reservation: it consumes none, as a stack file's spot pool does.
SPOT_POOL = {**{k: v for k, v in INPUTS["GpuNodePool"].items() if k != "reservation"}, "name": "spot", "provisioning": "spot"}
BAD = {
    "TrainingPlatform": {**INPUTS["TrainingPlatform"], "gpuPool": {**INPUTS["TrainingPlatform"]["gpuPool"], "nodeCount": -1.0}},
    # a component's Args: a spec key and a wiring field broken at once
    "GpuNodePool": {**INPUTS["GpuNodePool"], "nodeCount": -1.0, "workloadPolicyName": "Not_A_Name"},
}
# A NeMo 2 job on the A4 platform, its `platform` a program's reference to it (as the engine sends one).
WORKLOAD = {
    "name": "llama31-8b",
    "framework": "nemo2",
    "model": "llama3.1-8b",
    "nodes": 2.0,
    "steps": 30.0,
    "precision": "bf16",
    "microBatchSize": 1.0,
    "globalBatchSize": 128.0,
    "seqLength": 8192.0,
}
BAD_WORKLOADS = {
    "workload.nodes": {**WORKLOAD, "nodes": 3.0},
    "workload.framework": {**WORKLOAD, "framework": "nemo3"},
    "platform": WORKLOAD,
    "workload.parallelism.tensr": {**WORKLOAD, "parallelism": {"tensr": 2.0}},  # a misspelled key, nested
}


def reference(urn: str) -> Any:
    """`urn` as the engine sends a resource reference, deserialized by the provider's runtime."""
    ref = struct_pb2.Struct()
    ref.update({"platform": {rpc._special_sig_key: rpc._special_resource_sig, "urn": urn}})
    return rpc.deserialize_properties(ref)["platform"]


def pulumi_type(exc: Exception) -> str:
    """The Pulumi SDK's class of `exc`, the one the engine's provider server sees (a component's own subclass aside)."""
    return next(c.__name__ for c in type(exc).__mro__ if c.__module__.startswith("pulumi"))


def plain(value: Any) -> Any:
    """`value` as JSON, an Output as the marker `<output>`."""
    return "<output>" if isinstance(value, pulumi.Output) else value if isinstance(value, str | int | float | bool | dict | list) else repr(value)


def main() -> None:
    provider = package_provider()
    schema = json.loads(provider.schema or "{}")
    states: dict[str, dict[str, Any]] = {}
    errors: list[dict[str, Any]] = []

    def body(ctx: Any) -> None:
        urns = {}
        for component, inputs in INPUTS.items():
            result = provider.construct(component.lower(), f"{NAME}:index:{component}", inputs)
            states[component], urns[component] = {k: plain(v) for k, v in result.state.items()}, result.urn
        provider.construct("spotpool", f"{NAME}:index:GpuNodePool", SPOT_POOL)
        for component, inputs in BAD.items():
            try:
                provider.construct(f"bad-{component.lower()}", f"{NAME}:index:{component}", inputs)
            except pulumi.InputPropertiesError as exc:
                errors.append({"component": component, "type": pulumi_type(exc), "errors": exc.errors})

        def workloads(urn: str) -> None:
            on = reference(urn)
            result = provider.construct("job", f"{NAME}:index:TrainingWorkload", {"workload": WORKLOAD, "platform": on})
            states["TrainingWorkload"] = {k: plain(v) for k, v in result.state.items()}
            for case, inputs in BAD_WORKLOADS.items():
                given = {"workload": inputs, "platform": on if case != "platform" else reference(urn.replace("::trainingplatform", "::elsewhere"))}
                try:
                    provider.construct(f"bad-{case}", f"{NAME}:index:TrainingWorkload", given)
                except pulumi.InputPropertiesError as exc:
                    errors.append({"component": "TrainingWorkload", "case": case, "type": pulumi_type(exc), "errors": exc.errors})

        pulumi.Output.from_input(urns["TrainingPlatform"]).apply(workloads)

    rendered = render_with(body)
    registrations = [{"type": r.type, "name": r.name, "inputs": r.inputs} for r in rendered.registrations]
    json.dump({"schema": schema, "states": states, "registrations": registrations, "errors": errors}, sys.stdout, default=repr)


def example(path: str) -> None:
    """Construct each trainstack resource of the Pulumi YAML program at `path` through the provider, in
    order, a `${name}` property as a reference to resource `name` (as the engine sends it), under the
    mock engine; print what registered and each component's outputs."""
    program = yaml.safe_load(Path(path).read_text())
    provider = package_provider()
    states: dict[str, dict[str, Any]] = {}

    def construct(remaining: list[tuple[str, dict[str, Any]]], urns: dict[str, str]) -> None:
        if not remaining:
            return
        (name, resource), rest = remaining[0], remaining[1:]
        inputs = {k: reference(urns[v[2:-1]]) if isinstance(v, str) and v[2:-1] in urns else v for k, v in resource.get("properties", {}).items()}
        result = provider.construct(name, resource["type"], inputs)
        states[name] = {k: plain(v) for k, v in result.state.items()}
        pulumi.Output.from_input(result.urn).apply(lambda urn: construct(rest, {**urns, name: urn}))

    rendered = render_with(lambda ctx: construct(list(program["resources"].items()), {}))
    registrations = [{"type": r.type, "name": r.name, "parent": r.parent, "inputs": r.inputs} for r in rendered.registrations]
    json.dump({"states": states, "registrations": registrations}, sys.stdout, default=repr)


if __name__ == "__main__":
    example(sys.argv[2]) if sys.argv[1:2] == ["--example"] else main()
