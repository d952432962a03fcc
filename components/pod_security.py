"""Least privilege for the pods trainstack renders: the container securityContext every
unprivileged container gets, and the Pod Security Standards labels of a namespace it creates.

Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards): `restricted`
asks of each container no privilege escalation, every capability dropped (NET_BIND_SERVICE alone
may be added back), the RuntimeDefault seccomp profile and a non-root user; `baseline` forbids
privileged containers, host namespaces, host paths and added capabilities beyond its list.
"""

from __future__ import annotations

from typing import Any, Literal

Level = Literal["privileged", "baseline", "restricted"]

POD_SECURITY_API = "pod-security.kubernetes.io"

# Every pod's own securityContext: RuntimeDefault seccomp for all its containers (a privileged
# container runs unconfined whatever the pod says).
POD_SECURITY: dict[str, Any] = {"seccompProfile": {"type": "RuntimeDefault"}}


def container_security(*add: str, non_root: int | None = None) -> dict[str, Any]:
    """The securityContext of an unprivileged container: no escalation, every capability
    dropped but `add` (each caller says why it adds one), RuntimeDefault seccomp; `non_root`: run
    as that user id and refuse to start as root (PSS restricted)."""
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"], **({"add": list(add)} if add else {})},
        "seccompProfile": {"type": "RuntimeDefault"},
        **({"runAsNonRoot": True, "runAsUser": non_root} if non_root is not None else {}),
    }


def namespace_labels(enforce: Level) -> dict[str, str]:
    """Admission enforces `enforce`; everything short of `restricted` is warned about and audited."""
    return {
        f"{POD_SECURITY_API}/enforce": enforce,
        f"{POD_SECURITY_API}/warn": "restricted",
        f"{POD_SECURITY_API}/audit": "restricted",
    }
