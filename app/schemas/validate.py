"""Strict schema validation of rendered Kubernetes objects, offline.

Built-in kinds are checked against the Kubernetes 1.32 strict JSON schemas shipped by the
`kubernetes-validate` package, and an API 1.32 does not serve against the schemas of the first minor
that does (catalog.DRA_API, resource.k8s.io/v1: 1.34, which every machine whose pods claim DRA
devices needs). Custom resources are checked against the `openAPIV3Schema` of the upstream CRDs
copied into `crds/`, made strict the way the API server prunes; where two versions of one CRD are
bundled (the DRA driver's ComputeDomain, 25.3.0 and 25.8.0), against each. Either way an unknown
field is an error, as with `kubectl apply --validate=strict`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource

from trainstack.core.catalog import DRA_API, DRA_API_KUBERNETES, KUBERNETES_VERSION
from trainstack.core.testing import SECRET

_DEFINITIONS_URI = "https://kubernetes.io/api/_definitions.json"  # the $id of _definitions.json
_OBJECT_META = {"$ref": f"{_DEFINITIONS_URI}#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}

# OpenAPI v3 keywords that mean the same in JSON Schema 2020-12.
_SAME_IN_JSON_SCHEMA = (
    "required",
    "enum",
    "pattern",
    "minimum",
    "maximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
)

# Built-in kinds that take no namespace: the 1.32 schemas do not record scope.
_CLUSTER_SCOPED_BUILTINS = frozenset(
    {
        ("", "Namespace"),
        ("", "Node"),
        ("", "PersistentVolume"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
        ("storage.k8s.io", "StorageClass"),
        ("storage.k8s.io", "CSIDriver"),
        ("storage.k8s.io", "CSINode"),
        ("storage.k8s.io", "VolumeAttachment"),
        ("scheduling.k8s.io", "PriorityClass"),
        ("node.k8s.io", "RuntimeClass"),
        ("networking.k8s.io", "IngressClass"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiregistration.k8s.io", "APIService"),
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"),
        ("certificates.k8s.io", "CertificateSigningRequest"),
    }
)

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


# APIs newer than KUBERNETES_VERSION, by group/version: the minor whose schemas check them.
_NEWER_APIS = {DRA_API: DRA_API_KUBERNETES}


@cache
def _definitions(minor: str = KUBERNETES_VERSION) -> dict[str, Any]:
    """kubernetes-validate's strict `_definitions.json` of Kubernetes `minor`: every built-in type, by name."""
    schemas = files("kubernetes_validate") / "kubernetes-json-schema"
    strict = schemas / f"v{minor}.0-local-strict" / "_definitions.json"
    return json.loads(strict.read_text())


@cache
def _registry(minor: str = KUBERNETES_VERSION) -> Registry:
    """A reference registry holding the built-in definitions, for `$ref`s from any schema."""
    return Resource.from_contents(_definitions(minor)) @ Registry()


@cache
def _builtin_kinds(minor: str = KUBERNETES_VERSION) -> dict[tuple[str, str, str], str]:
    """(group, version, kind) -> definition name, for every built-in top-level kind."""
    return {
        (gvk["group"], gvk["version"], gvk["kind"]): name
        for name, definition in _definitions(minor)["$defs"].items()
        for gvk in definition.get("x-kubernetes-group-version-kind", ())
    }


