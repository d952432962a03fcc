"""Run by tests/test_component_package.py in a process of its own: the SDK's component provider
(pulumi.provider) and google-cloud's protos both register `google.rpc.Status`, so they cannot
share one interpreter. Prints, as JSON, the package schema the analyzer infers, and what the
provider's construct path registers from camelCase dict inputs under the mock engine."""

import json
import sys
from typing import Any

import pulumi
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema

from helpers import render_with
from trainstack.app.package import NAME, package_version, prepared

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
}


def plain(value: Any) -> Any:
    """`value` as JSON, an Output as the marker `<output>`."""
    return "<output>" if isinstance(value, pulumi.Output) else value if isinstance(value, str | int | float | bool | dict | list) else repr(value)


def main() -> None:
    components = prepared()
    result = Analyzer(NAME).analyze(components)
    dependencies = sorted(result["dependencies"], key=lambda d: d.name)
    schema = generate_schema(NAME, package_version(), None, result["component_definitions"], result["type_definitions"], dependencies).to_json()

    provider = ComponentProvider(components, NAME, version=package_version())
    states: dict[str, dict[str, Any]] = {}

    def body(ctx: Any) -> None:
        for component, inputs in INPUTS.items():
            states[component] = {k: plain(v) for k, v in provider.construct(component.lower(), f"{NAME}:index:{component}", inputs).state.items()}

    rendered = render_with(body)
    registrations = [{"type": r.type, "name": r.name, "inputs": r.inputs} for r in rendered.registrations]
    json.dump({"schema": schema, "states": states, "registrations": registrations}, sys.stdout, default=repr)


if __name__ == "__main__":
    main()
