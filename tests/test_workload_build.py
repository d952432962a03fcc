"""`workloads.build` on a stand-in platform: the training job, the supervisor and TensorBoard
each stack renders, every object schema-valid."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
import pytest

from helpers import of_type, platform_config, raw_config, render_with, workload_of
from trainstack import workloads
from trainstack.app.deploy.stack_file import JobContext, load
from trainstack.app.deploy.stacks import stack_names
from trainstack.app.plan.recorder import Registration
from trainstack.app.schemas.validate import validate_object
from trainstack.components.node_pools import gpu_pool_selector, gpu_tolerations
from trainstack.core.catalog import nic_networks
from trainstack.core.errors import ArgsError, ConfigError
from trainstack.infra.platform import KubernetesPlatform, Platform
from trainstack.workloads import supervisor
from trainstack.workloads.tensorboard import TensorBoard, TensorBoardArgs

STACKS = ["a3ultra-405b", "a3high-nemo-gpt5b", "a3mega-gpt3-175b", "a3high-litgpt", "a2-gpt2-deepspeed"]
JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
JOB = "kubernetes:batch/v1:Job"


class Ready(pulumi.CustomResource):
    """Stands in for what the platform's layers build (controllers, queue, claim, pools)."""

    def __init__(self, name: str) -> None:
        super().__init__("test:platform:Ready", name, {})


def stand_in_platform(ctx: JobContext) -> Platform:
    config = platform_config(ctx.stack_file)
    machine = config.gpu_pool.machine
    ready, pools = Ready("ready"), Ready("pools")
    kube = KubernetesPlatform(
        provider=k8s.Provider("k8s", kubeconfig="{}"),
        namespace="training",
        service_account="workload-sa",
        local_queue=config.local_queue,
        claim_name="shared-storage",
        nics=nic_networks(machine, config.network.gpu_nic_cidr),
        ready=[ready],
    )
    return Platform(
        project=config.project,
        zone=config.gpu_zones[0],
        machine=machine,
        gpu_pool=config.gpu_pool.name,
        gpu_nodes=config.gpu_pool.max_nodes,
        cpu_pool=config.cpu_pool.name,
        node_selector=gpu_pool_selector(config.gpu_pool.name, machine),
        tolerations=gpu_tolerations(machine),
        storage_kind=config.storage.kind,
        mount_path=config.storage.mount_path,
        kubernetes=kube,
        image=pulumi.Output.from_input("us-central1-docker.pkg.dev/p/trainstack/image@sha256:0123"),
        node_pools=[pools],
    )


