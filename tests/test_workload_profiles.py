"""Each GPUDirect profile on its own: the sidecars, annotations, env and volumes it adds, and
nothing another stack needs."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from trainstack.core import catalog, rules
from trainstack.core.catalog import nic_networks
from trainstack.workloads import profiles
from trainstack.workloads.pod import NVIDIA_VOLUME, PodParts, compose, nvidia_libraries
from trainstack.workloads.profiles import tcpx

MACHINES = {"tcpx": "a3-highgpu-8g", "tcpxo": "a3-megagpu-8g", "rdma": "a3-ultragpu-8g", "none": "a2-highgpu-8g"}


def networks(machine: catalog.Machine) -> list[catalog.NicNetwork]:
    return nic_networks(machine, "192.168.0.0/16")


def parts(stack: str) -> PodParts:
    machine = catalog.machine(MACHINES[stack])
    return profiles.for_machine(machine, networks(machine))


def interfaces(p: PodParts) -> list[dict[str, str]]:
    return json.loads(p.annotations["networking.gke.io/interfaces"])


def containers(p: PodParts) -> dict[str, dict]:
    return {c["name"]: c for c in p.init_containers}


def test_the_machine_picks_the_profile() -> None:
    assert {g: f.__module__.rsplit(".", 1)[1] for g, f in profiles.PROFILES.items()} == {
        catalog.GpuDirect.TCPX: "tcpx",
        catalog.GpuDirect.TCPXO: "tcpxo",
        catalog.GpuDirect.RDMA: "rdma",
        catalog.GpuDirect.NONE: "none",
    }


def test_tcpx_runs_the_pinned_rxdm_as_a_privileged_native_sidecar() -> None:
    p = parts("tcpx")
    daemon = containers(p)["tcpd-daemon"]
    assert list(containers(p)) == ["tcpd-daemon"]  # the plugin comes from the node's installer
    # Off the host network GKE documents RxDM v2.0.11 with the host's /sys and /proc/sys
    # (container-engine-accelerators 10f8f865 gpudirect-tcpx/nccl-test-without-hostnetwork.yaml).
    assert daemon["image"] == "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.11"
    assert {"name": "sys", "mountPath": "/hostsysfs"} in daemon["volumeMounts"]
    assert {"name": "proc-sys", "mountPath": "/hostprocsysfs"} in daemon["volumeMounts"]
    assert daemon["restartPolicy"] == "Always"
    assert daemon["securityContext"] == {"privileged": True}
    assert daemon["command"][:3] == ["/tcpgpudmarxd/build/app/tcpgpudmarxd", "--gpu_nic_preset", "a3vm"]
    assert daemon["command"][daemon["command"].index("--uds_path") + 1] == tcpx.SOCKET_DIR
    assert {m["mountPath"]: m["name"] for m in daemon["volumeMounts"]} == {
        "/usr/local/nvidia": NVIDIA_VOLUME,
        "/run/tcpx": "tcpx-socket",
        "/hostsysfs": "sys",
        "/hostprocsysfs": "proc-sys",
    }


def test_tcpx_shares_the_socket_and_points_nccl_at_the_four_nics() -> None:
    p = parts("tcpx")
    assert p.volumes == (
        {"name": "tcpx-socket", "emptyDir": {}},
        {"name": "sys", "hostPath": {"path": "/sys"}},
        {"name": "proc-sys", "hostPath": {"path": "/proc/sys"}},
    )
    assert p.volume_mounts == ({"name": "tcpx-socket", "mountPath": "/run/tcpx"},)
    assert interfaces(p) == [{"interfaceName": "eth0", "network": "default"}] + [{"interfaceName": f"eth{i}", "network": f"vpc{i}"} for i in range(1, 5)]
    assert p.env["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"] == "eth1,eth2,eth3,eth4"
    assert p.env["NCCL_GPUDIRECTTCPX_CTRL_DEV"] == "eth0"
    assert p.env["NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX"] == "/run/tcpx"
    assert p.env["NCCL_GPUDIRECTTCPX_TX_BINDINGS"].split(";")[0] == "eth1:8-21,112-125"
    assert p.env["NCCL_GPUDIRECTTCPX_RX_BINDINGS"].split(";")[3] == "eth4:74-87,178-191"
    assert p.env["NCCL_PLUGIN_PATH"] == "/usr/local/nvidia/lib64"
    assert not any(k.startswith(("NCCL_FASTRAK", "NCCL_INIT_SCRIPT")) for k in p.env)
    assert not any(k.startswith("devices.gke.io/") for k in p.annotations)  # privileged RxDM sees the GPUs itself


def test_tcpxo_installs_the_pinned_plugin_then_runs_rxdm_as_a_native_sidecar() -> None:
    p = parts("tcpxo")
    assert list(containers(p)) == ["nccl-plugin-installer", "tcpxo-daemon"]
    installer, daemon = containers(p).values()
    assert installer["image"].startswith(
        "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15@"
    )  # Cluster Toolkit 1047080 examples/gke-a3-megagpu
    assert "restartPolicy" not in installer  # runs to completion first
    assert "/scripts/container_entry.sh install --install-nccl" in installer["args"][0]
    assert daemon["image"].startswith("us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21@")
    assert daemon["restartPolicy"] == "Always"
    assert daemon["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["NET_ADMIN", "NET_BIND_SERVICE"]}
    assert daemon["securityContext"]["allowPrivilegeEscalation"] is False
    assert "--num_nics=8" in daemon["command"]
    assert {m["mountPath"] for m in daemon["volumeMounts"]} == {"/usr/local/nvidia", "/hostsysfs", "/hostprocsysfs"}


def test_tcpxo_annotations_name_the_daemon_devices_and_eight_vpcs() -> None:
    p = parts("tcpxo")
    devices = p.annotations["devices.gke.io/container.tcpxo-daemon"].splitlines()
    assert devices == [f"- path: /dev/nvidia{i}" for i in range(8)] + [
        "- path: /dev/nvidiactl",
        "- path: /dev/nvidia-uvm",
        "- path: /dev/dmabuf_import_helper",
    ]
    assert [i["network"] for i in interfaces(p)] == ["default"] + [f"vpc{i}" for i in range(1, 9)]
    assert p.annotations["networking.gke.io/default-interface"] == "eth0"


def test_tcpxo_environment_and_volumes_are_the_fastrak_ones() -> None:
    p = parts("tcpxo")
    assert p.env["NCCL_FASTRAK_IFNAME"] == ",".join(f"eth{i}" for i in range(1, 9))
    assert p.env["NCCL_FASTRAK_CTRL_DEV"] == "eth0"
    assert p.env["NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY"] == "/dev/aperture_devices"
    assert p.env["NCCL_PLUGIN_PATH"] == "/usr/local/nccl-plugin/lib64"
    assert not any(k.startswith("NCCL_GPUDIRECTTCPX") for k in p.env)
    assert {v["name"]: v for v in p.volumes}["aperture-devices"] == {"name": "aperture-devices", "hostPath": {"path": "/dev/aperture_devices"}}
    assert {m["mountPath"] for m in p.volume_mounts} == {"/usr/local/nccl-plugin", "/dev/aperture_devices"}


def test_rdma_under_the_host_monitor_runs_on_the_host_network_and_installs_gib_in_the_pod() -> None:
    """As recipe 000 (gpu-recipes 27b47e7 values.yaml): hostNetwork, a privileged container, gIB
    v1.0.5 by an init container, and no pod-level multi-network annotations."""
    machine = catalog.machine(MACHINES["rdma"])
    p = profiles.for_machine(machine, networks(machine), host_monitor=True)
    assert p.host_network and p.privileged
    assert "networking.gke.io/interfaces" not in p.annotations
    assert list(containers(p)) == ["nccl-plugin-installer"]
    assert containers(p)["nccl-plugin-installer"]["image"] == "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.0.5"
    assert p.after_init == {"NCCL_TUNER_CONFIG_PATH": "/usr/local/gib/configs/tuner_config_a3u.txtpb"}
    assert p.env["NCCL_PLUGIN_PATH"] == "/usr/local/gib/lib64"
    assert p.env["NCCL_INIT_SCRIPT"] == "/usr/local/gib/scripts/set_nccl_env.sh"
    assert p.volume_mounts == ({"name": "gib", "mountPath": "/usr/local/gib"},)
    assert not any(c.get("restartPolicy") for c in p.init_containers)  # no RxDM on RDMA
    assert not any(k.startswith("devices.gke.io/") for k in p.annotations)


def test_rdma_without_the_host_monitor_joins_the_nics_through_multinetworking_unprivileged() -> None:
    """The charts' `hostNetwork: false` (gpu-recipes e515bfc A4 workload-job.yaml) and GKE's RDMA
    NCCL tests (container-engine-accelerators 992db81 gpudirect-rdma/nccl-test-a4.yaml): eth0
    default, eth1 gvnic-1, eth2..eth9 rdma-0..7; the same gIB install and NCCL settings."""
    p = parts("rdma")
    on_host = profiles.for_machine(catalog.machine(MACHINES["rdma"]), networks(catalog.machine(MACHINES["rdma"])), host_monitor=True)
    assert not p.host_network and not p.privileged
    assert p.annotations["networking.gke.io/default-interface"] == "eth0"
    assert interfaces(p) == [
        {"interfaceName": "eth0", "network": "default"},
        {"interfaceName": "eth1", "network": "gvnic-1"},
        *({"interfaceName": f"eth{i + 2}", "network": f"rdma-{i}"} for i in range(8)),
    ]
    assert (p.env, p.after_init, p.init_containers, p.volume_mounts) == (on_host.env, on_host.after_init, on_host.init_containers, on_host.volume_mounts)


def test_a4_takes_the_rdma_path_with_its_own_gib_release_tuner_and_socket_interfaces() -> None:
    """gpu-recipes e515bfc training/a4/llama3_70b/nemo-gke/nemo2507/64gpus-bf16-gbs256/recipe:
    gIB v1.1.0, and after set_nccl_env.sh NCCL_SOCKET_IFNAME "eth0,eth1" and the A4 tuner."""
    a4 = catalog.machine("a4-highgpu-8g")
    p = profiles.for_machine(a4, networks(a4))
    a3u = parts("rdma")
    assert containers(p)["nccl-plugin-installer"]["image"] == "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.0"
    assert p.after_init == {
        "NCCL_SOCKET_IFNAME": "eth0,eth1",
        "NCCL_TUNER_CONFIG_PATH": "/usr/local/gib/configs/tuner_config_a4.txtpb",
    }
    assert (p.env, p.volumes, p.volume_mounts, p.host_network, p.privileged, p.annotations) == (
        a3u.env,
        a3u.volumes,
        a3u.volume_mounts,
        a3u.host_network,
        a3u.privileged,
        a3u.annotations,
    )


def test_none_adds_nothing() -> None:
    assert parts("none") == PodParts()


@pytest.mark.parametrize("stack", ["tcpx", "tcpxo"])
def test_multinetwork_profiles_follow_the_platforms_network_names(stack: str) -> None:
    machine = catalog.machine(MACHINES[stack])
    renamed = [replace(nic, name=f"net-{i}", interface=f"nic{i}") for i, nic in enumerate(networks(machine))]
    p = profiles.for_machine(machine, renamed)
    # Names and interfaces come from the platform's NicNetwork records, not re-derived here.
    assert [(i["network"], i["interfaceName"]) for i in interfaces(p)] == [("default", "eth0"), *((n.name, n.interface) for n in renamed)]


@pytest.mark.parametrize("stack", ["tcpx", "tcpxo", "rdma", "none"])
def test_a_network_count_that_disagrees_with_the_machine_is_an_error(stack: str) -> None:
    machine = catalog.machine(MACHINES[stack])
    with pytest.raises(ValueError, match=f"{machine.name} has {machine.extra_nics} extra NICs"):
        profiles.for_machine(machine, [*networks(machine), catalog.NicNetwork("extra", "gvnic", "eth99", "10.0.0.0/24")])


@pytest.mark.parametrize("stack", ["tcpx", "tcpxo", "rdma", "none"])
def test_each_profile_composes_with_the_host_libraries_it_mounts(stack: str) -> None:
    pod = compose(nvidia_libraries(), parts(stack))
    volumes = {v["name"] for v in pod.volumes}
    for container in pod.init_containers:
        assert {m["name"] for m in container["volumeMounts"]} <= volumes, container["name"]
    assert {m["name"] for m in pod.volume_mounts} <= volumes


def test_profile_modules_read_images_from_the_catalog() -> None:
    images = {c["image"] for stack in ("tcpx", "tcpxo", "rdma") for c in parts(stack).init_containers}
    pinned = {i.ref for g in catalog.GPUDIRECT_IMAGES.values() for i in (g.nccl_plugin, g.rxdm) if i}
    assert images <= pinned


@pytest.mark.parametrize("machine", sorted(catalog.MACHINES))
def test_the_supervisor_is_allowed_exactly_where_trainers_share_the_nodes_network(machine: str) -> None:
    """The resiliency launcher builds its host-monitor client from ports alone (AI-Hypercomputer/
    resiliency 02c17b7 third_party/nvidia-resiliency-ext/launcher.py setup_goodput_client), so
    validate allows the supervisor (rules.host_monitor_reachable) on a machine only if its
    profile puts a supervised trainer on the host network."""
    m = catalog.machine(machine)
    supervised = profiles.for_machine(m, networks(m), host_monitor=True)
    assert (rules.host_monitor_reachable(m) is None) == supervised.host_network
