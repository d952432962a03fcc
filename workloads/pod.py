"""Pod-spec pieces as data: what one concern (a GPUDirect stack, the storage, a launcher's
files) adds to the training pod, and how the pieces compose.

Everything here is plain Kubernetes JSON (camelCase keys, as `kubectl` would apply it), so a
test can check each piece on its own and validate the composed object against the schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trainstack.components.pod_security import container_security
from trainstack.core import names

# The main container of every training pod and the JobSet's one replicated job; the resiliency
# supervisor and `kubectl logs` address them by these names.
WORKLOAD_CONTAINER = "workload"
REPLICATED_JOB = names.REPLICATED_JOB

# GKE installs the NVIDIA driver's user-space libraries here on every GPU node; pods mount
# them at /usr/local/nvidia (cloud.google.com/kubernetes-engine/docs/how-to/gpus).
NVIDIA_HOST_DIR = "/home/kubernetes/bin/nvidia"
NVIDIA_DIR = "/usr/local/nvidia"
NVIDIA_VOLUME = "nvidia-libs"

Json = dict[str, Any]


@dataclass(frozen=True)
class PodParts:
    """What one concern adds to the training pod.

    Attributes:
        annotations: pod-template annotations.
        env: environment of the workload container.
        volumes: pod volumes.
        volume_mounts: mounts of the workload container.
        init_containers: init containers, in order; native sidecars carry
            `restartPolicy: Always` and keep running beside the workload.
        tolerations: pod tolerations.
        host_network: the pod runs in the node's network namespace (and resolves cluster names).
        privileged: the workload container runs privileged.
        after_init: variables the workload's shell exports after sourcing the NCCL plugin's
            own settings script, so they override it (as the recipes export them after it).
        resource_claims: the pod's DRA resource claims (`name`, `resourceClaimTemplateName`),
            each claimed by the workload container.
    """

    annotations: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    volumes: tuple[Json, ...] = ()
    volume_mounts: tuple[Json, ...] = ()
    init_containers: tuple[Json, ...] = ()
    tolerations: tuple[Json, ...] = ()
    host_network: bool = False
    privileged: bool = False
    after_init: Mapping[str, str] = field(default_factory=dict)
    resource_claims: tuple[Json, ...] = ()


def compose(*parts: PodParts) -> PodParts:
    """All pieces together, in order. A later piece's env value wins over an earlier one's
    (user settings come last); two pieces defining the same volume, mount path, init
    container or annotation differently is a bug, reported as a ValueError."""
    annotations: dict[str, str] = {}
    env: dict[str, str] = {}
    after_init: dict[str, str] = {}
    for part in parts:
        after_init.update(part.after_init)
        for key, value in part.annotations.items():
            if annotations.get(key, value) != value:
                raise ValueError(f"pod annotation {key!r} set twice with different values")
            annotations[key] = value
        env.update(part.env)
    volumes = _unique([v for p in parts for v in p.volumes], "name", "volume")
    mounts = _unique([m for p in parts for m in p.volume_mounts], "mountPath", "mount path")
    inits = _unique([c for p in parts for c in p.init_containers], "name", "init container")
    claims = _unique([c for p in parts for c in p.resource_claims], "name", "resource claim")
    tolerations = [t for p in parts for t in p.tolerations]
    return PodParts(
        annotations=annotations,
        env=env,
        volumes=tuple(volumes),
        volume_mounts=tuple(mounts),
        init_containers=tuple(inits),
        tolerations=tuple(t for i, t in enumerate(tolerations) if t not in tolerations[:i]),
        host_network=any(p.host_network for p in parts),
        privileged=any(p.privileged for p in parts),
        after_init=after_init,
        resource_claims=tuple(claims),
    )


def _unique(items: list[Json], key: str, what: str) -> list[Json]:
    seen: dict[str, Json] = {}
    for item in items:
        if item[key] in seen and seen[item[key]] != item:
            raise ValueError(f"{what} {item[key]!r} defined twice differently")
        seen[item[key]] = item
    return list(seen.values())


def env_list(env: Mapping[str, str]) -> list[Json]:
    """`{"A": "1"}` -> `[{"name": "A", "value": "1"}]`, in insertion order (later entries may
    refer to earlier ones as `$(A)`)."""
    return [{"name": name, "value": value} for name, value in env.items()]


def host_path(name: str, path: str) -> Json:
    return {"name": name, "hostPath": {"path": path}}


def empty_dir(name: str, **spec: str) -> Json:
    return {"name": name, "emptyDir": dict(spec)}


def mount(name: str, path: str, read_only: bool = False) -> Json:
    return {"name": name, "mountPath": path, **({"readOnly": True} if read_only else {})}


# The init container that copies a GPUDirect NCCL plugin into the pod (TCPXO, gIB).
PLUGIN_INSTALLER = "nccl-plugin-installer"


def plugin_installer(image: str, script: str, volume: Json) -> Json:
    """The init container that runs `script` (after `set -ex`) in the plugin image with
    `volume` mounted, to copy the plugin where the workload container reads it."""
    return {
        "name": PLUGIN_INSTALLER,
        "image": image,
        "command": ["/bin/sh", "-c"],
        "args": ["set -ex\n" + script],
        "volumeMounts": [volume],
        "securityContext": container_security(),
    }


def nvidia_libraries() -> PodParts:
    """The host's NVIDIA libraries at /usr/local/nvidia, as every GPU pod on GKE sees them."""
    return PodParts(
        volumes=(host_path(NVIDIA_VOLUME, NVIDIA_HOST_DIR),),
        volume_mounts=(mount(NVIDIA_VOLUME, NVIDIA_DIR),),
    )