class Built:
    def __init__(self, stack: str, raw: dict[str, Any] | None = None) -> None:
        self.outputs: dict[str, Any] = {}
        self.rendered = render_with(lambda ctx: self.outputs.update(workloads.build(workload_of(ctx), stand_in_platform(ctx))), stack=stack, raw=raw)

    def objects(self) -> list[Registration]:
        return [r for r in self.rendered.registrations if r.type.startswith("kubernetes:") and r.custom and "providers" not in r.type]

    def one(self, type_token: str, name: str | None = None) -> dict[str, Any]:
        found = [r for r in of_type(self.rendered, type_token) if name is None or r.inputs["metadata"]["name"] == name]
        assert len(found) == 1, [r.name for r in found]
        return found[0].inputs

    def names(self, type_token: str) -> list[str]:
        return sorted(r.inputs["metadata"]["name"] for r in of_type(self.rendered, type_token))

    def pod(self) -> dict[str, Any]:
        jobsets = of_type(self.rendered, JOBSET)
        if jobsets:
            return jobsets[0].inputs["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
        return of_type(self.rendered, JOB)[0].inputs["spec"]["template"]

    def container(self) -> dict[str, Any]:
        (workload,) = self.pod()["spec"]["containers"]
        return workload

    def env(self) -> dict[str, str]:
        return {e["name"]: e["value"] for e in self.container()["env"]}

    def mounts(self) -> dict[str, str]:
        return {m["mountPath"]: m["name"] for m in self.container()["volumeMounts"]}

    def volumes(self) -> dict[str, dict[str, Any]]:
        return {v["name"]: v for v in self.pod()["spec"]["volumes"]}

    def init_containers(self) -> dict[str, dict[str, Any]]:
        return {c["name"]: c for c in self.pod()["spec"].get("initContainers", [])}


@cache
def built(stack: str) -> Built:
    return Built(stack)


def test_the_recipe_stacks_are_the_five() -> None:
    assert set(STACKS) <= set(stack_names())


@pytest.mark.parametrize("stack", STACKS)
def test_every_kubernetes_object_is_schema_valid(stack: str) -> None:
    objects = built(stack).objects()
    assert objects
    problems = [p for r in objects for p in validate_object(r.inputs)]
    assert not problems, "\n".join(problems)


# --- the JobSet -----------------------------------------------------------------------------------


def test_jobset_is_submitted_to_the_local_queue_leaving_suspend_to_kueue() -> None:
    jobset = built("a3ultra-405b").one(JOBSET)
    assert jobset["metadata"]["name"] == "llama31-405b"
    assert jobset["metadata"]["namespace"] == "training"
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "a3-ultra"
    assert jobset["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    spec = jobset["spec"]
    # Kueue's webhook suspends a job that names a queue at creation
    # (kubernetes-sigs/kueue v0.19.2 pkg/controller/jobframework/defaults.go ApplyDefaultForSuspend).
    assert "suspend" not in spec
    assert spec["network"] == {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
    assert spec["failurePolicy"] == {"maxRestarts": 20}
    assert spec["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["workload"]}


def test_jobset_runs_one_pod_per_node_with_all_its_gpus() -> None:
    b = built("a3ultra-405b")
    (replicated,) = b.one(JOBSET)["spec"]["replicatedJobs"]
    assert (replicated["name"], replicated["replicas"]) == ("workload", 1)
    job = replicated["template"]["spec"]
    assert (job["parallelism"], job["completions"], job["completionMode"], job["backoffLimit"]) == (54, 54, "Indexed", 0)
    assert b.pod()["spec"]["restartPolicy"] == "Never"
    assert b.container()["resources"] == {"limits": {"nvidia.com/gpu": 8}}
    assert b.pod()["spec"]["nodeSelector"] == {
        "cloud.google.com/gke-accelerator": "nvidia-h200-141gb",
        "cloud.google.com/gke-nodepool": "a3-ultra",
    }
    assert b.pod()["spec"]["serviceAccountName"] == "workload-sa"
    assert b.container()["image"] == "us-central1-docker.pkg.dev/p/trainstack/image@sha256:0123"


def test_rendezvous_uses_the_jobsets_own_pod_names() -> None:
    env = built("a3ultra-405b").env()
    assert env["MASTER_ADDR"] == "llama31-405b-workload-0-0.llama31-405b"
    assert (env["MASTER_PORT"], env["NNODES"], env["GPUS_PER_NODE"], env["WORLD_SIZE"]) == ("6002", "54", "8", "432")
    assert env["JOBSET_NAME"] == "llama31-405b"
    assert env["JOB_IDENTIFIER"] == "llama31-405b-1"  # <name>-<runId>: the run's logs and checkpoints
    assert Built("a3ultra-405b", raw_config(trainstack_workload={"runId": None})).env()["JOB_IDENTIFIER"] == "llama31-405b"


def test_pods_tolerate_the_gpu_taint_and_termination_notices() -> None:
    assert built("a3ultra-405b").pod()["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
        {"key": "cloud.google.com/impending-node-termination", "operator": "Exists"},
    ]


def test_pods_mount_shared_memory_storage_host_libraries_and_local_ssd() -> None:
    b = built("a3ultra-405b")
    volumes = b.volumes()
    assert volumes["dshm"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "500Gi"}
    assert volumes["shared"]["persistentVolumeClaim"] == {"claimName": "shared-storage"}
    assert volumes["nvidia-libs"]["hostPath"] == {"path": "/home/kubernetes/bin/nvidia"}
    assert volumes["local-ssd"]["hostPath"] == {"path": "/mnt/stateful_partition/kube-ephemeral-ssd"}
    assert {"/dev/shm": "dshm", "/job-logs": "shared", "/usr/local/nvidia": "nvidia-libs", "/ssd": "local-ssd"}.items() <= b.mounts().items()


def test_machines_without_local_ssd_get_no_local_ssd_volume() -> None:
    assert "local-ssd" not in built("a2-gpt2-deepspeed").volumes()


def test_kueue_topology_annotation_follows_the_config() -> None:
    annotations = built("a3ultra-405b").pod()["metadata"]["annotations"]
    # recipe 000 (gpu-recipes values.yaml tasSettings): hosts as close as possible
    assert annotations["kueue.x-k8s.io/podset-preferred-topology"] == "kubernetes.io/hostname"
    required = Built("a3ultra-405b", raw_config(trainstack_workload={"topology": {"mode": "required", "level": "cloud.google.com/gce-topology-subblock"}}))
    annotations = required.pod()["metadata"]["annotations"]
    assert annotations["kueue.x-k8s.io/podset-required-topology"] == "cloud.google.com/gce-topology-subblock"
    assert "kueue.x-k8s.io/podset-preferred-topology" not in annotations
    assert not any(k.startswith("kueue.x-k8s.io/podset-") for k in built("a2-gpt2-deepspeed").pod()["metadata"]["annotations"])


@pytest.mark.parametrize(("stack", "gcs"), [(s, s in ("a3ultra-405b", "a3mega-gpt3-175b", "a3high-litgpt")) for s in STACKS])
def test_gcsfuse_sidecar_is_requested_only_for_bucket_storage(stack: str, gcs: bool) -> None:
    annotations = built(stack).pod()["metadata"]["annotations"]
    gcsfuse = {k: v for k, v in annotations.items() if k.startswith("gke-gcsfuse/")}
    expected = {"gke-gcsfuse/volumes": "true", "gke-gcsfuse/cpu-limit": "0", "gke-gcsfuse/memory-limit": "0", "gke-gcsfuse/ephemeral-storage-limit": "0"}
    assert gcsfuse == (expected if gcs else {})


@pytest.mark.parametrize(
    ("stack", "inits", "daemon"),
    [
        ("a3ultra-405b", ["nccl-plugin-installer"], None),
        ("a3high-nemo-gpt5b", ["dataset-download", "tcpd-daemon"], "tcpd-daemon"),
        ("a3mega-gpt3-175b", ["nccl-plugin-installer", "tcpxo-daemon"], "tcpxo-daemon"),
        ("a3high-litgpt", ["dataset-download", "tcpd-daemon"], "tcpd-daemon"),
        ("a2-gpt2-deepspeed", [], None),
    ],
)
def test_each_stack_gets_its_machines_gpudirect_pieces_and_no_others(stack: str, inits: list[str], daemon: str | None) -> None:
    b = built(stack)
    # The preflight's own init containers follow these (tests/test_preflight_gate.py).
    assert [name for name in b.init_containers() if not name.startswith("preflight")] == inits
    sidecars = [name for name, c in b.init_containers().items() if c.get("restartPolicy") == "Always"]
    assert sidecars == ([daemon] if daemon else [])
    annotations = b.pod()["metadata"]["annotations"]
    # Multi-NIC pod networking for TCPX/TCPXO; the A3 Ultra job runs on the host network instead.
    assert ("networking.gke.io/interfaces" in annotations) == (stack not in ("a2-gpt2-deepspeed", "a3ultra-405b"))
    assert b.pod()["spec"].get("hostNetwork", False) == (stack == "a3ultra-405b")
    assert ("devices.gke.io/container.tcpxo-daemon" in annotations) == (stack == "a3mega-gpt3-175b")
    env = b.env()
    assert ("NCCL_INIT_SCRIPT" in env) == (stack == "a3ultra-405b")
    assert any(k.startswith("NCCL_FASTRAK") for k in env) == (stack == "a3mega-gpt3-175b")
    assert any(k.startswith("NCCL_GPUDIRECTTCPX") for k in env) == (stack in ("a3high-nemo-gpt5b", "a3high-litgpt"))


def test_the_dataset_is_copied_to_local_disk_before_the_workload_starts() -> None:
    b = built("a3high-litgpt")
    download = b.init_containers()["dataset-download"]
    assert download["command"] == ["gcloud", "storage", "rsync", "--recursive", "gs://litgpt-public-bucket/openwebtext_dataset", "/data"]
    assert b.volumes()["dataset"] == {"name": "dataset", "emptyDir": {}}
    assert b.mounts()["/data"] == "dataset"


def test_the_workload_runs_the_launcher_after_the_plugin_prologue() -> None:
    container = built("a3ultra-405b").container()
    assert container["command"][:2] == ["bash", "-c"]
    script = container["command"][2]
    assert 'source "${NCCL_INIT_SCRIPT}"' in script and script.endswith('exec "$@"\n')
    assert container["args"][:2] == ["python3", "resiliency/launcher.py"]


def test_user_environment_comes_last_and_wins() -> None:
    b = Built("a3high-litgpt", raw_config("a3high-litgpt", trainstack_workload={"env": {"NCCL_SOCKET_IFNAME": "eth9", "EXTRA": "1"}}))
    names = [e["name"] for e in b.container()["env"]]
    assert names.count("NCCL_SOCKET_IFNAME") == 1
    assert b.env()["NCCL_SOCKET_IFNAME"] == "eth9"
    assert names[-1] == "EXTRA"


def test_launcher_files_are_config_maps_mounted_read_only() -> None:
    b = built("a2-gpt2-deepspeed")
    config_map = b.one("kubernetes:core/v1:ConfigMap", "gpt2-micro-deepspeed")
    assert sorted(config_map["data"]) == ["ds_config.json", "hostfile"]
    assert b.volumes()["files-deepspeed"]["configMap"] == {"name": "gpt2-micro-deepspeed"}
    assert {"name": "files-deepspeed", "mountPath": "/workload/configs", "readOnly": True} in b.container()["volumeMounts"]


def test_a_changed_launch_config_replaces_the_job() -> None:
    before = built("a3high-nemo-gpt5b").pod()["metadata"]["annotations"]["trainstack/config-hash"]
    after = Built("a3high-nemo-gpt5b", raw_config("a3high-nemo-gpt5b", trainstack_workload={"steps": 600})).pod()["metadata"]["annotations"][
        "trainstack/config-hash"
    ]
    assert before != after  # the files changed under an unchanged command: the hash replaces the job
    (registration,) = of_type(built("a3ultra-405b").rendered, JOBSET)
    assert registration.options == {"deleteBeforeReplace": True, "replaceOnChanges": ["spec"]}


def test_the_job_waits_for_the_platform_and_its_files() -> None:
    b = built("a3ultra-405b")
    (registration,) = of_type(b.rendered, JOBSET)
    ready = {r.urn for r in b.rendered.registrations if r.type == "test:platform:Ready"}
    files = {r.urn for r in of_type(b.rendered, "kubernetes:core/v1:ConfigMap") if r.name.startswith("training-job")}
    assert ready | files <= set(registration.dependencies)


def test_every_kubernetes_object_uses_the_platforms_provider() -> None:
    b = built("a3ultra-405b")
    assert {r.provider for r in b.objects()} == {"urn:pulumi:a3ultra-405b::trainstack::pulumi:providers:kubernetes::k8s"}


def test_components_are_typed_and_own_their_children() -> None:
    b = built("a3ultra-405b")
    components = {r.type: r.urn for r in b.rendered.registrations if r.type.startswith("trainstack:workload:")}
    assert set(components) == {"trainstack:workload:TrainingJob", "trainstack:workload:ResiliencySupervisor"}
    assert {r.parent for r in b.objects()} <= set(components.values())


# --- the Indexed Job variant (recipe 002) ---------------------------------------------------------


def test_an_indexed_job_gets_a_headless_service_for_its_pod_names() -> None:
    b = built("a3mega-gpt3-175b")
    assert not of_type(b.rendered, JOBSET)
    job = b.one(JOB)
    assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "a3-mega"
    spec = job["spec"]
    assert "suspend" not in spec
    assert (spec["parallelism"], spec["completions"], spec["completionMode"]) == (32, 32, "Indexed")
    assert b.pod()["spec"]["subdomain"] == "gpt3-175b"
    service = b.one("kubernetes:core/v1:Service", "gpt3-175b")
    assert service["spec"] == {"clusterIP": "None", "selector": {"batch.kubernetes.io/job-name": "gpt3-175b"}, "publishNotReadyAddresses": True}
    assert b.env()["MASTER_ADDR"] == "gpt3-175b-0.gpt3-175b"
    assert "JOBSET_NAME" not in b.env()
    assert b.outputs["watchJob"] == "kubectl get job gpt3-175b -n training"


# --- the resiliency supervisor (recipe 000) -------------------------------------------------------


def test_supervisor_may_do_only_what_its_source_calls() -> None:
    """Every verb granted, on the resource it names, with the library line that needs it; pods
    and JobSets in the job's namespace only, nodes cluster-wide, and nothing may create a node."""
    b = built("a3ultra-405b")
    granted = []
    for kind in ("ClusterRole", "Role"):
        role = b.one(f"kubernetes:rbac.authorization.k8s.io/v1:{kind}")
        granted += [(kind, res, verb) for rule in role["rules"] for res in rule["resources"] for verb in rule["verbs"]]
    lines = {(kind, res, verb): supervisor.API_CALLS[res, verb] for kind, res, verb in granted}
    assert sorted(lines) == sorted(
        [("ClusterRole", "nodes", v) for v in ("get", "list", "patch", "watch")]
        + [("Role", "pods", v) for v in ("delete", "list", "watch")]
        + [("Role", "jobsets", v) for v in ("create", "delete", "get", "list")]
    )
    assert {(res, verb) for _, res, verb in granted} == set(supervisor.API_CALLS)
    for source in lines.values():
        assert source and all(line.startswith(supervisor.SUPERVISOR_SOURCE + ":") for line in source)
    binding = b.one("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")
    assert binding["roleRef"]["name"] == "training-llama31-405b-supervisor"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "llama31-405b-supervisor", "namespace": "training"}]
    role_binding = b.one("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding")
    assert role_binding["metadata"]["namespace"] == "training"
    assert role_binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "llama31-405b-supervisor"}
    assert role_binding["subjects"] == binding["subjects"]
    assert b.one("kubernetes:core/v1:ServiceAccount")["automountServiceAccountToken"] is False


def test_only_the_supervisor_processes_that_call_the_api_mount_its_token() -> None:
    b = built("a3ultra-405b")
    mounts = {
        s: b.one("kubernetes:apps/v1:Deployment", f"llama31-405b-supervisor-{s}")["spec"]["template"]["spec"]["automountServiceAccountToken"]
        for s in supervisor.SERVICES
    }
    assert mounts == {"actuator": False, "sensor": False, "controller": True}
    monitor = b.one("kubernetes:apps/v1:DaemonSet")["spec"]["template"]["spec"]
    assert monitor["automountServiceAccountToken"] is True
    assert monitor["containers"][0]["securityContext"] == {"privileged": True}


@pytest.mark.parametrize(("service", "port"), [("actuator", 60080), ("sensor", 60081), ("controller", 60082)])
def test_supervisor_deployments_run_on_the_cpu_pool_behind_services(service: str, port: int) -> None:
    b = built("a3ultra-405b")
    deployment = b.one("kubernetes:apps/v1:Deployment", f"llama31-405b-supervisor-{service}")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "supervisor-cpu-pool"}
    (container,) = pod["containers"]
    assert container["command"] == ["python3", f"resiliency/supervisor/{service}.py"]
    assert container["ports"] == [{"name": service, "containerPort": port}]
    assert container["image"] == "us-central1-docker.pkg.dev/deeplearning-images/reproducibility/pytorch-gpu-goodput:nemo24.12.01-A3Mega-20250605"
    svc = b.one("kubernetes:core/v1:Service", f"llama31-405b-supervisor-{service}")
    assert svc["spec"]["ports"] == [{"name": service, "port": port, "targetPort": port, "protocol": "TCP"}]
    assert svc["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]


def test_host_monitor_runs_privileged_on_every_gpu_node() -> None:
    daemonset = built("a3ultra-405b").one("kubernetes:apps/v1:DaemonSet")
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-gpu": "true"}
    assert (pod["hostNetwork"], pod["hostPID"], pod["dnsPolicy"]) == (True, True, "ClusterFirstWithHostNet")
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]
    (container,) = pod["containers"]
    assert container["securityContext"]["privileged"] is True
    assert container["ports"][0]["hostPort"] == container["ports"][0]["containerPort"] == 60010
    # The era of the image (gpu-recipes 5014bf9): the host daemon takes no arguments.
    assert container["command"] == ["python3", "resiliency/supervisor/host_daemon.py"]
    assert container["envFrom"] == [{"configMapRef": {"name": "llama31-405b-supervisor-config"}}]  # its settings


