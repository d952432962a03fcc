"""Node-level installers for GPU nodes, as DaemonSets in kube-system: the NCCL net plugin of
the machine's GPUDirect stack (and, for TCPXO, the NRI device injector), and the NVIDIA driver
for pools whose driver GKE does not install.

Facts (host paths, install commands, node selection, privileges) follow the manifests of
GoogleCloudPlatform/container-engine-accelerators: gpudirect-tcpx/nccl-tcpx-installer.yaml,
gpudirect-tcpxo/nccl-tcpxo-installer.yaml, nri_device_injector/nri-device-injector.yaml,
gpudirect-rdma/nccl-rdma-installer.yaml and nvidia-driver-installer/cos/daemonset-preloaded.yaml,
at the revisions that ship the catalog's image versions. Object names are the upstream ones, so
GKE's troubleshooting steps (`kubectl -n kube-system get ds nccl-tcpxo-installer`) apply as is.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes.core import v1 as core

from trainstack.components.args import Args, Problem
from trainstack.components.k8s_provider import ACCELERATOR_LABEL, metadata
from trainstack.components.options import ChildArgs, Children
from trainstack.components.pod_security import POD_SECURITY, container_security
from trainstack.core import catalog, rules

# Installers run on the host's network and PID namespaces, privileged, before anything else on
# the node, and tolerate every taint (GPU nodes are tainted).
_PRIORITY_CLASS = "system-node-critical"
_INSTALL_CPU = "150m"
_HOME_BIN = "/home/kubernetes/bin"  # COS: where GKE keeps the NVIDIA libraries and plugins


@dataclass(frozen=True)
class _NodePod:
    """What an installer DaemonSet runs: init containers (the installation), long-running
    containers (a pause container, or the service itself) and host volumes."""

    init_containers: Sequence[core.ContainerArgs]
    containers: Sequence[core.ContainerArgs]
    volumes: Sequence[core.VolumeArgs] = field(default_factory=list)


def _host_path(name: str, path: str, kind: str | None = None) -> core.VolumeArgs:
    return core.VolumeArgs(name=name, host_path=core.HostPathVolumeSourceArgs(path=path, type=kind))


def _mount(name: str, path: str) -> core.VolumeMountArgs:
    return core.VolumeMountArgs(name=name, mount_path=path)


def _privileged(name: str, image: str, command: Sequence[str], mounts: Sequence[core.VolumeMountArgs] = (), **extra: object) -> core.ContainerArgs:
    return core.ContainerArgs(
        name=name,
        image=image,
        command=list(command) or None,
        resources=core.ResourceRequirementsArgs(requests={"cpu": _INSTALL_CPU}),
        security_context=core.SecurityContextArgs(privileged=True),
        volume_mounts=list(mounts) or None,
        **extra,
    )


def _pause() -> core.ContainerArgs:
    """Keeps the pod (and so the DaemonSet's readiness) up once the init containers are done."""
    return core.ContainerArgs(name="pause", image=catalog.image("pause").ref, security_context=container_security())


def _plugin_install_script(stack: str) -> str:
    """Install the NCCL plugin (and its NCCL) from the plugin image into the host's
    /home/kubernetes/bin/nvidia/lib64, where GPU containers find the NVIDIA libraries."""
    return "\n".join(
        [
            "set -ex",
            "chmod 755 /scripts/container_entry.sh",
            "/scripts/container_entry.sh install --install-nccl",
            "mkdir -p /usr/local/nvidia/lib64",
            f"cp -r /var/lib/{stack}/lib64/. /usr/local/nvidia/lib64",
        ]
    )


def _plugin_installer(stack: str, images: catalog.GpuDirectImages) -> core.ContainerArgs:
    return _privileged(
        f"nccl-{stack}-installer",
        images.nccl_plugin.ref,
        ["/bin/sh", "-c", _plugin_install_script(stack)],
        [_mount("var-lib", "/var/lib"), _mount("library-dir-host", "/usr/local")],
    )


_PLUGIN_VOLUMES = [_host_path("var-lib", "/var/lib"), _host_path("library-dir-host", _HOME_BIN)]

# TCPXO host setup, run in the host's namespaces: accept the RxDM's TCP traffic, load the
# import-helper module, and expose each GPU NIC's aperture (PCI 1ae0:0084) under
# /dev/aperture_devices for the workload's NCCL plugin. Idempotent: init containers rerun.
_TCPXO_HOST_SETUP = "\n".join(
    [
        "iptables -C INPUT -p tcp -m tcp -j ACCEPT 2>/dev/null || iptables -I INPUT -p tcp -m tcp -j ACCEPT",
        "modprobe import-helper",
        "mkdir -p /dev/aperture_devices",
        "for bdf in $(lspci -nn -D | awk '/1ae0:0084/ {print $1}'); do",
        '  target="/dev/aperture_devices/$bdf"',
        '  mkdir -p "$target"',
        '  umount -R "$target" 2>/dev/null || true',
        '  mount --bind "$(readlink -f "/sys/bus/pci/devices/$bdf")" "$target"',
        "done",
        "chmod -R a+r /dev/aperture_devices",
        "chmod a+rw /dev/aperture_devices/*/resource* 2>/dev/null || true",
    ]
)


def _tcpx_pods(images: catalog.GpuDirectImages) -> dict[str, _NodePod]:
    return {"nccl-tcpx-installer": _NodePod([_plugin_installer("tcpx", images)], [_pause()], _PLUGIN_VOLUMES)}


def _tcpxo_pods(images: catalog.GpuDirectImages) -> dict[str, _NodePod]:
    host_setup = _privileged("node-setup", catalog.image("node-setup").ref, ["nsenter", "--all", "--target=1", "--", "sh", "-c", _TCPXO_HOST_SETUP])
    return {"nccl-tcpxo-installer": _NodePod([host_setup, _plugin_installer("tcpxo", images)], [_pause()], _PLUGIN_VOLUMES)}


def _device_injector_pod(image: catalog.Image) -> _NodePod:
    """The NRI device injector: adds the devices a pod's `devices.gke.io/container.<name>`
    annotation lists (an unprivileged RxDM sidecar's /dev/nvidia*, dmabuf_import_helper) to
    that container. NRI is on in containerd on the GKE versions trainstack targets."""
    injector = _privileged("device-injector", image.ref, [], [_mount("dev", "/dev"), _mount("nri", "/var/run/nri")])
    return _NodePod([], [injector], [_host_path("dev", "/dev"), _host_path("nri", "/var/run/nri")])


_POD_BUILDERS = {
    catalog.GpuDirect.TCPX: _tcpx_pods,
    catalog.GpuDirect.TCPXO: _tcpxo_pods,
}
# The stacks whose plugin is installed on the nodes. gIB (RDMA) is installed into each training
# pod by an init container, as the A3 Ultra recipes do (gpu-recipes a3ultra jobset chart,
# `network.gibVersion`): one way only, and no installer DaemonSet on the deploy's critical path.
NODE_INSTALLED = frozenset(_POD_BUILDERS)


def _node_daemonset(
    child: ChildArgs,
    name: str,
    namespace: str,
    node_requirements: Sequence[core.NodeSelectorRequirementArgs],
    node_pod: _NodePod,
) -> k8s.apps.v1.DaemonSet:
    labels = {"k8s-app": name}
    pod = core.PodSpecArgs(
        priority_class_name=_PRIORITY_CLASS,
        affinity=core.AffinityArgs(
            node_affinity=core.NodeAffinityArgs(
                required_during_scheduling_ignored_during_execution=core.NodeSelectorArgs(
                    node_selector_terms=[core.NodeSelectorTermArgs(match_expressions=list(node_requirements))]
                )
            )
        ),
        tolerations=[core.TolerationArgs(operator="Exists")],
        host_network=True,
        host_pid=True,
        automount_service_account_token=False,  # installers never call the Kubernetes API
        security_context=POD_SECURITY,
        init_containers=list(node_pod.init_containers) or None,
        containers=list(node_pod.containers),
        volumes=list(node_pod.volumes) or None,
    )
    return k8s.apps.v1.DaemonSet(
        **child,
        metadata=metadata(name, namespace, labels),
        spec=k8s.apps.v1.DaemonSetSpecArgs(
            selector=k8s.meta.v1.LabelSelectorArgs(match_labels=labels),
            update_strategy=k8s.apps.v1.DaemonSetUpdateStrategyArgs(type="RollingUpdate"),
            template=core.PodTemplateSpecArgs(metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels), spec=pod),
        ),
    )


