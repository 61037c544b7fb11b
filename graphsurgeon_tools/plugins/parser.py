"""Plugin specs from TOML: read, validate every key, type and range, build a :class:`~.model.PluginSpec`.

Every problem is one :class:`~.model.InvalidSpecError` line naming the file and the key; the
bounds themselves live in :mod:`.schema`. A spec that parses is complete: the swap never
meets a value it cannot use. Does NOT apply a spec to a model.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Union

from graphsurgeon_tools.core import dtypes
from graphsurgeon_tools.io.files import read_regular
from graphsurgeon_tools.plugins import schema
from graphsurgeon_tools.plugins.model import (
    BUILTIN_SPECS,
    AttributeRules,
    ExtraInput,
    InputRef,
    InvalidSpecError,
    MatchRule,
    OutputRule,
    PluginSpec,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["MAX_SPEC_BYTES", "builtin_spec", "builtin_specs", "load_spec", "parse_spec", "resolve_spec"]

#: A spec is a few hundred bytes; a file of megabytes is not one.
MAX_SPEC_BYTES = 1 << 20

_HANDLERS = ("generic", "resize")
# numpy/ONNX element type names a spec may use: the one dtype table's.
_DTYPES = dtypes.names()
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]*$")


def load_spec(path: Union[str, Path]) -> PluginSpec:
    """Read and validate a TOML plugin spec. Raises :class:`InvalidSpecError` naming the file.

    Only a regular file of at most :data:`MAX_SPEC_BYTES` is read (a FIFO would block, a
    device never end); the read is recorded for the write guard (io.files.read_regular)."""
    path = Path(path)
    data = read_regular(path, "plugin spec", InvalidSpecError, limit=MAX_SPEC_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidSpecError(
            f"cannot read plugin spec {path}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return parse_spec(text, source=str(path))


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())  # GridSample, grid_sample, grid-sample -> gridsample


def builtin_specs() -> dict[str, Path]:
    """The specs shipped with onnxtool: name -> the installed TOML file (package data)."""
    return dict(BUILTIN_SPECS)


def _builtin_name(name: str) -> Union[str, None]:
    return next((known for known in BUILTIN_SPECS if _key(known) == _key(name)), None)


def builtin_spec(name: str = "DynamicTRTResize") -> PluginSpec:
    """The spec shipped with onnxtool for ``name`` (:func:`builtin_specs`; case, ``-`` and ``_`` do not matter)."""
    known = _builtin_name(name)
    if known is None:
        raise InvalidSpecError(
            f"no built-in plugin spec named {name!r} (built in: {', '.join(BUILTIN_SPECS)}); "
            "pass spec=PATH for your own"
        )
    return load_spec(BUILTIN_SPECS[known])


def resolve_spec(spec: Union[str, Path]) -> PluginSpec:
    """``spec`` as a file when one exists at that path, else as a built-in name (``"gridsample"``).

    Neither: :func:`load_spec`'s InvalidSpecError (exit 3)."""
    path = Path(spec)
    absent = not path.exists() and not path.is_symlink()
    if absent and len(path.parts) == 1 and _builtin_name(str(spec)) is not None:
        return builtin_spec(str(spec))
    return load_spec(path)


