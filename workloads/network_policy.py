"""Ingress NetworkPolicies of one training job, where the cluster enforces them (GKE Dataplane V2).

The job's pods, supervisor and TensorBoard each take ingress only as a policy here allows it,
and, in a namespace of trainstack's own, so does every other pod (a namespace-wide default
deny); in `default`, shared with whatever else runs there, the other pods are left alone:
- the job's pods from each other, on every port: torchrun's and DeepSpeed's rendezvous store
  listens on MASTER_PORT, but NCCL's bootstrap and socket transport and Gloo listen on ephemeral
  ports they pick at run time (no setting pins them), so a port list would break the job;
- the supervisor's Services on their own ports (SERVICES), from the namespace's pods and from
  the nodes: the host monitor and host-network trainers connect from the node's own address;
- TensorBoard on its port from the namespace's pods (`kubectl port-forward` enters the pod's
  network namespace through the kubelet and needs no rule).

Pods on the host network (A3 Ultra trainers, the host monitor, node installers) are outside any
NetworkPolicy: it selects pod addresses, and theirs are the node's. So is the GPUDirect traffic on
the extra NICs (GKE applies policies to the pod's default network only). An NFS server in the
namespace admits NFS itself (`NfsServerArgs.network_policy`). The admission webhooks the
control plane calls (Kueue, JobSet: catalog.CONTROLLER_WEBHOOK_PORT) live in their own
namespaces, which these policies leave alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from trainstack.components.args import Args
from trainstack.components.options import Children
from trainstack.core import rules
from trainstack.workloads import supervisor, tensorboard

Json = dict[str, Any]

# Any source address: the nodes (host-network peers) have no pod label to select.
ANY_ADDRESS = {"ipBlock": {"cidr": "0.0.0.0/0"}}


@dataclass(frozen=True)
class JobNetworkPoliciesArgs(Args):
    """The job whose pods, supervisor and TensorBoard the policies admit traffic to."""

    job: str
    """The JobSet (or Job) name."""
    namespace: str
    """Its namespace."""
    controller: str = "jobset"
    """`jobset` or `job`: which label names the job's pods."""
    supervised: bool = False
    """Whether the resiliency supervisor runs beside it."""
    tensorboard: bool = False
    """Whether TensorBoard runs beside it."""
    deny_namespace: bool = True
    """Deny ingress to every other pod of the namespace too: only in a namespace of the stack's
    own, never in `default`, where other workloads would lose their ingress."""

    _checks = {"job": rules.DNS1035_NAME, "namespace": rules.K8S_NAME}


def pod_selector(args: JobNetworkPoliciesArgs) -> Json:
    owner = "jobset.sigs.k8s.io/jobset-name" if args.controller == "jobset" else "batch.kubernetes.io/job-name"
    return {"matchLabels": {owner: args.job}}


def _tcp(*ports: int) -> list[Json]:
    return [{"protocol": "TCP", "port": port} for port in ports]


def policies(args: JobNetworkPoliciesArgs) -> dict[str, Json]:
    """Role -> NetworkPolicy spec."""
    namespace_pods: Json = {"podSelector": {}}
    found: dict[str, Json] = {"deny-ingress": {"podSelector": {}, "policyTypes": ["Ingress"]}} if args.deny_namespace else {}
    found |= {
        # Every port: see the module docstring (MASTER_PORT is only the first of them).
        "training": {"podSelector": pod_selector(args), "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector": pod_selector(args)}]}]},
    }
    if args.supervised:
        found["supervisor"] = {
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "resiliency-supervisor", "app.kubernetes.io/instance": args.job}},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [namespace_pods, ANY_ADDRESS], "ports": _tcp(*supervisor.SERVICES.values())}],
        }
    if args.tensorboard:
        found["tensorboard"] = {
            "podSelector": {"matchLabels": {"app.kubernetes.io/name": "tensorboard"}},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [namespace_pods], "ports": _tcp(tensorboard.PORT)}],
        }
    return found


class JobNetworkPolicies(pulumi.ComponentResource):
    """Default-deny ingress in the job's namespace and what its pods need allowed."""

    def __init__(self, name: str, args: JobNetworkPoliciesArgs, opts: pulumi.ResourceOptions | None = None):
        args = JobNetworkPoliciesArgs.checked(args, type(self), name)
        super().__init__("trainstack:workload:JobNetworkPolicies", name, None, opts)
        kids = Children(self, name, opts, roles_were_names=False)
        for role, spec in policies(args).items():
            k8s.networking.v1.NetworkPolicy(
                **kids(role),
                metadata={"name": f"{args.job}-{role}", "namespace": args.namespace, "labels": {"app.kubernetes.io/managed-by": "trainstack"}},
                spec=spec,
            )
        self.register_outputs({})
