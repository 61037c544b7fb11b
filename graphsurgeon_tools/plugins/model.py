"""The plugin-spec model: what a parsed TOML spec holds (see :mod:`graphsurgeon_tools.plugins`
for the format). Frozen dataclasses plus :meth:`AttributeRules.apply`, which maps a node's
attributes to the plugin's.

Does NOT read files or TOML (:mod:`.parser`) and never changes a model.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

from graphsurgeon_tools.errors import ExitCode, OnnxToolError

__all__ = [
    "BUILTIN_SPECS",
    "AttributeRules",
    "ExtraInput",
    "InputRef",
    "InvalidSpecError",
    "MatchRule",
    "OutputRule",
    "PluginSpec",
]

_HERE = Path(__file__).resolve().parent
#: The specs shipped inside the package (package data): name -> file. ``DynamicTRTResize`` is
#: swap-plugin's default; the others are usable by name (``spec="gridsample"``, ``--spec nms``).
BUILTIN_SPECS = {
    "DynamicTRTResize": _HERE / "dynamic_trt_resize.toml",
    "gridsample": _HERE / "specs" / "gridsample.toml",
    "nms": _HERE / "specs" / "nms.toml",
}

InputRef = Union[int, str]


class InvalidSpecError(OnnxToolError):
    """A plugin spec file that cannot be used: bad TOML, unknown keys, wrong types (exit code 3)."""

    exit_code = ExitCode.INVALID_INPUT


@dataclass(frozen=True)
class MatchRule:
    """Which nodes a spec applies to. ``name_patterns`` empty means any name."""

    op_types: tuple[str, ...]
    name_patterns: tuple[str, ...] = ()
    attributes: dict[str, tuple[Any, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ExtraInput:
    """An input the plugin needs that the original node did not have."""

    name: str
    kind: str  # "constant" | "graph_input"
    dtype: str
    value: Optional[tuple[Any, ...]] = None  # kind == "constant" (flattened)
    shape: Optional[tuple[Union[int, str], ...]] = None


@dataclass(frozen=True)
class AttributeRules:
    """How the plugin's attributes (TensorRT PluginFields) come from the node's attributes."""

    copy: bool = True
    schema_defaults: bool = True
    keep: Optional[tuple[str, ...]] = None
    drop: tuple[str, ...] = ()
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    derive: dict[str, tuple[str, Any]] = field(default_factory=dict)  # new -> (from, equals)
    rename: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)
    set: dict[str, Any] = field(default_factory=dict)

    def apply(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Turn ``attrs`` (the node's attributes, defaults already filled) into the plugin's.

        Pure: returns a new dict, in a deterministic order (the order rules name them).
        Raises :class:`InvalidSpecError` when a ``values`` map has no entry for a value.
        """
        out = dict(attrs) if self.copy else {}
        if self.keep is not None:
            out = {name: out[name] for name in self.keep if name in out}
        for name in self.drop:
            out.pop(name, None)
        derived = {new: int(attrs.get(source) == equals) for new, (source, equals) in self.derive.items()}
        for name, mapping in self.values.items():
            if name in out:
                key = out[name].decode() if isinstance(out[name], bytes) else str(out[name])
                if key not in mapping:
                    raise InvalidSpecError(
                        f"attribute {name}={key!r} has no entry in the spec's [attributes.values.{name}] "
                        f"(known: {', '.join(sorted(mapping))})"
                    )
                out[name] = mapping[key]
        out.update(derived)
        out = {self.rename.get(name, name): value for name, value in out.items()}
        for name, value in self.defaults.items():
            out.setdefault(name, value)
        out.update(self.set)
        return out


@dataclass(frozen=True)
class OutputRule:
    """The type of one plugin output: copied from an input (``same_as_input``) or fixed."""

    same_as_input: Optional[int] = None
    dtype: Optional[str] = None
    rank: Optional[int] = None
    shape: Optional[tuple[Union[int, str], ...]] = None


@dataclass(frozen=True)
class PluginSpec:
    """One swap ``Op -> Plugin``, as parsed from TOML. See the module docstring for the format."""

    op_type: str
    domain: str
    plugin_version: str
    plugin_namespace: str
    handler: str
    match: MatchRule
    inputs: Optional[tuple[InputRef, ...]] = None  # None: all original inputs, in order
    input_attributes: dict[InputRef, str] = field(default_factory=dict)
    extra_inputs: tuple[ExtraInput, ...] = ()
    attributes: AttributeRules = field(default_factory=AttributeRules)
    outputs: tuple[OutputRule, ...] = ()
    source: str = "<memory>"  # the file it came from, for messages

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["input_attributes"] = {str(k): v for k, v in self.input_attributes.items()}
        return data