def _on_accelerator(accelerator: str) -> core.NodeSelectorRequirementArgs:
    return core.NodeSelectorRequirementArgs(key=ACCELERATOR_LABEL, operator="In", values=[accelerator])


@dataclass(frozen=True)
class GpuDirectInstallersArgs(Args):
    """The GPU machine whose GPUDirect stack to install, on every node with its accelerator."""

    machine_type: str
    """The GPU machine type (`a3-megagpu-8g`): its catalog record gives the stack and images."""
    namespace: str = "kube-system"
    """The DaemonSets' namespace."""

    _checks = {"machine_type": rules.gpu_machine, "namespace": rules.K8S_NAME}

    @property
    def machine(self) -> catalog.Machine:
        """The machine's catalog record."""
        return catalog.machine(self.machine_type)

    def _cross(self) -> Iterator[Problem]:
        if not rules.gpu_machine(self.machine_type) and (_POD_BUILDERS.get(self.machine.gpudirect) is None or self.machine.gpudirect_images is None):
            yield Problem(
                ("machine_type",), self.machine_type, f"{self.machine_type} uses GPUDirect {self.machine.gpudirect.value!r}: there is nothing to install"
            )


class GpuDirectInstallers(pulumi.ComponentResource):
    """The node installers of a machine's GPUDirect stack: TCPX (A3 High): the TCPX NCCL
    plugin; TCPXO (A3 Mega): host setup and the TCPXO plugin; and the NRI device injector where the catalog lists one for the stack (TCPXO).
    Wait for it (the pool's nodes must exist for the DaemonSets to report ready) before
    starting a job.
    """

    daemonsets: list[k8s.apps.v1.DaemonSet]
    """The installer DaemonSets."""

    def __init__(self, name: str, args: GpuDirectInstallersArgs, opts: pulumi.ResourceOptions | None = None):
        args = GpuDirectInstallersArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:GpuDirectInstallers", name, None, opts)
        machine = args.machine
        builder = _POD_BUILDERS[machine.gpudirect]
        images = machine.gpudirect_images
        assert images is not None  # a machine without them is refused (_cross)
        pods = builder(images)
        if images.nri_device_injector is not None:
            pods["device-injector"] = _device_injector_pod(images.nri_device_injector)
        kids = Children(self, name, opts)
        self.daemonsets = [
            _node_daemonset(kids(ds_name), ds_name, args.namespace, [_on_accelerator(machine.accelerator)], pod) for ds_name, pod in pods.items()
        ]
        self.register_outputs({"daemonsets": list(pods)})


