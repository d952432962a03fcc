"""GPUDirect-TCPXO (A3 Mega): the NCCL FasTrak plugin and the RxDM native sidecar.

Facts from GKE's "Maximize GPU network bandwidth with GPUDirect-TCPXO" guide and the
AI-Hypercomputer/gpu-recipes a3mega charts (the plugin and RxDM versions are the catalog's,
core/catalog/gpudirect.py, newer than recipe 002's):
- the pod joins the eight extra VPCs through multi-networking (eth1..eth8);
- an init container installs the plugin into a pod volume at /usr/local/nccl-plugin;
- `tcpxo-daemon` runs unprivileged with NET_ADMIN/NET_BIND_SERVICE; the NRI device injector
  (a DaemonSet of the Kubernetes layer) gives it the GPU devices the
  `devices.gke.io/container.tcpxo-daemon` annotation lists;
- the workload reads the LLCM aperture devices at /dev/aperture_devices.
"""

from __future__ import annotations

from collections.abc import Sequence

from trainstack.components.pod_security import container_security
from trainstack.core import catalog
from trainstack.core.catalog import NicNetwork
from trainstack.workloads.pod import (
    NVIDIA_DIR,
    NVIDIA_VOLUME,
    PodParts,
    empty_dir,
    host_path,
    mount,
    plugin_installer,
)
from trainstack.workloads.profiles import networks as multinetwork

DAEMON = "tcpxo-daemon"
PLUGIN_VOLUME = "nccl-plugin"
PLUGIN_DIR = "/usr/local/nccl-plugin"
APERTURE_VOLUME = "aperture-devices"
APERTURE_DIR = "/dev/aperture_devices"


def device_annotation(machine: catalog.Machine) -> str:
    """The NRI device list for the daemon: every GPU, the control devices, the dma-buf helper."""
    paths = [f"/dev/nvidia{i}" for i in range(machine.gpus_per_node)]
    paths += ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/dmabuf_import_helper"]
    return "".join(f"- path: {p}\n" for p in paths)


def parts(machine: catalog.Machine, nics: Sequence[NicNetwork]) -> PodParts:
    """The TCPXO pieces of a training pod on `machine` with the given extra networks."""
    interfaces = multinetwork.data_interfaces(machine, nics)
    images = catalog.GPUDIRECT_IMAGES[catalog.GpuDirect.TCPXO]
    assert images.rxdm is not None
    installer = plugin_installer(
        images.nccl_plugin.ref,
        "mkdir -p /var/lib/tcpxo\n"
        "[ -e /var/lib/tcpx ] || ln -s /var/lib/tcpxo /var/lib/tcpx\n"
        "/scripts/container_entry.sh install --install-nccl\n"
        f"cp -r /var/lib/tcpxo/. {PLUGIN_DIR}/\n",
        mount(PLUGIN_VOLUME, PLUGIN_DIR),
    )
    daemon = {
        "name": DAEMON,
        "image": images.rxdm.ref,
        "restartPolicy": "Always",  # a native sidecar: up before the workload, stopped after it
        "command": [
            "bash",
            "/fts/entrypoint_rxdm_container.sh",
            "--num_hops=2",
            f"--num_nics={len(interfaces)}",
            "--uid=",
            "--alsologtostderr",
        ],
        # NET_ADMIN and NET_BIND_SERVICE, as GKE's TCPXO manifests add them (its flow steering
        # and its listening ports); every other capability dropped.
        "securityContext": container_security("NET_ADMIN", "NET_BIND_SERVICE"),
        "env": [{"name": "LD_LIBRARY_PATH", "value": f"{NVIDIA_DIR}/lib64"}],
        "volumeMounts": [
            mount(NVIDIA_VOLUME, NVIDIA_DIR),
            mount("sys", "/hostsysfs"),
            mount("proc-sys", "/hostprocsysfs"),
        ],
    }
    return PodParts(
        annotations={
            **multinetwork.annotations(machine, nics),
            f"devices.gke.io/container.{DAEMON}": device_annotation(machine),
        },
        env={
            "NCCL_PLUGIN_PATH": f"{PLUGIN_DIR}/lib64",
            "NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY": APERTURE_DIR,
            "NCCL_FASTRAK_CTRL_DEV": multinetwork.PRIMARY_INTERFACE,
            "NCCL_FASTRAK_IFNAME": ",".join(interfaces),
            "NCCL_FASTRAK_NUM_FLOWS": "2",
            "NCCL_FASTRAK_NUM_FLOWS_PER_GROUP": "1",
            "NCCL_FASTRAK_ENABLE_CONTROL_CHANNEL": "0",
            "NCCL_FASTRAK_ENABLE_HOTPATH_LOGGING": "0",
            "NCCL_FASTRAK_USE_SNAP": "1",
            "NCCL_FASTRAK_USE_LLCM": "1",
            "NCCL_TUNER_PLUGIN": "libnccl-tuner.so",
            "NCCL_TUNER_CONFIG_PATH": f"{PLUGIN_DIR}/lib64/a3plus_tuner_config.textproto",
            "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE": f"{PLUGIN_DIR}/lib64/a3plus_guest_config.textproto",
            "NCCL_SOCKET_IFNAME": multinetwork.PRIMARY_INTERFACE,
            "GLOO_SOCKET_IFNAME": multinetwork.PRIMARY_INTERFACE,
            "NCCL_CROSS_NIC": "0",
            "NCCL_PROTO": "Simple",
            "NCCL_DYNAMIC_CHUNK_SIZE": "524288",
            "NCCL_P2P_NET_CHUNKSIZE": "524288",
            "NCCL_P2P_PCI_CHUNKSIZE": "524288",
            "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
            "NCCL_BUFFSIZE": "8388608",
            "NCCL_NET_GDR_LEVEL": "PIX",
            "NCCL_P2P_PXN_LEVEL": "0",
            "NCCL_NVLS_ENABLE": "0",
        },
        volumes=(
            empty_dir(PLUGIN_VOLUME),
            host_path("sys", "/sys"),
            host_path("proc-sys", "/proc/sys"),
            host_path(APERTURE_VOLUME, APERTURE_DIR),
        ),
        volume_mounts=(mount(PLUGIN_VOLUME, PLUGIN_DIR), mount(APERTURE_VOLUME, APERTURE_DIR)),
        init_containers=(installer, daemon),
    )
