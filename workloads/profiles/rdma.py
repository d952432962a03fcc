"""GPUDirect-RDMA over RoCE with the gIB NCCL plugin (A3 Ultra).

Facts from GKE's "Maximize GPU network bandwidth with GPUDirect RDMA" guide and the
AI-Hypercomputer/gpu-recipes a3ultra JobSet chart: the pod joins the gVNIC network on eth1
and the eight RDMA networks on eth2..eth9; an init container installs the gIB plugin into a
pod volume at /usr/local/gib, whose `set_nccl_env.sh` sets the NCCL environment.
"""

from __future__ import annotations

from collections.abc import Sequence

from trainstack import catalog
from trainstack.catalog import NicNetwork
from trainstack.workloads.pod import PodParts, empty_dir, mount, plugin_installer
from trainstack.workloads.profiles import networks as multinetwork

GIB_VOLUME = "gib"
GIB_DIR = "/usr/local/gib"


def parts(machine: catalog.Machine, nics: Sequence[NicNetwork]) -> PodParts:
    """The gIB pieces of a training pod on `machine` with the given extra networks."""
    images = catalog.GPUDIRECT_IMAGES[catalog.GpuDirect.RDMA]
    installer = plugin_installer(
        images.nccl_plugin.ref,
        "/scripts/container_entry.sh install --install-nccl\n" f"cp -R /var/lib/gib/. /target{GIB_DIR}\n",
        mount(GIB_VOLUME, f"/target{GIB_DIR}"),
    )
    return PodParts(
        annotations=multinetwork.annotations(machine, nics),
        env={
            "NCCL_PLUGIN_PATH": f"{GIB_DIR}/lib64",
            "NCCL_INIT_SCRIPT": f"{GIB_DIR}/scripts/set_nccl_env.sh",
            "GLOO_SOCKET_IFNAME": multinetwork.PRIMARY_INTERFACE,
        },
        volumes=(empty_dir(GIB_VOLUME),),
        volume_mounts=(mount(GIB_VOLUME, GIB_DIR),),
        init_containers=(installer,),
    )