@dataclass(frozen=True)
class NvidiaDriverInstallerArgs(Args):
    """GPU nodes (by accelerator) whose NVIDIA driver GKE does not install (`gpuDriver: daemonset`)."""

    accelerator: str
    """The GKE accelerator type of the nodes (`nvidia-a100-80gb`)."""
    namespace: str = "kube-system"
    """The DaemonSet's namespace."""

    _checks = {"accelerator": rules.accelerator, "namespace": rules.K8S_NAME}


class NvidiaDriverInstaller(pulumi.ComponentResource):
    """The COS NVIDIA driver installer DaemonSet, using the installer image GKE preloads on COS
    nodes (never pulled). It skips nodes whose driver GKE manages (they carry
    `cloud.google.com/gke-gpu-driver-version`) and nodes whose driver is already loaded.
    MIG partitioning (upstream's `partition-gpus` step) is not used by training pools.
    """

    daemonset: k8s.apps.v1.DaemonSet
    """The installer DaemonSet."""

    def __init__(self, name: str, args: NvidiaDriverInstallerArgs, opts: pulumi.ResourceOptions | None = None):
        args = NvidiaDriverInstallerArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:NvidiaDriverInstaller", name, None, opts)
        nvidia = f"{_HOME_BIN}/nvidia"
        env = {
            "NVIDIA_INSTALL_DIR_HOST": nvidia,
            "NVIDIA_INSTALL_DIR_CONTAINER": "/usr/local/nvidia",
            "VULKAN_ICD_DIR_HOST": f"{nvidia}/vulkan/icd.d",
            "VULKAN_ICD_DIR_CONTAINER": "/etc/vulkan/icd.d",
            "ROOT_MOUNT_DIR": "/root",
            "COS_TOOLS_DIR_HOST": "/var/lib/cos-tools",
            "COS_TOOLS_DIR_CONTAINER": "/build/cos-tools",
        }
        script = "\n".join(
            [
                "if lsmod | grep -q '^nvidia'; then",
                '  echo "an NVIDIA driver is already loaded; skipping installation"',
                "else",
                "  /cos-gpu-installer install",
                "fi",
            ]
        )
        installer = _privileged(
            "nvidia-driver-installer",
            catalog.image("nvidia-driver-installer-cos").ref,
            ["bash", "-c", script],
            [
                _mount("nvidia-install-dir-host", "/usr/local/nvidia"),
                _mount("vulkan-icd-mount", "/etc/vulkan/icd.d"),
                _mount("dev", "/dev"),
                _mount("root-mount", "/root"),
                _mount("cos-tools", "/build/cos-tools"),
            ],
            image_pull_policy="Never",  # preloaded by GKE on COS nodes, matching the node's COS
            env=[core.EnvVarArgs(name=k, value=v) for k, v in env.items()],
        )
        volumes = [
            _host_path("dev", "/dev"),
            _host_path("vulkan-icd-mount", f"{nvidia}/vulkan/icd.d"),
            _host_path("nvidia-install-dir-host", nvidia),
            _host_path("root-mount", "/"),
            _host_path("cos-tools", "/var/lib/cos-tools"),
        ]
        requirements = [
            _on_accelerator(args.accelerator),
            core.NodeSelectorRequirementArgs(key="cloud.google.com/gke-gpu-driver-version", operator="DoesNotExist"),
        ]
        pod = _NodePod([installer], [_pause()], volumes)
        self.daemonset = _node_daemonset(
            Children(self, name, opts).main(was="nvidia-driver-installer"), "nvidia-driver-installer", args.namespace, requirements, pod
        )
        self.register_outputs({})
