"""GPUDirect-TCPX (A3 High): the receive-datapath manager (RxDM) beside the workload.

Facts from GKE's "Maximize GPU network bandwidth with GPUDirect-TCPX and multi-networking"
guide and GoogleCloudPlatform/container-engine-accelerators `gpudirect-tcpx/`:
- the pod joins the extra VPCs through multi-networking (eth1..eth4, device mode);
- the `nccl-tcpx-installer` DaemonSet (Kubernetes layer) puts the NCCL plugin and its NCCL
  into the host's NVIDIA library directory, which the pod mounts at /usr/local/nvidia/lib64;
- RxDM (`tcpgpudmarxd --gpu_nic_preset a3vm`) serves the plugin over a Unix socket shared
  through a volume; off the host network it runs privileged with the host's /sys and /proc/sys
  at /hostsysfs and /hostprocsysfs, and needs RxDM v2.0.11 or later (container-engine-
  accelerators 10f8f865 gpudirect-tcpx/nccl-test-without-hostnetwork.yaml);
- the flow-steering wait is the recipes' (001 and 003: 1000000 microseconds).
"""

from __future__ import annotations

from collections.abc import Sequence

from trainstack.core import catalog
from trainstack.core.catalog import NicNetwork
from trainstack.workloads.pod import (
    NVIDIA_DIR,
    NVIDIA_VOLUME,
    PodParts,
    empty_dir,
    host_path,
    mount,
)
from trainstack.workloads.profiles import networks as multinetwork

DAEMON = "tcpd-daemon"
SOCKET_VOLUME = "tcpx-socket"
SOCKET_DIR = "/run/tcpx"
SYS_VOLUME = "sys"
PROC_SYS_VOLUME = "proc-sys"


def parts(machine: catalog.Machine, nics: Sequence[NicNetwork]) -> PodParts:
    """The TCPX pieces of a training pod on `machine` with the given extra networks."""
    interfaces = multinetwork.data_interfaces(machine, nics)
    bindings = machine.nic_cpu_bindings
    if len(interfaces) != len(bindings):
        raise ValueError(f"the catalog's TCPX core bindings of {machine.name} describe {len(bindings)} NICs; it has {len(interfaces)}")
    images = catalog.GPUDIRECT_IMAGES[catalog.GpuDirect.TCPX]
    assert images.rxdm is not None
    daemon = {
        "name": DAEMON,
        "image": images.rxdm.ref,
        "restartPolicy": "Always",  # a native sidecar: up before the workload, stopped after it
        "command": [
            "/tcpgpudmarxd/build/app/tcpgpudmarxd",
            "--gpu_nic_preset",
            "a3vm",
            "--gpu_shmem_type",
            "fd",
            "--uds_path",
            SOCKET_DIR,
            "--setup_param",
            "--verbose 128 2 0",
        ],
        "securityContext": {"privileged": True},
        "env": [{"name": "LD_LIBRARY_PATH", "value": f"{NVIDIA_DIR}/lib64"}],
        "volumeMounts": [
            mount(NVIDIA_VOLUME, NVIDIA_DIR),
            mount(SOCKET_VOLUME, SOCKET_DIR),
            mount(SYS_VOLUME, "/hostsysfs"),
            mount(PROC_SYS_VOLUME, "/hostprocsysfs"),
        ],
    }
    return PodParts(
        annotations=multinetwork.annotations(machine, nics),
        env={
            # The plugin and its NCCL live in the host library directory the installer fills.
            "NCCL_PLUGIN_PATH": f"{NVIDIA_DIR}/lib64",
            "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX": SOCKET_DIR,
            "NCCL_GPUDIRECTTCPX_CTRL_DEV": multinetwork.PRIMARY_INTERFACE,
            "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": ",".join(interfaces),
            "NCCL_GPUDIRECTTCPX_TX_BINDINGS": ";".join(f"{i}:{tx}" for i, (tx, _) in zip(interfaces, bindings, strict=True)),
            "NCCL_GPUDIRECTTCPX_RX_BINDINGS": ";".join(f"{i}:{rx}" for i, (_, rx) in zip(interfaces, bindings, strict=True)),
            "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS": "1000000",
            "NCCL_SOCKET_IFNAME": multinetwork.PRIMARY_INTERFACE,
            "GLOO_SOCKET_IFNAME": multinetwork.PRIMARY_INTERFACE,
            "NCCL_CROSS_NIC": "0",
            "NCCL_ALGO": "Ring",
            "NCCL_PROTO": "Simple",
            "NCCL_NSOCKS_PERTHREAD": "4",
            "NCCL_SOCKET_NTHREADS": "1",
            "NCCL_DYNAMIC_CHUNK_SIZE": "524288",
            "NCCL_P2P_NET_CHUNKSIZE": "524288",
            "NCCL_P2P_PCI_CHUNKSIZE": "524288",
            "NCCL_P2P_NVL_CHUNKSIZE": "1048576",
            "NCCL_BUFFSIZE": "4194304",
            "NCCL_NET_GDR_LEVEL": "PIX",
            "NCCL_P2P_PXN_LEVEL": "0",
            "NCCL_NVLS_ENABLE": "0",
        },
        volumes=(empty_dir(SOCKET_VOLUME), host_path(SYS_VOLUME, "/sys"), host_path(PROC_SYS_VOLUME, "/proc/sys")),
        volume_mounts=(mount(SOCKET_VOLUME, SOCKET_DIR),),
        init_containers=(daemon,),
    )