def test_supervisor_config_renders_every_key_with_a_value() -> None:
    data = built("a3ultra-405b").one("kubernetes:core/v1:ConfigMap", "llama31-405b-supervisor-config")["data"]
    chart_keys = {
        "SENSOR_ADDRESS",
        "ACTUATOR_ADDRESS",
        "CONTROLLER_ADDRESS",
        "HOST_DAEMON_PORT",
        "HEARTBEAT_POLLING_PERIOD_S",
        "HEARTBEAT_TIMEOUT_S",
        "WORKERS_PER_HOST",
        "JOB_NAMESPACE",
        "NUM_NODES_PER_DP",
        "NUM_DP_REPLICAS",
        "MAX_IN_JOB_RESTARTS",
        "MAX_WORKLOAD_RESTARTS",
        "ENABLE_WORKLOAD_SCALING",
        "PROJECT",
        "POD_TERMINATION_THRESHOLD_S",
        "JOBSET_DOWNTIME_THRESHOLD_S",
        "REPLICATED_JOB_NAME",
        "WORKLOAD_CONTAINER_NAME",
        "ENABLE_FAULT_INJECTION",
        "FAULT_INJECTION_PERIOD_S",
        "GLOG_logtostderr",
        "GLOG_v",
        "WORKLOAD_NAMESPACE",
    }
    assert chart_keys <= set(data)
    assert all(value for value in data.values()), [k for k, v in data.items() if not v]
    assert data["WORKLOAD_NAME"] == "llama31-405b"
    assert data["SENSOR_ADDRESS"] == "llama31-405b-supervisor-sensor:60081"
    assert (data["HEARTBEAT_POLLING_PERIOD_S"], data["HEARTBEAT_TIMEOUT_S"]) == ("15", "30")
    assert (data["WORKERS_PER_HOST"], data["NUM_NODES_PER_DP"], data["NUM_DP_REPLICAS"]) == ("8", "18", "3")
    assert data["MAX_IN_JOB_RESTARTS"] == "0"
    assert data["PROJECT"] == "my-training-project"


