"""The DaemonSets a machine needs on its nodes beyond its GPUDirect stack (catalog `node_daemonsets`),
in kube-system.

- `asapd-lite` (A4X Max): it sets up the host's CX-8 NICs for their MRDMA interfaces. Facts from Cluster
  Toolkit c765092 examples/gke-a4x-max-bm/asapd-lite-installer.yaml, which the blueprint applies
  (kubectl-apply `asapd_lite`): the image, run as `/usr/local/bin/run_asapd_lite.sh`, privileged on
  the host's network and PID namespaces at system-node-critical priority, tolerating every taint, on
  the machine's COS nodes; its host paths (/sys, /proc, udev rules and state, systemd units and state,
  its own run, log and lib directories), a 2 MiB hugepage volume with 8192Mi of them and 1024Mi of
  memory, its health endpoint (`/healthz` on 19540: liveness after 60 s, readiness), `LD_LIBRARY_PATH`
  /asapd-lite/controller, and rolling updates of 1% of the nodes at a time. After the setup the
  upstream container looks for a `gpu*` interface whose IPv6 address failed duplicate address
  detection, restarts such an interface and exits so the kubelet runs the setup again; the script
  below does the same in its own words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes.core import v1 as core

from trainstack.components.args import Args, Problem
from trainstack.components.k8s_provider import metadata
from trainstack.components.options import Children
from trainstack.components.pod_security import POD_SECURITY
from trainstack.core import catalog, rules

_ASAPD_PORT = 19540
_ASAPD_SCRIPT = """\
set -x
/usr/local/bin/run_asapd_lite.sh
sleep 15
for iface in $(ip -o link show | awk -F': ' '{print $2}' | grep gpu); do
  if ip -6 addr show dev "$iface" | grep -q dadfailed; then
    echo "IPv6 duplicate address detection failed on $iface: restarting it, then the setup"
    ip link set dev "$iface" down
    ip link set dev "$iface" up
    exit 1
  fi