def parse_spec(text: str, *, source: str = "<memory>") -> PluginSpec:
    """Parse TOML text into a :class:`PluginSpec`; every problem is one line naming ``source``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidSpecError(f"plugin spec {source} is not valid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays/inline tables recursively
        raise InvalidSpecError(
            f"plugin spec {source}: arrays or tables nest deeper than the {schema.MAX_DEPTH} levels a spec uses"
        ) from None
    if schema.nesting_depth(data) > schema.MAX_DEPTH:
        raise InvalidSpecError(
            f"plugin spec {source}: arrays or tables nest deeper than the {schema.MAX_DEPTH} levels a spec uses"
        )
    return _Parser(source).spec(data)


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, problem: str) -> InvalidSpecError:
        return InvalidSpecError(f"plugin spec {self.source}: {where}: {problem}")

    def table(self, data: Any, where: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail(where, f"expected a table, got {type(data).__name__}")
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise self.fail(where, f"unknown key(s) {', '.join(unknown)} (allowed: {', '.join(allowed)})")
        return data

    def string(self, value: Any, where: str, *, ident: bool = False, empty: bool = False) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string, got {value!r}")
        if not value and not empty:
            raise self.fail(where, "must not be empty")
        limit = schema.MAX_NAME_LENGTH if ident else 16 * schema.MAX_NAME_LENGTH
        if len(value) > limit:
            raise self.fail(where, f"a string of {len(value)} characters (at most {limit})")
        if ident and value and not _IDENT.match(value):
            raise self.fail(where, f"{value!r} is not a valid name")
        return value

    def strings(self, value: Any, where: str) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not items:
            raise self.fail(where, "expected a string or a non-empty list of strings")
        return tuple(self.string(item, where) for item in items)

    def scalar(self, value: Any, where: str) -> Any:
        problem = schema.attribute_value_problem(value)
        if problem:
            raise self.fail(where, problem)
        if isinstance(value, str):
            self.string(value, where, empty=True)
        return int(value) if isinstance(value, bool) else (list(value) if isinstance(value, list) else value)

    def keys(self, table: dict[str, Any], where: str) -> dict[str, Any]:
        """A table whose keys are attribute (or input) names."""
        for key in table:
            self.string(key, where, ident=True)
        return table

    def dtype(self, value: Any, where: str) -> str:
        if value not in _DTYPES:
            raise self.fail(where, f"unknown dtype {value!r} (known: {', '.join(_DTYPES)})")
        return value

    def ref(self, value: Any, where: str) -> InputRef:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise self.fail(where, f"an input is named by index or schema name, got {value!r}")
        if isinstance(value, str) and value.isascii() and value.isdigit():
            value = int(value)
        if isinstance(value, int):
            problem = schema.index_problem(value)
            if problem:
                raise self.fail(where, problem)
            return value
        self.string(value, where, ident=True)
        return value

    def dims(self, value: Any, where: str, *, named: bool = True) -> tuple[Union[int, str], ...]:
        if not isinstance(value, list):
            raise self.fail(where, f"a shape is a list of non-negative ints or dim names, got {value!r}")
        if len(value) > schema.MAX_RANK:
            raise self.fail(where, f"rank {len(value)} is above {schema.MAX_RANK}")
        for dim in value:
            problem = schema.dim_problem(dim, named=named)
            if problem:
                raise self.fail(where, problem)
        return tuple(value)

    def spec(self, data: dict[str, Any]) -> PluginSpec:
        self.table(data, "top level", ("plugin", "match", "inputs", "attributes", "outputs"))
        for required in ("plugin", "match"):
            if required not in data:
                raise self.fail("top level", f"missing the [{required}] table")
        plugin = self.table(
            data["plugin"],
            "[plugin]",
            ("op_type", "domain", "plugin_version", "plugin_namespace", "handler"),
        )
        if "op_type" not in plugin:
            raise self.fail("[plugin]", "missing op_type (the plugin's name)")
        op_type = self.string(plugin["op_type"], "[plugin].op_type", ident=True)
        domain = self.string(plugin.get("domain", "trt.plugins"), "[plugin].domain", ident=True)
        if domain in ("ai.onnx", "ai.onnx.ml"):
            raise self.fail("[plugin].domain", f"{domain!r} is a standard ONNX domain; a plugin needs its own")
        handler = self.string(plugin.get("handler", "generic"), "[plugin].handler")
        if handler not in _HANDLERS:
            raise self.fail("[plugin].handler", f"unknown handler {handler!r} (known: {', '.join(_HANDLERS)})")
        version = self.string(plugin.get("plugin_version", "1"), "[plugin].plugin_version")
        namespace = self.string(plugin.get("plugin_namespace", ""), "[plugin].plugin_namespace", empty=True)

        match = self.table(data["match"], "[match]", ("op_type", "name", "attributes"))
        if "op_type" not in match:
            raise self.fail("[match]", "missing op_type (which ONNX op to replace)")
        raw_conditions = match.get("attributes", {})
        if not isinstance(raw_conditions, dict):
            raise self.fail("[match.attributes]", f"expected a table attr = value, got {raw_conditions!r}")
        conditions = {}
        for name, allowed in self.keys(raw_conditions, "[match.attributes]").items():
            values = allowed if isinstance(allowed, list) else [allowed]
            if not values:
                raise self.fail(f"[match.attributes].{name}", "an empty list matches nothing")
            conditions[name] = tuple(self.scalar(v, f"[match.attributes].{name}") for v in values)
        match_rule = MatchRule(
            op_types=self.strings(match["op_type"], "[match].op_type"),
            name_patterns=self.strings(match["name"], "[match].name") if "name" in match else (),
            attributes=conditions,
        )

        inputs_table = self.table(data.get("inputs", {}), "[inputs]", ("order", "to_attributes", "extra"))
        if handler == "resize" and inputs_table:
            raise self.fail("[inputs]", "the resize handler builds its own inputs (X, scales | size_tensor)")
        order = None
        if "order" in inputs_table:
            if not isinstance(inputs_table["order"], list) or not inputs_table["order"]:
                raise self.fail("[inputs].order", "expected a non-empty list of input indices or names")
            order = tuple(self.ref(item, "[inputs].order") for item in inputs_table["order"])
        to_attrs_raw = inputs_table.get("to_attributes", {})
        if not isinstance(to_attrs_raw, dict):
            raise self.fail("[inputs].to_attributes", "expected a table input = attribute_name")
        to_attrs = {
            self.ref(key, "[inputs].to_attributes"): self.string(value, f"[inputs].to_attributes.{key}", ident=True)
            for key, value in to_attrs_raw.items()
        }
        extras: list[ExtraInput] = []
        raw_extras = inputs_table.get("extra", [])
        if not isinstance(raw_extras, list):
            raise self.fail("[[inputs.extra]]", "expected an array of tables")
        for i, raw in enumerate(raw_extras):
            where = f"[[inputs.extra]] #{i + 1}"
            item = self.table(raw, where, ("name", "kind", "dtype", "value", "shape"))
            kind = item.get("kind", "constant")
            if kind not in ("constant", "graph_input"):
                raise self.fail(where, f"kind must be 'constant' or 'graph_input', got {kind!r}")
            if "name" not in item or "dtype" not in item:
                raise self.fail(where, "needs name and dtype")
            name = self.string(item["name"], f"{where}.name", ident=True)
            if any(extra.name == name for extra in extras):
                raise self.fail(f"{where}.name", f"{name!r} is already the name of an earlier extra input")
            dtype = self.dtype(item["dtype"], f"{where}.dtype")
            value = item.get("value")
            if (
                kind == "constant"
                and "shape" in item
                and isinstance(item["shape"], list)
                and any(isinstance(d, str) for d in item["shape"])
            ):
                raise self.fail(where, "a constant's shape must be all ints")
            shape = self.dims(item["shape"], f"{where}.shape", named=kind == "graph_input") if "shape" in item else None
            if kind == "constant":
                if value is None:
                    raise self.fail(where, "a constant extra input needs a value")
                problem = schema.constant_problem(value, dtype, shape)
                if problem:
                    raise self.fail(f"{where}.value", problem)
                value = tuple(value if isinstance(value, list) else [value])
            elif value is not None:
                raise self.fail(where, "a graph_input extra input takes no value")
            elif shape is None:  # a graph input without a shape fails the ONNX checker
                raise self.fail(where, 'a graph_input extra input needs a shape (dim names allowed: ["n", 3])')
            extras.append(ExtraInput(name=name, kind=kind, dtype=dtype, value=value, shape=shape))

        attributes = self.attributes(data.get("attributes", {}))
        outputs = []
        raw_outputs = data.get("outputs", [])
        if not isinstance(raw_outputs, list):
            raise self.fail("[[outputs]]", "expected an array of tables")
        for i, raw in enumerate(raw_outputs):
            where = f"[[outputs]] #{i + 1}"
            item = self.table(raw, where, ("type", "dtype", "rank", "shape"))
            if ("type" in item) == ("dtype" in item):
                raise self.fail(where, 'give exactly one of type = "same_as_input:N" or dtype')
            same = None
            if "type" in item:
                m = re.fullmatch(r"same_as_input:([0-9]{1,6})", item["type"]) if isinstance(item["type"], str) else None
                if not m:
                    raise self.fail(where, f"type must look like 'same_as_input:0', got {item['type']!r}")
                same = int(m.group(1))
                problem = schema.index_problem(same)
                if problem:
                    raise self.fail(f"{where}.type", problem)
            rank = item.get("rank")
            if rank is not None and (not schema.is_int(rank) or not 0 <= rank <= schema.MAX_RANK):
                raise self.fail(where, f"rank must be an int in [0, {schema.MAX_RANK}], got {rank!r}")
            shape = self.dims(item["shape"], f"{where}.shape") if "shape" in item else None
            if shape is not None and rank is not None and len(shape) != rank:
                raise self.fail(where, f"shape has {len(shape)} dims but rank is {rank}")
            outputs.append(
                OutputRule(
                    same_as_input=same,
                    dtype=self.dtype(item["dtype"], f"{where}.dtype") if "dtype" in item else None,
                    rank=rank if rank is not None else (len(shape) if shape is not None else None),
                    shape=shape,
                )
            )
        return PluginSpec(
            op_type=op_type,
            domain=domain,
            plugin_version=version,
            plugin_namespace=namespace,
            handler=handler,
            match=match_rule,
            inputs=order,
            input_attributes=to_attrs,
            extra_inputs=tuple(extras),
            attributes=attributes,
            outputs=tuple(outputs),
            source=self.source,
        )

    def attributes(self, raw: Any) -> AttributeRules:
        keys = ("copy", "schema_defaults", "keep", "drop", "values", "derive", "rename", "defaults", "set")
        table = self.table(raw, "[attributes]", keys)
        for flag in ("copy", "schema_defaults"):
            if flag in table and not isinstance(table[flag], bool):
                raise self.fail(f"[attributes].{flag}", f"expected true or false, got {table[flag]!r}")
        reserved = {"plugin_version", "plugin_namespace"}

        def names(key: str) -> tuple[str, ...]:
            return tuple(self.string(v, f"[attributes].{key}", ident=True) for v in self.listish(table[key], key))

        def mapping(key: str) -> dict[str, Any]:
            value = table.get(key, {})
            if not isinstance(value, dict):
                raise self.fail(f"[attributes.{key}]", "expected a table")
            return self.keys(value, f"[attributes.{key}]")

        values = {}
        for name, table_map in mapping("values").items():
            if not isinstance(table_map, dict) or not table_map:
                raise self.fail(f"[attributes.values].{name}", "expected a non-empty table value = replacement")
            values[name] = {str(k): self.scalar(v, f"[attributes.values.{name}].{k}") for k, v in table_map.items()}
        derive = {}
        for name, rule in mapping("derive").items():
            rule = self.table(rule, f"[attributes.derive.{name}]", ("from", "equals"))
            if "from" not in rule or "equals" not in rule:
                raise self.fail(f"[attributes.derive.{name}]", "needs from and equals")
            derive[self.string(name, "[attributes.derive]", ident=True)] = (
                self.string(rule["from"], f"[attributes.derive.{name}].from", ident=True),
                self.scalar(rule["equals"], f"[attributes.derive.{name}].equals"),
            )
        rename = {k: self.string(v, f"[attributes.rename].{k}", ident=True) for k, v in mapping("rename").items()}
        targets = list(rename.values())
        twice = sorted({t for t in targets if targets.count(t) > 1})
        if twice:
            raise self.fail("[attributes.rename]", f"several attributes renamed to {twice[0]!r}")
        defaults = {k: self.scalar(v, f"[attributes.defaults].{k}") for k, v in mapping("defaults").items()}
        forced = {k: self.scalar(v, f"[attributes.set].{k}") for k, v in mapping("set").items()}
        clash = reserved & (set(rename.values()) | set(defaults) | set(forced) | set(derive))
        if clash:
            raise self.fail("[attributes]", f"{', '.join(sorted(clash))} come from [plugin], not [attributes]")
        return AttributeRules(
            copy=table.get("copy", True),
            schema_defaults=table.get("schema_defaults", True),
            keep=names("keep") if "keep" in table else None,
            drop=names("drop") if "drop" in table else (),
            values=values,
            derive=derive,
            rename=rename,
            defaults=defaults,
            set=forced,
        )

    def listish(self, value: Any, key: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(f"[attributes].{key}", f"expected a list of attribute names, got {value!r}")
        if not value:
            hint = "; copy = false starts from no attributes" if key == "keep" else "; leave the key out"
            raise self.fail(f"[attributes].{key}", "an empty list" + hint)
        return value