@pytest.mark.parametrize("stack", STACKS[1:])
def test_only_the_resiliency_recipe_has_a_supervisor(stack: str) -> None:
    assert not [r for r in built(stack).rendered.registrations if r.type == "trainstack:workload:ResiliencySupervisor"]
    assert not of_type(built(stack).rendered, "kubernetes:apps/v1:DaemonSet")


# --- TensorBoard (recipe 001) ---------------------------------------------------------------------


def test_tensorboard_serves_the_runs_log_directory_inside_the_cluster() -> None:
    b = built("a3high-nemo-gpt5b")
    deployment = b.one("kubernetes:apps/v1:Deployment", "nemo-gpt5b-tensorboard")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == "tensorflow/tensorflow:2.17.0"
    assert "--logdir=/nfs/nemo-experiments" in container["command"]
    assert container["volumeMounts"] == [{"name": "shared", "mountPath": "/nfs", "readOnly": True}]
    assert pod["volumes"] == [{"name": "shared", "persistentVolumeClaim": {"claimName": "shared-storage", "readOnly": True}}]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "e2-pool"}
    service = b.one("kubernetes:core/v1:Service", "nemo-gpt5b-tensorboard")
    assert service["spec"]["type"] == "ClusterIP"
    assert b.outputs["tensorboard"] == "kubectl port-forward svc/nemo-gpt5b-tensorboard 6006:6006 -n training"