@lru_cache(maxsize=1)
def _crds() -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(group, kind) -> its CRDs, one per bundled version, for every CRD in `crds/`. Parsed once per content into a JSON
    copy in the user's cache (`validate` and `plan` check against them on every run; the JobSet
    CRD alone is 0.8 MB of YAML)."""
    texts = sorted((p.name, p.read_text()) for p in (files("trainstack.app.schemas") / "crds").iterdir() if p.name.endswith(".yaml"))
    digest = hashlib.sha256(json.dumps(texts).encode()).hexdigest()[:16]
    cached = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "trainstack" / f"crds-{digest}.json"
    try:
        documents = json.loads(cached.read_text())
    except (OSError, ValueError):
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        documents = [crd for _, text in texts for crd in yaml.load_all(text, Loader=loader)]
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps(documents))
        except (OSError, TypeError):
            pass  # a read-only home (or a value JSON cannot hold): parse again next time
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for crd in documents:
        found.setdefault((crd["spec"]["group"], crd["spec"]["names"]["kind"]), []).append(crd)
    return found


def crds_for(api_version: str, kind: str) -> list[dict[str, Any]]:
    """Every bundled CRD (one per version bundled) that defines `kind` in the group of `api_version`."""
    group, _, _ = api_version.rpartition("/")
    return _crds().get((group, kind), [])


def crd_for(api_version: str, kind: str) -> dict[str, Any] | None:
    """The (first) bundled CRD that defines `kind` in the group of `api_version`, or None."""
    return next(iter(crds_for(api_version, kind)), None)


def _python_pattern(pattern: str) -> str:
    """A CRD's (Go RE2) pattern as Python reads it: RE2 takes a flag group after `^` (Kueue's
    AdmissionCheck names: `^(?i)[a-z]...`), Python only at the start, where it means the same."""
    return "(?i)^" + pattern[len("^(?i)") :] if pattern.startswith("^(?i)") else pattern


def _strict(node: dict[str, Any], structural: bool = True) -> dict[str, Any]:
    """Translate an OpenAPI v3 CRD schema node to JSON Schema that rejects unknown fields.

    `structural` is False inside allOf/anyOf/oneOf/not: their `properties` only restate
    constraints, so they must not reject fields the structural schema declares.
    """
    out = {key: node[key] for key in _SAME_IN_JSON_SCHEMA if key in node}
    if "pattern" in out:
        out["pattern"] = _python_pattern(out["pattern"])
    for bound in ("minimum", "maximum"):  # OpenAPI v3.0's boolean exclusiveMinimum/Maximum
        exclusive = f"exclusive{bound.capitalize()}"
        if node.get(exclusive) is True and bound in out:
            out[exclusive] = out.pop(bound)
    types = ["integer", "string"] if node.get("x-kubernetes-int-or-string") else [node["type"]] if "type" in node else []
    if types:
        out["type"] = [*types, "null"] if node.get("nullable") else types
    if node.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    properties = {key: _strict(sub, structural) for key, sub in node.get("properties", {}).items()}
    if node.get("x-kubernetes-embedded-resource"):
        properties = {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            **properties,
            "metadata": _OBJECT_META,
        }
    if properties:
        out["properties"] = properties
    if "items" in node:
        out["items"] = _strict(node["items"], structural)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        out["additionalProperties"] = _strict(extra, structural)
    elif extra is not None:
        out["additionalProperties"] = extra
    elif structural and (properties or "object" in types) and not node.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    for junctor in ("allOf", "anyOf", "oneOf"):
        # An int-or-string node's anyOf is always [{type: integer}, {type: string}]: `type` says it.
        if junctor in node and not (junctor == "anyOf" and node.get("x-kubernetes-int-or-string")):
            out[junctor] = [_strict(sub, structural=False) for sub in node[junctor]]
    if "not" in node:
        out["not"] = _strict(node["not"], structural=False)
    return out


@cache
def _kind(api_version: str, kind: str) -> tuple[tuple[Draft202012Validator, ...], bool]:
    """The validators for one apiVersion and kind (one per bundled CRD version), and whether that
    kind is namespaced.

    Raises LookupError when neither Kubernetes (1.32, or the minor of a newer API) nor a bundled CRD serves that kind.
    """
    group, _, version = api_version.rpartition("/")
    crds = crds_for(api_version, kind)
    if crds:
        validators = []
        for crd in crds:
            served = {v["name"]: v for v in crd["spec"]["versions"] if v.get("served")}
            if version not in served:
                raise LookupError(f"the {kind} CRD serves {', '.join(served)}, not {version}")
            schema = _strict(served[version]["schema"]["openAPIV3Schema"])
            schema.setdefault("properties", {})["metadata"] = _OBJECT_META  # the CRD says only `type: object`
            validators.append(Draft202012Validator(schema, registry=_registry()))
        return tuple(validators), crds[0]["spec"]["scope"] == "Namespaced"
    minor = _NEWER_APIS.get(api_version, KUBERNETES_VERSION)
    name = _builtin_kinds(minor).get((group, version, kind))
    if name is None:
        raise LookupError(f"no schema for {api_version} {kind} in Kubernetes {minor} or the bundled CRDs")
    schema = {"$ref": f"{_DEFINITIONS_URI}#/$defs/{name}"}
    return (Draft202012Validator(schema, registry=_registry(minor)),), (group, kind) not in _CLUSTER_SCOPED_BUILTINS


def _path(parts: Iterable[str | int]) -> str:
    """A path like `spec.containers[0].image`, `metadata.labels['app.kubernetes.io/name']` or `(root)`."""
    path = ""
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            path += f".{part}" if path else part
        else:
            path += f"[{part!r}]"
    return path or "(root)"


def _describe(error: ValidationError) -> list[tuple[str, str]]:
    """(path, message) pairs for one error; an unknown-fields error gives one pair per field."""
    if error.validator == "additionalProperties" and error.validator_value is False and isinstance(error.schema, Mapping) and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        return [(_path([*error.absolute_path, key]), "unknown field") for key in error.instance if key not in known]
    return [(_path(error.absolute_path), error.message)]


def _checkable(value: Any) -> Any:
    """`value` without the fields a plan shows as `[secret]`: their content is the user's, not
    renderable offline (pulumi-kubernetes marks a Secret's whole `stringData` secret)."""
    if isinstance(value, dict):
        return {k: _checkable(v) for k, v in value.items() if v != SECRET}
    if isinstance(value, list):
        return [_checkable(v) for v in value]
    return value


def validate_object(obj: dict[str, Any]) -> list[str]:
    """Every schema error in one Kubernetes object, as `Kind/name: path: message`; empty when valid."""
    given = obj.get("metadata")
    metadata: dict[str, Any] = given if isinstance(given, dict) else {}
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    label = f"{kind or '<no kind>'}/{metadata.get('name') or '<no name>'}"
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return [f"{label}: (root): apiVersion and kind must be strings"]
    try:
        validators, namespaced = _kind(api_version, kind)
    except LookupError as error:
        return [f"{label}: (root): {error}"]
    checked = _checkable(obj)
    found = (f"{label}: {path}: {message}" for validator in validators for error in validator.iter_errors(checked) for path, message in _describe(error))
    problems = list(dict.fromkeys(found))
    if not namespaced and "namespace" in metadata:
        problems.append(f"{label}: metadata.namespace: {kind} is cluster-scoped and takes no namespace")
    return problems
