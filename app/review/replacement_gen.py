"""Generate `app/review/replacement_data.py`: which input changes make the pinned providers replace a resource.

Run it against fetched checkouts (bare git dirs are read with `git show`; nothing here is needed by the
tests or at run time):

    python -m trainstack.app.review.replacement_gen --tpg DIR --gcp DIR --k8s DIR --bridge DIR

- `--tpg`: hashicorp/terraform-provider-google-beta, the provider pulumi-gcp bridges (pulumi-gcp
  `provider/go.mod` replaces it with its `upstream` submodule). For each resource type the shipped
  plans create, every field with `ForceNew: true`, nested blocks included, read from the Go schema
  literals (following the helper functions and package variables they are built from).
- `--gcp`: pulumi/pulumi-gcp: `provider/cmd/pulumi-resource-gcp/bridge-metadata.json` maps the
  Terraform type to the Pulumi token; `provider/resources.go` gives the bridge's per-resource
  `DeleteBeforeReplace` and explicit `AutoName` fields (`SetAutonaming` names every input `name`).
- `--k8s`: pulumi/pulumi-kubernetes `provider/pkg/provider/diff.go`: the force-new properties by
  group, version and kind.
- the installed pulumi_gcp SDK names each field as the program records it (camelCase, lists of many
  pluralised by the bridge).
- `--bridge`: pulumi/pulumi-terraform-bridge, only for the commit recorded beside the autonaming rule.

The resource types come from the shipped plans (`trainstack plan --all`, rendered here in-process).

Versions (a departure, written down): the rule is to read terraform-provider-google-beta at the commit
of pulumi-gcp's `upstream` submodule at the tag of the installed pulumi_gcp. The newest snapshots
available when this was generated predate the installed versions: pulumi-gcp's newest tag there is
v9.35.0 (its `upstream` is terraform-provider-google-beta v7.45.0, 3dc173a), while pulumi_gcp 10.2.0 is
installed, which bridges the provider's v8 line (its SDK no longer has the resources the v8 upgrade guide
removes, e.g. `beyondcorp.AppConnection`). The table is therefore read at terraform-provider-google-beta's
newest commit, on the v8 line (after c48a71b, "Merge feature branch major release 8.0.0"; recorded in
SOURCES), with the field names of the installed SDK; pulumi-kubernetes likewise at its newest commit
(4.32.0 and later) for an installed 4.34.2. SOURCES records both the commits read and the versions installed, and a test
fails when the installed versions move; regenerate from the exact tags when a snapshot has them.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from pprint import pformat
from typing import Any

from trainstack.app.deploy.stacks import raw_stack_config, stack_names
from trainstack.app.plan.plan import render

OUT = Path(__file__).with_name("replacement_data.py")


# ---------------------------------------------------------------------------------------------
# Reading a bare git dir


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=True).stdout


_CACHE: dict[tuple[Path, str], str] = {}


def _show(repo: Path, path: str) -> str:
    if (repo, path) not in _CACHE:
        _CACHE[(repo, path)] = _git(repo, "show", f"HEAD:{path}")
    return _CACHE[(repo, path)]


def _show_all(repo: Path, paths: list[str]) -> dict[str, str]:
    """Many files at HEAD through one `git cat-file --batch`."""
    wanted = "".join(f"HEAD:{p}\n" for p in paths).encode()
    data = subprocess.run(["git", f"--git-dir={repo}", "cat-file", "--batch"], input=wanted, capture_output=True, check=True).stdout
    out, at = {}, 0
    for path in paths:
        header_end = data.index(b"\n", at)
        size = int(data[at:header_end].split()[2])
        out[path] = data[header_end + 1 : header_end + 1 + size].decode()
        at = header_end + 1 + size + 1
    return out


def _head(repo: Path) -> str:
    return _git(repo, "rev-parse", "HEAD").strip()


# ---------------------------------------------------------------------------------------------
# A small reader for Go composite literals


def _skip_string(src: str, i: int) -> int:
    """Index after the string, rune or raw string starting at src[i]."""
    quote = src[i]
    if quote == "`":
        return src.index("`", i + 1) + 1
    j = i + 1
    while src[j] != quote:
        j += 2 if src[j] == "\\" else 1
    return j + 1


def _strip_comments(src: str) -> str:
    out, i = [], 0
    while i < len(src):
        c = src[i]
        if c in "\"'`":
            j = _skip_string(src, i)
            out.append(src[i:j])
            i = j
        elif src.startswith("//", i):
            i = src.find("\n", i)
            i = len(src) if i < 0 else i
        elif src.startswith("/*", i):
            i = src.index("*/", i) + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _close(src: str, i: int) -> int:
    """Index of the bracket closing the one at src[i]."""
    depth = 0
    while True:
        c = src[i]
        if c in "\"'`":
            i = _skip_string(src, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1


def _split_top(body: str, sep: str = ",") -> list[str]:
    """Split at top-level separators (outside brackets and strings)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(body):
        c = body[i]
        if c in "\"'`":
            i = _skip_string(body, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(body[start:i])
            start = i + 1
        i += 1
    parts.append(body[start:])
    return [p.strip() for p in parts if p.strip()]


def _key_value(item: str) -> tuple[str, str] | None:
    """`Key: value` at top level (the first colon outside brackets and strings)."""
    depth, i = 0, 0
    while i < len(item):
        c = item[i]
        if c in "\"'`":
            i = _skip_string(item, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == ":" and depth == 0 and not item.startswith(":=", i) and not item.startswith("=", i + 1):
            return item[:i].strip(), item[i + 1 :].strip()
        i += 1
    return None


def _braces(expr: str) -> str | None:
    """The inside of a composite literal `Type{...}` (or `&Type{...}`), else None."""
    m = re.match(r"&?[\w.\[\]*]*\{", expr)
    if not m:
        return None
    start = m.end() - 1
    end = _close(expr, start)
    return expr[start + 1 : end] if expr[end + 1 :].strip() == "" else None


@dataclass
class Field:
    """One Terraform schema field: whether it forces a new resource, is a list of many, and its sub-fields."""

    force_new: bool
    many: bool
    computed_only: bool
    kind: str
    children: dict[str, Field]


class GoPackages:
    """The Go sources of a provider, searched for functions and package variables by name."""

    def __init__(self, repo: Path, dirs: list[str]):
        paths = [p for d in dirs for p in _git(repo, "ls-tree", "--name-only", "HEAD", f"{d}/").split() if p.endswith(".go") and not p.endswith("_test.go")]
        self.sources = {path: _strip_comments(text) for path, text in _show_all(repo, paths).items()}

    def _find(self, pattern: str) -> tuple[str, int] | None:
        regex = re.compile(pattern, re.MULTILINE)
        for text in self.sources.values():
            m = regex.search(text)
            if m:
                return text, m.end()
        return None

    def function(self, name: str) -> tuple[list[str], str]:
        """Parameter names and body of `func name(...)`."""
        found = self._find(rf"^func {re.escape(name)}\(")
        if not found:
            raise KeyError(f"func {name}")
        text, at = found
        params_end = _close(text, at - 1)
        params = [p.split()[0] for p in _split_top(text[at:params_end]) if p.split()]
        open_brace = text.index("{", params_end)
        return params, text[open_brace + 1 : _close(text, open_brace)]

    def variable(self, name: str) -> str:
        found = self._find(rf"^(?:var )?\s*{re.escape(name)}\s*=\s*(?=[&\w\[])")  # `var x = ` or inside `var ( ... )`
        if not found:
            raise KeyError(f"var {name}")
        text, at = found
        open_brace = text.index("{", at)
        return text[at : _close(text, open_brace) + 1]


class SchemaReader:
    """Evaluates the expressions a resource's schema is built from, into Fields."""

    def __init__(self, go: GoPackages):
        self.go = go

    def resource(self, expr: str, env: dict[str, str]) -> dict[str, Field]:
        """The fields of a `*schema.Resource` expression."""
        expr = self._resolve(expr, env)
        inner = _braces(expr)
        if inner is None:
            body, call_env = self._call(expr, env)
            return self.resource(self._returned(body), call_env)
        for item in _split_top(inner):
            kv = _key_value(item)
            if kv and kv[0] == "Schema":
                return self.schema_map(kv[1], env)
        return {}

    def schema_map(self, expr: str, env: dict[str, str]) -> dict[str, Field]:
        """The fields of a `map[string]*schema.Schema` expression."""
        expr = self._resolve(expr, env)
        if expr.startswith("tpgresource.MergeSchemas("):
            merged: dict[str, Field] = {}
            for arg in _split_top(expr[expr.index("(") + 1 : _close(expr, expr.index("("))]):
                merged.update(self.schema_map(arg, env))
            return merged
        inner = _braces(expr)
        if inner is None:
            body, call_env = self._call(expr, env)
            return self.schema_map(self._returned(body), call_env)
        fields = {}
        for item in _split_top(inner):
            kv = _key_value(item)
            if kv and kv[0].startswith('"'):
                fields[json.loads(kv[0])] = self.field(kv[1], env)
        return fields

    def field(self, expr: str, env: dict[str, str]) -> Field:
        """One `*schema.Schema` expression (a literal or a helper returning one)."""
        expr = self._resolve(expr, env)
        inner = _braces(expr)
        if inner is None:
            body, call_env = self._call(expr, env)
            return self.field(self._returned(body), call_env)
        attrs = dict(kv for kv in (_key_value(i) for i in _split_top(inner)) if kv)
        kind = attrs.get("Type", "").rsplit(".", 1)[-1]
        children: dict[str, Field] = {}
        elem = attrs.get("Elem")
        if elem is not None:
            resolved = self._resolve(elem, env)
            if not re.match(r"&?schema\.Schema\{", resolved):
                children = self.resource(resolved, env)
        return Field(
            force_new=attrs.get("ForceNew") == "true",
            many=kind in ("TypeList", "TypeSet") and attrs.get("MaxItems") != "1",
            computed_only=attrs.get("Computed") == "true" and attrs.get("Optional") != "true" and attrs.get("Required") != "true",
            kind=kind,
            children=children,
        )

    def _resolve(self, expr: str, env: dict[str, str]) -> str:
        """An identifier (a parameter or a package variable, qualified or not) to its expression."""
        expr = expr.strip()
        while re.fullmatch(r"[\w.]+", expr):
            expr = env[expr] if expr in env else self.go.variable(expr.rsplit(".", 1)[-1])
        return expr

    def _call(self, expr: str, env: dict[str, str]) -> tuple[str, dict[str, str]]:
        m = re.match(r"([\w.]+)\(", expr)
        if not m:
            raise ValueError(f"cannot read {expr[:80]!r}")
        params, body = self.go.function(m.group(1).rsplit(".", 1)[-1])
        open_paren = m.end() - 1
        args = _split_top(expr[open_paren + 1 : _close(expr, open_paren)])
        # Identifiers resolve when used; a variadic parameter takes the first of its arguments.
        call_env = {p: env.get(a, a) for p, a in zip(params, args, strict=False)}
        return body, call_env

    @staticmethod
    def _returned(body: str) -> str:
        """The expression the function body's last top-level `return` gives, following a local
        `x := ...` assignment it names."""
        depth, i, last = 0, 0, -1
        while i < len(body):
            c = body[i]
            if c in "\"'`":
                i = _skip_string(body, i)
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif depth == 0 and body.startswith("return ", i) and (i == 0 or not (body[i - 1].isalnum() or body[i - 1] == "_")):
                last = i
            i += 1
        if last < 0:
            raise ValueError("no return")
        rest = body[last + len("return ") :].lstrip()
        line = rest.split("\n", 1)[0].strip()
        if re.fullmatch(r"\w+", line):
            assigned = re.search(rf"^\s*{line}\s*:?=\s*", body, re.MULTILINE)
            if assigned:
                start = assigned.end()
                open_brace = body.index("{", start)
                return body[start : _close(body, open_brace) + 1]
        if "{" not in line and "(" not in line:
            return line
        first = min(j for j in (rest.find("{"), rest.find("(")) if j >= 0)
        return rest[: _close(rest, first) + 1].strip()


# ---------------------------------------------------------------------------------------------
# Terraform fields to the input paths the plan records


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


class PulumiNames:
    """Pulumi property names of Terraform fields, read from the installed pulumi_gcp SDK's Args classes
    (the bridge camel-cases and pluralises lists of many; the SDK is the record of what it did for the
    version installed)."""

    @staticmethod
    def properties(token: str) -> dict[str, tuple[str, type | None]]:
        module, name = token.split(":")[1:]
        return PulumiNames._of(getattr(importlib.import_module(f"pulumi_gcp.{module.split('/')[0]}"), f"{name}Args"))

    @staticmethod
    def _of(cls: type) -> dict[str, tuple[str, type | None]]:
        """python name -> (Pulumi name, the Args class of its block, if it is one)."""
        package = cls.__module__.rsplit(".", 1)[0]
        inputs = importlib.import_module(package + "._inputs") if importlib.util.find_spec(package + "._inputs") else None
        out = {}
        for attr, value in vars(cls).items():
            getter = value.fget if isinstance(value, property) else None
            if getter is not None and hasattr(getter, "_pulumi_name"):
                block = re.search(r"ForwardRef\('(\w+Args)'\)", str(getter.__annotations__.get("return")))
                out[attr] = (getter._pulumi_name, getattr(inputs, block.group(1)) if block and inputs else None)
        return out

    @staticmethod
    def nested(prop: tuple[str, type | None]) -> dict[str, tuple[str, type | None]]:
        return PulumiNames._of(prop[1]) if prop[1] is not None else {}

    @staticmethod
    def name(tf: str, props: dict[str, tuple[str, type | None]]) -> str | None:
        """The python name of Terraform field `tf`: itself or its plural."""
        for candidate in (tf, tf + "s", tf + "es", tf[:-1] + "ies" if tf.endswith("y") else None):
            if candidate and candidate in props:
                return candidate
        return None


def force_new_paths(fields: dict[str, Field], props: dict[str, Any], names: type[PulumiNames], prefix: str = "") -> Iterator[tuple[str, str]]:
    """(recorded input path, "value" or "block") for each ForceNew field.

    The plugin SDK (helper/schema, `schemaMap.diff`) applies a field's ForceNew to every change of a
    value, a map or a list or set of values; on a list or set of blocks it applies to the count only:
    adding or removing a block replaces, a change inside one follows the nested fields' own ForceNew."""
    for tf, field in sorted(fields.items()):
        if field.computed_only:
            continue
        python = names.name(tf, props)
        if python is None:
            continue  # not an input of the Pulumi resource (e.g. a field the bridge drops)
        path = f"{prefix}.{props[python][0]}" if prefix else props[python][0]
        if field.force_new:
            yield path, "block" if field.children else "value"
        if field.children:
            yield from force_new_paths(field.children, names.nested(props[python]), names, path)


# ---------------------------------------------------------------------------------------------
# The resource types of the shipped plans


def plan_types() -> set[str]:
    """Every custom resource type any shipped stack's plan registers."""
    types: set[str] = set()
    for stack in stack_names():
        types |= {r["type"] for r in render(stack, raw_stack_config(stack)).resources if r["custom"]}
    return types


def _registrations(tpg: Path, wanted: set[str]) -> dict[str, tuple[str, str]]:
    """Terraform type -> (its Go source file, the `Schema:` expression it registers), for the `wanted` types."""
    found = {}
    pattern = "|".join(sorted(wanted))
    for line in _git(tpg, "grep", "-l", "-E", rf'Name: +"({pattern})"', "HEAD", "--", "google-beta/services").splitlines():
        path = line.split(":", 1)[1]
        text = _strip_comments(_show(tpg, path))
        for m in re.finditer(r"registry\.Schema\{", text):
            inner = text[m.end() : _close(text, m.end() - 1)]
            attrs = dict(kv for kv in (_key_value(i) for i in _split_top(inner)) if kv)
            if attrs.get("Type") in ("registry.SchemaTypeResource", "registry.SchemaTypeIAMResource"):
                found[json.loads(attrs["Name"])] = (path, attrs["Schema"])
    return found


def _bridge_resource_infos(gcp: Path) -> dict[str, str]:
    """Terraform type -> its `ResourceInfo` literal in pulumi-gcp's resources.go."""
    text = _strip_comments(_show(gcp, "provider/resources.go"))
    infos: dict[str, str] = {}
    for m in re.finditer(r'^\s*"(google_\w+)":\s*\{', text, re.MULTILINE):
        infos.setdefault(m.group(1), text[m.end() - 1 : _close(text, m.end() - 1) + 1])
    return infos


def generate(tpg: Path, gcp: Path, k8s: Path, bridge: Path) -> str:
    types = plan_types()
    metadata = json.loads(_show(gcp, "provider/cmd/pulumi-resource-gcp/bridge-metadata.json"))["auto-aliasing"]["resources"]
    token_to_tf = {v["current"]: tf for tf, v in metadata.items() if "current" in v}
    names = PulumiNames
    registered = _registrations(tpg, {token_to_tf[t] for t in types if t.startswith("gcp:")})
    infos = _bridge_resource_infos(gcp)
    services = sorted({str(Path(path).parent) for path, _ in registered.values()})  # with tpgresource for shared helpers
    reader = SchemaReader(GoPackages(tpg, [*services, "google-beta/tpgresource", "google-beta/tpgiamresource"]))

    gcp_rules: dict[str, dict[str, Any]] = {}
    for token in sorted(t for t in types if t.startswith("gcp:")):
        tf = token_to_tf[token]
        path, expr = registered[tf]
        fields = reader.resource(expr, {})
        props = names.properties(token)
        info = infos.get(tf, "")
        autonamed = set(re.findall(r'"(\w+)":\s*(?:tfbridge\.|info\.)?AutoName\(', info))
        name_field = fields.get("name")
        if name_field and name_field.kind == "TypeString" and not name_field.computed_only and not re.search(r'"name":', info):
            autonamed.add("name")
        identity = sorted(
            f for f, fld in fields.items() if fld.force_new and not fld.computed_only and (f == "name" or f.endswith("_id")) and f not in autonamed
        )
        gcp_rules[token] = {
            "terraform": tf,
            "source": path,
            "forceNew": tuple(sorted({p for p, kind in force_new_paths(fields, props, names) if kind == "value"})),
            "forceNewBlocks": tuple(sorted({p for p, kind in force_new_paths(fields, props, names) if kind == "block"})),
            "autonamed": tuple(sorted(props[f][0] for f in autonamed if f in props)),
            "identity": tuple(sorted(props[f][0] for f in identity if f in props)),
            "deleteBeforeReplace": bool(re.search(r"DeleteBeforeReplace:\s*true", info)),
        }

    diff_go = _strip_comments(_show(k8s, "provider/pkg/provider/diff.go"))
    kube_rules = _kubernetes_rules(diff_go, {t for t in types if t.startswith("kubernetes:")})

    sources = {
        "terraform-provider-google-beta": {"repo": "hashicorp/terraform-provider-google-beta", "commit": _head(tpg), "license": "MPL-2.0"},
        "pulumi-gcp": {"repo": "pulumi/pulumi-gcp", "commit": _head(gcp), "installed": version("pulumi_gcp")},
        "pulumi-kubernetes": {
            "repo": "pulumi/pulumi-kubernetes",
            "commit": _head(k8s),
            "path": "provider/pkg/provider/diff.go",
            "installed": version("pulumi_kubernetes"),
        },
        "pulumi-terraform-bridge": {
            "repo": "pulumi/pulumi-terraform-bridge",
            "commit": _head(bridge),
            "path": "pkg/tfbridge/info/autonaming.go, pkg/tfbridge/schema.go",
        },
    }
    return _render_module(sources, gcp_rules, kube_rules, types)


def _go_properties(diff_go: str, expr: str) -> list[str]:
    """The property strings of a `properties{...}` expression, an `append(...)` or a named list."""
    expr = expr.strip()
    if expr.startswith("append("):
        out = []
        for arg in _split_top(expr[len("append(") : _close(expr, len("append"))]):
            out += _go_properties(diff_go, arg.removesuffix("..."))
        return out
    call = re.fullmatch(r"(\w+)\((.*)\)", expr, re.DOTALL)
    if call:
        m = re.search(rf"^func {call.group(1)}\(([^)]*)\)[^{{]*\{{", diff_go, re.MULTILINE)
        assert m, call.group(1)
        body = diff_go[m.end() : _close(diff_go, m.end() - 1)]
        literal = re.search(r"properties\{", body)
        assert literal
        items = _split_top(body[literal.end() : _close(body, literal.end() - 1)])
        out = []
        for prefix_arg in _split_top(call.group(2)):
            prefix = json.loads(prefix_arg)
            out += [prefix + json.loads(i.split("+", 1)[1]) for i in items]
        return out
    if re.fullmatch(r"\w+", expr):
        m = re.search(rf"^var {expr}\s*=\s*", diff_go, re.MULTILINE)
        assert m, expr
        rest = diff_go[m.end() :]
        end = _close(rest, min(i for i in (rest.find("("), rest.find("{")) if i >= 0))
        return _go_properties(diff_go, rest[: end + 1])
    inner = _braces(expr)
    assert inner is not None, expr
    return [json.loads(i) for i in _split_top(inner)]


def _kubernetes_rules(diff_go: str, types: set[str]) -> dict[str, tuple[str, ...]]:
    """Kubernetes type token -> force-new paths (`.spec.csi` as `spec.csi`; `[*]` kept)."""
    metadata = [p.replace(".metadata", "metadata", 1) for p in _go_properties(diff_go, 'metadataForceNewProperties(".metadata")')]
    groups_at = re.search(r"^var forceNew = _groups\{", diff_go, re.MULTILINE)
    assert groups_at
    groups_text = diff_go[groups_at.end() - 1 : _close(diff_go, groups_at.end() - 1) + 1]
    core_at = re.search(r"^var core = _versions\{", diff_go, re.MULTILINE)
    assert core_at
    core_text = diff_go[core_at.end() - 1 : _close(diff_go, core_at.end() - 1) + 1]

    def kinds(versions_text: str) -> dict[tuple[str, str], str]:
        out = {}
        for item in _split_top(versions_text[1:-1]):
            kv = _key_value(item)
            if not kv:
                continue
            ver = json.loads(kv[0])
            body = kv[1][kv[1].index("{") + 1 : _close(kv[1], kv[1].index("{"))]
            for kind_item in _split_top(body):
                kkv = _key_value(kind_item)
                if kkv:
                    out[(ver, json.loads(kkv[0]))] = kkv[1]
        return out

    table: dict[tuple[str, str, str], str] = {}
    for item in _split_top(groups_text[1:-1]):
        kv = _key_value(item)
        if not kv:
            continue
        group = json.loads(kv[0])
        versions_text = core_text if kv[1] == "core" else kv[1][kv[1].index("{") :]
        for (ver, kind), expr in kinds(versions_text).items():
            table[(group, ver, kind)] = expr
    rules: dict[str, tuple[str, ...]] = {"*": tuple(metadata)}
    for token in sorted(types):
        if token.startswith("kubernetes:helm.sh/"):
            continue
        _, gv, kind = token.split(":")
        group, _, ver = gv.rpartition("/")
        group = "" if group == "core" else group
        found = table.get((group or "core", ver, kind)) or table.get((group, ver, kind))
        if found:
            rules[token] = tuple(p.lstrip(".") for p in _go_properties(diff_go, found))
    config_map = re.search(r"IsConfigMap\(obj\).*?properties\{([^}]*)\}", diff_go, re.DOTALL)
    assert config_map
    rules["kubernetes:core/v1:ConfigMap"] = tuple(sorted(json.loads(p).lstrip(".") for p in _split_top(config_map.group(1))))
    return rules


def _render_module(sources: dict[str, Any], gcp: dict[str, Any], kube: dict[str, Any], types: set[str]) -> str:
    return (
        '"""Generated by `python -m trainstack.app.review.replacement_gen` (app/review/replacement_gen.py): do not edit.\n\n'
        "Which input changes make the pinned providers replace a resource, for every resource type the shipped\n"
        "plans create. Facts (field names, ForceNew flags) read from the sources below; no code copied.\n"
        "Which commits were read for which installed versions, and why: replacement_gen.py's docstring (Versions).\n"
        '"""\n\n'
        "from typing import Any\n\n"
        f"SOURCES: dict[str, dict[str, str]] = {pformat(sources, width=110, sort_dicts=True)}\n\n"
        "# Pulumi token -> Terraform type, its source file, the ForceNew input paths (any change at or under one\n"
        "# replaces), the ForceNew blocks (adding or removing one replaces), the inputs the bridge autonames,\n"
        "# the name-like ForceNew inputs it does not, and the bridge's DeleteBeforeReplace.\n"
        f"GCP: dict[str, dict[str, Any]] = {pformat(gcp, width=110, sort_dicts=True)}\n\n"
        '# Kubernetes type token -> force-new paths; "*" applies to every object; `[*]` is any list element.\n'
        f"KUBERNETES: dict[str, tuple[str, ...]] = {pformat(kube, width=110, sort_dicts=True)}\n\n"
        "# Every custom resource type the shipped plans registered when this was generated.\n"
        f"PLAN_TYPES: tuple[str, ...] = {pformat(tuple(sorted(types)), width=110)}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for flag in ("tpg", "gcp", "k8s", "bridge"):
        parser.add_argument(f"--{flag}", type=Path, required=True)
    args = parser.parse_args()
    OUT.write_text(generate(args.tpg, args.gcp, args.k8s, args.bridge))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