def test_tensorboard_only_where_asked() -> None:
    asked = {s for s in STACKS if any(r.type == "trainstack:workload:TensorBoard" for r in built(s).rendered.registrations)}
    assert asked == {"a3high-nemo-gpt5b"}
    assert {s for s in STACKS if "tensorboard" in built(s).outputs} == asked


def test_tensorboard_refuses_a_log_directory_off_the_shared_storage() -> None:
    with pytest.raises(ArgsError, match="TensorBoard 'tb' has 1 Args problem:\n  - log_dir = '/tmp/logs': is not on the shared storage at /nfs"):
        TensorBoard("tb", TensorBoardArgs(name="tb", namespace="ns", claim_name="c", mount_path="/nfs", log_dir="/tmp/logs", node_pool="p"))


# --- outputs --------------------------------------------------------------------------------------


def test_outputs_tell_the_user_how_to_watch_the_job() -> None:
    assert built("a3ultra-405b").outputs == {
        "jobName": "llama31-405b",
        "watchJob": "kubectl get jobset llama31-405b -n training",
        "followLogs": "kubectl logs -f -n training -l jobset.sigs.k8s.io/jobset-name=llama31-405b,batch.kubernetes.io/job-completion-index=0 -c workload",
        "logDir": "/job-logs/nemo-experiments",
    }


