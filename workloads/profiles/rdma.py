"""GPUDirect-RDMA over RoCE with the gIB NCCL plugin (A3 Ultra, A4, A4X).

Two ways to reach the NICs, both the recipes' charts' (`network.hostNetwork`):
- Under the resiliency supervisor (recipe 000, gpu-recipes 27b47e7 training/a3ultra/llama3-1-405b/
  nemo-pretraining-gke-resiliency/values.yaml `network.hostNetwork: true`) the pod runs on the
  node's network: its worker registers with the node's host monitor at localhost, it sees the
  gVNIC and the eight RDMA NICs directly, with ClusterFirstWithHostNet DNS and a privileged
  container (a host-network pod gets no multi-network interfaces, so no RDMA devices otherwise).
- Otherwise the pod joins the extra networks through GKE multi-networking, unprivileged and off the
  host network: eth0 default, eth1 gvnic-1, eth2..eth9 rdma-0..7, as the charts render it with
  `hostNetwork: false` (gpu-recipes e515bfc training/a4/llama3_70b/nemo-gke/nemo2507/
  64gpus-bf16-gbs256/recipe/templates/workload-job.yaml) and GKE's own RDMA NCCL tests run
  (GoogleCloudPlatform/container-engine-accelerators 992db81 gpudirect-rdma/nccl-test-a4.yaml,
  nccl-test.yaml). The NCCL settings are the same either way.

On DRANET (GKE's managed DRA driver for networking: A4X Max always, A4X where the stack asks) the pod
joins no multi-network interface: it claims the node's RDMA NICs as DRA devices (workloads.dranet), as
Cluster Toolkit's DRANET NCCL tests do (c765092 examples/gke-a4x/nccl-jobset-example.yaml,
examples/gke-a4x-max-bm/nccl-jobset-example.yaml), unprivileged.

Either way an init container installs the gIB
plugin into a pod volume at /usr/local/gib, whose `set_nccl_env.sh` sets the NCCL environment,
and the launcher points NCCL at gIB's tuner config for the machine after sourcing that script.
The A4 recipe (gpu-recipes e515bfc training/a4/llama3_70b/nemo-gke/nemo2507/64gpus-bf16-gbs256/
recipe/templates/workload-job.yaml) runs the same way and also exports NCCL_SOCKET_IFNAME
"eth0,eth1" after the script; the A3 Ultra recipe sets no socket interfaces. So does the A4X
recipe (gpu-recipes 2e1fd5e training/a4x/llama3_70b/nemo-gke/nemo2602/64gpus-bf16-gbs256/templates/
workload-job.yaml), with gIB's arm64 build and the A3 Ultra tuner; its chart with `hostNetwork:
false` names eth0 default, eth1 gvnic-1, eth2..eth5 rdma-0..3, A4X's four RDMA NICs.
"""

from __future__ import annotations

from collections.abc import Sequence

from trainstack.core import catalog
from trainstack.core.catalog import NicNetwork
from trainstack.workloads.pod import PodParts, empty_dir, mount, plugin_installer
from trainstack.workloads.profiles import networks as multinetwork

GIB_VOLUME = "gib"
GIB_DIR = "/usr/local/gib"


def parts(machine: catalog.Machine, nics: Sequence[NicNetwork], host_network: bool = False, dranet: bool = False) -> PodParts:
    """The gIB pieces of a training pod on `machine` with the given extra networks, on the node's
    network (privileged), through multi-networking, or with its NICs claimed through DRANET (the
    claim itself: workloads.dranet)."""
    images = machine.gpudirect_images
    assert images is not None
    # A machine whose gIB image is no installer (catalog `gib_dir`) has it copied as it is.
    script = (
        f"cp -R {machine.gib_dir}/. /target{GIB_DIR}\n"
        if machine.gib_dir
        else f"/scripts/container_entry.sh install --install-nccl\ncp -R /var/lib/gib/. /target{GIB_DIR}\n"
    )
    installer = plugin_installer(images.nccl_plugin.ref, script, mount(GIB_VOLUME, f"/target{GIB_DIR}"))
    if not dranet:
        multinetwork.data_interfaces(machine, nics)  # the node has every NIC the machine does
    return PodParts(
        annotations={} if host_network or dranet else multinetwork.annotations(machine, nics),
        env={
            "NCCL_PLUGIN_PATH": f"{GIB_DIR}/lib64",
            "NCCL_INIT_SCRIPT": f"{GIB_DIR}/scripts/set_nccl_env.sh",
            "GLOO_SOCKET_IFNAME": multinetwork.PRIMARY_INTERFACE,
        },
        # gpu-recipes src/launchers/grl-nemo-20-launcher-a3u.sh and the A4 chart export these
        # after set_nccl_env.sh.
        after_init={
            **({"NCCL_SOCKET_IFNAME": ",".join(machine.nccl_socket_interfaces)} if machine.nccl_socket_interfaces else {}),
            **({"NCCL_TUNER_CONFIG_PATH": f"{GIB_DIR}/configs/{machine.nccl_tuner_config}"} if machine.nccl_tuner_config else {}),
        },
        host_network=host_network,
        privileged=host_network,
        volumes=(empty_dir(GIB_VOLUME),),
        volume_mounts=(mount(GIB_VOLUME, GIB_DIR),),
        init_containers=(installer,),
    )
