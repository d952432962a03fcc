"""Strict schema validation of rendered objects: built-ins against Kubernetes 1.32, CRs against their CRDs."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from trainstack.app.schemas.validate import _registry, _strict, crd_for, validate_object
from trainstack.core import catalog

KUEUE = "kueue.x-k8s.io/v1beta2"
JOBSET = "jobset.x-k8s.io/v1alpha2"
GKE_NETWORKING = "networking.gke.io/v1"


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app.kubernetes.io/name": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx:1.27",
                            "imagePullPolicy": "IfNotPresent",
                            "ports": [{"containerPort": 80}],
                            "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": 1}},
                        }
                    ],
                },
            },
        },
    }


def cluster_queue() -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": "training"},
        "spec": {
            "namespaceSelector": {},
            "cohortName": "gpus",
            "queueingStrategy": "BestEffortFIFO",
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a3-ultra",
                            "resources": [
                                {"name": "cpu", "nominalQuota": 224},
                                {"name": "memory", "nominalQuota": "2952Gi"},
                                {"name": "nvidia.com/gpu", "nominalQuota": 8, "borrowingLimit": "0"},
                            ],
                        }
                    ],
                }
            ],
        },
    }


def local_queue() -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": "training", "namespace": "team-a"},
        "spec": {"clusterQueue": "training"},
    }


def resource_flavor() -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "ResourceFlavor",
        "metadata": {"name": "a3-ultra"},
        "spec": {
            "nodeLabels": {"cloud.google.com/gke-accelerator": "nvidia-h200-141gb"},
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "topologyName": "gke-default",
        },
    }


def topology() -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "Topology",
        "metadata": {"name": "gke-default"},
        "spec": {
            "levels": [
                {"nodeLabel": "cloud.google.com/gce-topology-block"},
                {"nodeLabel": "cloud.google.com/gce-topology-subblock"},
                {"nodeLabel": "kubernetes.io/hostname"},
            ]
        },
    }


def workload_priority_class() -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
        "description": "production training",
    }


def jobset() -> dict[str, Any]:
    pod_spec = {
        "restartPolicy": "Never",
        "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-h200-141gb"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [
            {
                "name": "trainer",
                "image": "us-docker.pkg.dev/p/r/trainer:1",
                "command": ["torchrun", "train.py"],
                "env": [{"name": "NCCL_DEBUG", "value": "WARN"}],
                "ports": [{"containerPort": 29500, "protocol": "TCP"}],
                "resources": {"limits": {"nvidia.com/gpu": 8, "memory": "1800Gi"}},
                "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
            }
        ],
        "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "256Gi"}}],
    }
    return {
        "apiVersion": JOBSET,
        "kind": "JobSet",
        "metadata": {"name": "llama", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "training"}},
        "spec": {
            "network": {"enableDNSHostnames": True},
            "failurePolicy": {"maxRestarts": 3},
            "replicatedJobs": [
                {
                    "name": "workers",
                    "replicas": 1,
                    "template": {
                        "metadata": {"annotations": {"kueue.x-k8s.io/podset-required-topology": "cloud.google.com/gce-topology-block"}},
                        "spec": {
                            "parallelism": 2,
                            "completions": 2,
                            "backoffLimit": 0,
                            "completionMode": "Indexed",
                            "template": {"metadata": {"labels": {"app": "llama"}}, "spec": pod_spec},
                        },
                    },
                }
            ],
        },
    }


def network() -> dict[str, Any]:
    return {
        "apiVersion": GKE_NETWORKING,
        "kind": "Network",
        "metadata": {"name": "rdma-0"},
        "spec": {
            "type": "Device",
            "parametersRef": {"group": "networking.gke.io", "kind": "GKENetworkParamSet", "name": "rdma-0"},
        },
    }


def gke_network_param_set() -> dict[str, Any]:
    return {
        "apiVersion": GKE_NETWORKING,
        "kind": "GKENetworkParamSet",
        "metadata": {"name": "rdma-0"},
        "spec": {"vpc": "training-rdma", "vpcSubnet": "training-rdma-sub-0", "deviceMode": "RDMA"},
    }


VALID = [
    deployment,
    cluster_queue,
    local_queue,
    resource_flavor,
    topology,
    workload_priority_class,
    jobset,
    network,
    gke_network_param_set,
]


@pytest.mark.parametrize("make", VALID, ids=lambda make: make.__name__)
def test_valid_objects_pass(make: Any) -> None:
    assert validate_object(make()) == []


def test_misspelled_field_in_deployment_names_object_and_path() -> None:
    obj = deployment()
    container = obj["spec"]["template"]["spec"]["containers"][0]
    container["imagePullPolic"] = container.pop("imagePullPolicy")
    assert validate_object(obj) == ["Deployment/web: spec.template.spec.containers[0].imagePullPolic: unknown field"]


def test_builtin_wrong_type_and_missing_required_field() -> None:
    obj = deployment()
    obj["spec"]["replicas"] = "2"
    del obj["spec"]["selector"]
    errors = validate_object(obj)
    assert "Deployment/web: spec.replicas: '2' is not of type 'integer', 'null'" in errors
    assert "Deployment/web: spec: 'selector' is a required property" in errors
    assert len(errors) == 2


def test_unknown_field_in_cluster_queue_spec() -> None:
    obj = cluster_queue()
    obj["spec"]["cohort"] = "gpus"  # the v1beta1 name; v1beta2 calls it cohortName
    assert validate_object(obj) == ["ClusterQueue/training: spec.cohort: unknown field"]


def test_crd_enum_and_required_fields_are_checked() -> None:
    obj = cluster_queue()
    obj["spec"]["queueingStrategy"] = "FIFO"
    del obj["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"]
    errors = validate_object(obj)
    assert any(e.startswith("ClusterQueue/training: spec.queueingStrategy: 'FIFO' is not one of") for e in errors)
    assert "ClusterQueue/training: spec.resourceGroups[0].flavors[0].resources[0]: 'nominalQuota' is a required property" in errors
    assert len(errors) == 2


def test_unknown_field_deep_in_jobset_pod_template() -> None:
    obj = jobset()
    pod = obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"][0]["resources"]["limit"] = {"cpu": 1}
    pod["foo"] = True
    assert sorted(validate_object(obj)) == [
        "JobSet/llama: spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limit: unknown field",
        "JobSet/llama: spec.replicatedJobs[0].template.spec.template.spec.foo: unknown field",
    ]


def test_int_or_string_quantities() -> None:
    obj = jobset()
    limits = obj["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    limits.update({"nvidia.com/gpu": "8", "cpu": 200})
    assert validate_object(obj) == []
    limits["cpu"] = 0.5  # a float is neither int nor string (built-in Quantity would accept it)
    assert validate_object(obj) == [
        ("JobSet/llama: spec.replicatedJobs[0].template.spec.template.spec.containers[0].resources.limits.cpu: 0.5 is not of type 'integer', 'string'")
    ]
    limits["cpu"] = "lots"  # strings must still match the Quantity pattern
    assert len(validate_object(obj)) == 1


def test_custom_resource_metadata_is_checked_as_object_meta() -> None:
    obj = local_queue()
    obj["metadata"]["lables"] = {"a": "b"}
    obj["metadata"]["annotations"] = {"n": 1}
    assert sorted(validate_object(obj)) == [
        "LocalQueue/training: metadata.annotations.n: 1 is not of type 'string', 'null'",
        "LocalQueue/training: metadata.lables: unknown field",
    ]


def test_cluster_scoped_object_with_namespace_fails() -> None:
    obj = cluster_queue()
    obj["metadata"]["namespace"] = "team-a"
    assert validate_object(obj) == ["ClusterQueue/training: metadata.namespace: ClusterQueue is cluster-scoped and takes no namespace"]
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a", "namespace": "b"}}
    assert validate_object(namespace) == ["Namespace/a: metadata.namespace: Namespace is cluster-scoped and takes no namespace"]


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("apps/v1", "Deploymnet"),
        ("example.com/v1", "Widget"),
        ("networking.gke.io/v1", "Ingress"),  # a built-in kind name under a CRD group
        ("kueue.x-k8s.io/v1alpha1", "ClusterQueue"),  # a version the CRD does not serve
    ],
)
def test_unknown_api_version_or_kind_fails(api_version: str, kind: str) -> None:
    errors = validate_object({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}})
    assert len(errors) == 1 and errors[0].startswith(f"{kind}/x: (root): ")


def test_every_bundled_crd_is_found() -> None:
    kinds = ["ClusterQueue", "LocalQueue", "ResourceFlavor", "Topology", "WorkloadPriorityClass"]
    pairs = [(KUEUE, k) for k in kinds] + [(JOBSET, "JobSet"), (GKE_NETWORKING, "Network"), (GKE_NETWORKING, "GKENetworkParamSet")]
    pairs.append((catalog.COMPUTE_DOMAIN_API, "ComputeDomain"))
    for api_version, kind in pairs:
        crd = crd_for(api_version, kind)
        assert crd is not None and crd["spec"]["names"]["kind"] == kind
    assert crd_for("apps/v1", "Deployment") is None


def test_crd_schema_extensions_none_of_the_bundled_crds_use() -> None:
    schema = _strict(
        {
            "type": "object",
            "properties": {
                "free": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {"fixed": {"type": "object", "properties": {"a": {"type": "string"}}}},
                },
                "embedded": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {"spec": {"type": "object", "properties": {}}}},
                "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "either": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                    "oneOf": [{"required": ["a"]}, {"properties": {"b": {"minLength": 1}}, "required": ["b"]}],
                },
            },
        }
    )
    validator = Draft202012Validator(schema, registry=_registry())
    valid = {
        "free": {"anything": [1], "fixed": {"a": "x"}},
        "embedded": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "spec": {}},
        "port": "http",
        "either": {"b": "y"},
    }
    assert list(validator.iter_errors(valid)) == []
    invalid = {
        "free": {"fixed": {"z": 1}},  # preserve-unknown-fields does not reach declared children
        "embedded": {"metadata": {"nam": "c"}},  # embedded metadata is ObjectMeta
        "port": 1.5,
        "extra": 1,
    }
    assert sorted(".".join(map(str, e.absolute_path)) for e in validator.iter_errors(invalid)) == [
        "",
        "embedded.metadata",
        "free.fixed",
        "port",
    ]