done
wait
"""
_ASAPD_HOST_PATHS = {
    "host-sys": ("/sys", "/sys", None),
    "host-proc": ("/proc", "/proc", None),
    "host-udev-rules": ("/etc/udev/rules.d", "/etc/udev/rules.d", None),
    "host-run-udev": ("/run/udev", "/run/udev", None),
    "host-run-asapd-lite": ("/run/asapd-lite", "/run/asapd-lite", "DirectoryOrCreate"),
    "var-log-google-asapd-lite": ("/var/log/google/asapd-lite", "/var/log/google/asapd-lite", "DirectoryOrCreate"),
    "var-lib-google-asapd-lite": ("/var/lib/google/asapd-lite", "/var/lib/google/asapd-lite", "DirectoryOrCreate"),
    "host-systemd-system": ("/etc/systemd/system", "/etc/systemd/system", None),
    "host-run-systemd": ("/run/systemd", "/run/systemd", None),
}


def _asapd_lite(machine: catalog.Machine) -> k8s.apps.v1.DaemonSetSpecArgs:
    """The asapd-lite DaemonSet's spec, on `machine`'s COS nodes (module docstring)."""
    labels = {"k8s-app": "asapd-lite"}
    health = core.ProbeArgs(http_get=core.HTTPGetActionArgs(path="/healthz", port=_ASAPD_PORT))
    volumes = [core.VolumeArgs(name=name, host_path=core.HostPathVolumeSourceArgs(path=host, type=kind)) for name, (host, _, kind) in _ASAPD_HOST_PATHS.items()]
    volumes.append(core.VolumeArgs(name="hugepage-2mi", empty_dir=core.EmptyDirVolumeSourceArgs(medium="HugePages-2Mi")))
    mounts = [core.VolumeMountArgs(name=name, mount_path=path) for name, (_, path, _) in _ASAPD_HOST_PATHS.items()]
    mounts.append(core.VolumeMountArgs(name="hugepage-2mi", mount_path="/hugepages-2Mi"))
    on_machine = core.NodeSelectorTermArgs(
        match_expressions=[
            core.NodeSelectorRequirementArgs(key="node.kubernetes.io/instance-type", operator="In", values=[machine.name]),
            core.NodeSelectorRequirementArgs(key="cloud.google.com/gke-os-distribution", operator="In", values=["cos"]),
        ]
    )
    container = core.ContainerArgs(
        name="asapd-lite",
        image=catalog.image("asapd-lite").ref,
        command=["/bin/bash", "-c"],
        args=[_ASAPD_SCRIPT],
        env=[core.EnvVarArgs(name="LD_LIBRARY_PATH", value="/asapd-lite/controller")],
        liveness_probe=core.ProbeArgs(http_get=health.http_get, initial_delay_seconds=60),
        readiness_probe=health,
        security_context=core.SecurityContextArgs(privileged=True),
        resources=core.ResourceRequirementsArgs(limits={"hugepages-2Mi": "8192Mi", "memory": "1024Mi"}),
        volume_mounts=mounts,
    )
    return k8s.apps.v1.DaemonSetSpecArgs(
        selector=k8s.meta.v1.LabelSelectorArgs(match_labels=labels),
        template=core.PodTemplateSpecArgs(
            metadata=k8s.meta.v1.ObjectMetaArgs(labels=labels),
            spec=core.PodSpecArgs(
                priority_class_name="system-node-critical",
                affinity=core.AffinityArgs(
                    node_affinity=core.NodeAffinityArgs(
                        required_during_scheduling_ignored_during_execution=core.NodeSelectorArgs(node_selector_terms=[on_machine])
                    )
                ),
                tolerations=[core.TolerationArgs(operator="Exists")],
                host_network=True,
                host_pid=True,
                automount_service_account_token=False,  # it never calls the Kubernetes API
                security_context=POD_SECURITY,
                containers=[container],
                volumes=volumes,
            ),
        ),
        update_strategy=k8s.apps.v1.DaemonSetUpdateStrategyArgs(
            type="RollingUpdate", rolling_update=k8s.apps.v1.RollingUpdateDaemonSetArgs(max_unavailable="1%")
        ),
    )


DAEMONSETS: dict[str, Callable[[catalog.Machine], k8s.apps.v1.DaemonSetSpecArgs]] = {"asapd-lite": _asapd_lite}
"""Each DaemonSet a catalog record may name (`node_daemonsets`), by name: its spec on a machine's nodes."""


@dataclass(frozen=True)
class MachineDaemonSetsArgs(Args):
    """The machine whose nodes need the DaemonSets its catalog record names."""

    machine_type: str
    """A GPU machine with node DaemonSets (`a4x-maxgpu-4g-metal`)."""
    namespace: str = "kube-system"
    """The DaemonSets' namespace."""

    _checks = {"machine_type": rules.gpu_machine, "namespace": rules.K8S_NAME}

    def _cross(self) -> Iterator[Problem]:
        if not catalog.machine(self.machine_type).node_daemonsets:
            yield Problem(("machine_type",), self.machine_type, "needs no node DaemonSets: its catalog record names none")


class MachineDaemonSets(pulumi.ComponentResource):
    """The node DaemonSets of a machine (catalog `node_daemonsets`), named as upstream so its
    troubleshooting steps apply (`kubectl -n kube-system get ds asapd-lite`)."""

    daemonsets: list[k8s.apps.v1.DaemonSet]
    """The DaemonSets, in the record's order; ready once running on every node of the machine."""

    def __init__(self, name: str, args: MachineDaemonSetsArgs, opts: pulumi.ResourceOptions | None = None):
        args = MachineDaemonSetsArgs.checked(args, type(self), name)
        super().__init__("trainstack:k8s:MachineDaemonSets", name, None, opts)
        kids = Children(self, name, opts)
        machine = catalog.machine(args.machine_type)
        self.daemonsets = [
            k8s.apps.v1.DaemonSet(**kids(daemon), metadata=metadata(daemon, args.namespace, {"k8s-app": daemon}), spec=DAEMONSETS[daemon](machine))
            for daemon in machine.node_daemonsets
        ]
        self.register_outputs({"daemonsets": list(machine.node_daemonsets)})