# --- day 2: refresh -----------------------------------------------------------------------------


def pruned(live: Any, inputs: Any) -> Any:
    """The live object cut to the shape of the inputs, as pulumi-kubernetes v4 compares a
    refreshed object with the program's inputs (provider.go Diff: pruneLiveState): keys the
    inputs do not set are not compared."""
    if isinstance(inputs, dict) and isinstance(live, dict):
        return {k: pruned(live[k], v) for k, v in inputs.items() if k in live}
    if isinstance(inputs, list) and isinstance(live, list) and len(inputs) == len(live):
        return [pruned(a, b) for a, b in zip(live, inputs, strict=True)]
    return live


def admitted(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as `pulumi refresh` reads it back after Kueue admitted it and it ran."""
    live = json.loads(json.dumps(obj))
    live["spec"]["suspend"] = False  # Kueue's admission
    live["metadata"].setdefault("labels", {})["kueue.x-k8s.io/priority"] = "0"
    live["metadata"]["uid"] = "0b5c5a8e-1111-2222-3333-444455556666"
    live["status"] = {"conditions": [{"type": "StartupPolicyCompleted", "status": "True"}], "restarts": 0}
    return live


@pytest.mark.parametrize(("stack", "kind"), [("a3ultra-405b", JOBSET), ("a3mega-gpt3-175b", JOB)])
def test_refresh_after_admission_replaces_no_running_job(stack: str, kind: str) -> None:
    b = built(stack)
    (job,) = of_type(b.rendered, kind)
    inputs = job.inputs
    assert job.options["replaceOnChanges"] == ["spec"]
    live = pruned(admitted(inputs), inputs)
    assert live["spec"] == inputs["spec"], "a refreshed, admitted job would be replaced"
    # The control: had the program set suspend, the refreshed state would differ under `spec`.
    with_suspend = {**inputs, "spec": {**inputs["spec"], "suspend": True}}
    assert pruned(admitted(with_suspend), with_suspend)["spec"] != with_suspend["spec"]


def test_a_workload_priority_class_labels_the_job_for_kueue() -> None:
    jobset = Built("a3ultra-405b", raw_config(trainstack_workload={"priorityClass": "training-high"})).one(JOBSET)
    assert jobset["metadata"]["labels"]["kueue.x-k8s.io/priority-class"] == "training-high"
    assert "kueue.x-k8s.io/priority-class" not in built("a3ultra-405b").one(JOBSET)["metadata"]["labels"]


def test_a_priority_class_the_platform_lacks_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"trainstack:workload.priorityClass = 'urgent': is not a priority class of the platform"):
        load("a3ultra-405b", raw_config(trainstack_workload={"priorityClass": "urgent"}))
