"""An unmodified ``nn.Module`` as ``validate``'s reference: routed resizes, the candidate's per-site factors.

``RoutedModuleReference(module, label, candidate)`` is a
:class:`graphsurgeon_tools.validation.references.Reference`; validate gets it from the
module runner the PyTorch side registers, without importing torch. On its first run it runs the module at the
factors written in its code with every resize routed
(:mod:`exporters.routing`) and pairs the calls with the candidate's sites
(:func:`exporters.site_mapping.map_sites`); from then on each run gives every
site exactly what the candidate's feeds give the paired node::

    graph input driving the site      [1, 1, fh, fw] | [fh, fw] | [f] | f   -> factors (fh, fw)
    sizes / size tensor               int vector | tensor of shape (.., h, w) -> OutputSize((h, w))
    scales into a plugin's in-graph size tensor                             -> FlooredSize((fh, fw))
    constant or computed scales                                         -> the code's factor

Sites fed by a graph input are the *free* sites; the others keep their factor.

Requires: data arrays in the candidate's graph-input order (as validate passes
them); the candidate exported from this module (or a rewrite of such an export).
Ensures: outputs are the module's, flattened in the order the exporters use
(``torch.utils._pytree`` leaves; non-tensor leaves such as ``None`` dropped), as
``(f"output_{i}", array)``. A candidate that disagrees with the module site by
site raises :class:`~exporters.site_mapping.SiteMappingError` (exit 1, one line).
Asked for a factor while no site is free, ``run`` raises ``RunFailed``: a factor
that drives nothing passes nothing. :meth:`localise` names the first site whose
output differs and whether its input already did.
Does NOT: guess the old ``module(*data, scales)`` convention (that is
``python-scales:``, handled by validate), or keep tensors between runs except
for :meth:`localise`, which re-runs the last point recording site tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np
import onnx
import torch
from torch.utils import _pytree

from exporters.routing import FlooredSize, OutputSize, ResizeCall, ResizeRouter
from exporters.site_mapping import SiteMapping, candidate_sites, map_sites
from graphsurgeon_tools.validation.ports import model_ports
from graphsurgeon_tools.validation.references import Reference, RunFailed

__all__ = ["Localisation", "RoutedModuleReference", "flatten_outputs", "module_dtype", "site_values"]


def flatten_outputs(result: Any) -> list[Any]:
    """The tensors of a (nested) module result, in the order the torch exporters write graph outputs."""
    return [leaf for leaf in _pytree.tree_leaves(result) if isinstance(leaf, torch.Tensor)]


def site_values(value: np.ndarray, spatial: int, whole_factors: bool = False) -> Optional[Any]:
    """What one scales/sizes feed gives a site: spatial factors, an :class:`OutputSize`, or None (unusable).

    ``whole_factors``: an integer feed holds factors, not sizes (make_dynamic_scale layout="factor":
    sizes = Shape(X)[-k:] * factor in the graph)."""
    value = np.asarray(value)
    if whole_factors and value.ndim <= 1 and np.issubdtype(value.dtype, np.integer) and value.size in (1, spatial):
        flat = [float(v) for v in value.reshape(-1)]
        return tuple(flat) if len(flat) == spatial else (flat[0],) * spatial
    if value.ndim == 0 and np.issubdtype(value.dtype, np.floating):
        return (float(value),) * spatial
    if value.ndim == 1 and np.issubdtype(value.dtype, np.floating):
        if value.size >= spatial + 2 or value.size == spatial:
            return tuple(float(v) for v in value[-spatial:])
        if value.size == 1:
            return (float(value[0]),) * spatial
        return None
    if value.ndim == 1 and np.issubdtype(value.dtype, np.integer) and value.size >= spatial:
        return OutputSize(int(v) for v in value[-spatial:])
    if value.ndim >= spatial:  # a size tensor: its shape is the output size
        return OutputSize(int(v) for v in value.shape[-spatial:])
    return None


def module_dtype(module: Any) -> Any:
    """The floating torch dtype of ``module``'s first floating parameter or buffer (None: not an
    ``nn.Module``, or no such tensor): the precision its inputs are cast to at the boundary."""
    if not isinstance(module, torch.nn.Module):
        return None
    for tensor in (*module.parameters(), *module.buffers()):
        if tensor.is_floating_point():
            return tensor.dtype
    return None


@dataclass
class Localisation:
    """Where a mismatch starts: the first site whose output differs from the reference's."""

    site: Optional[int]
    node: str
    scope: str
    max_abs: float
    from_upstream: bool
    message: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class RoutedModuleReference(Reference):
    """The module as validate's reference (see the module docstring).

    Args:
        module: an ``nn.Module`` or callable taking the data tensors positionally.
        label: how reports name it (``python:pkg.mod:build``).
        candidate: the ONNX candidate (ModelProto or path) whose sites the runs follow.
        atol, rtol: what :meth:`localise` counts as a differing site tensor.
    """

    kind = "torch"
    dynamic = True
    baked_factor: Optional[float] = None
    baked_note = ""

    def __init__(self, module: Any, label: str, candidate: Any, *, atol: float = 1e-4, rtol: float = 1e-4) -> None:
        self.module = module
        self.label = label
        self.candidate = candidate
        self.baked_scales: dict[str, tuple[float, ...]] = {}
        self.atol, self.rtol = atol, rtol
        self.mapping: Optional[SiteMapping] = None
        self._last: Optional[tuple[list[np.ndarray], dict[Any, Any]]] = None
        self._original: Optional[tuple[list[np.ndarray], list[np.ndarray], list[ResizeCall]]] = None
        self._exposed: list[str] = []
        self.precision = ""  # what was cast at the boundary (empty: nothing)
        if hasattr(module, "eval"):
            module.eval()

    # -- the reference duck type -------------------------------------------------------
    def run(
        self,
        factor: Optional[float],
        data: Sequence[tuple[str, np.ndarray]],
        candidate_feeds: Mapping[str, np.ndarray],
        baked_scales: Optional[Mapping[str, tuple[float, ...]]] = None,
    ) -> list[tuple[str, np.ndarray]]:
        arrays = [np.asarray(value) for _, value in data]
        mapping = self.prepare(arrays)
        sites = self.site_factors(candidate_feeds)
        if factor is not None and not sites:
            # the factors the code runs at: the paired calls', else (no Resize paired: a run-time-sizes
            # export, calls the exporter decomposed) those of the calls left to PyTorch
            calls = [p.call for p in mapping.pairs] or list(mapping.unpaired_calls)
            baked = {c.original_factors for c in calls}
            if not calls or baked != {(float(factor),) * len(next(iter(baked)) or ())}:
                raise RunFailed(
                    f"factor {factor:g} drives nothing: no resize site of the candidate takes a scales "
                    f"input (its {len(mapping.pairs)} scale-driven site(s) keep the factors baked in)"
                )
        self._last = (arrays, sites)
        cached = self._at_original(arrays, sites)
        if cached is not None:
            result, calls = cached
        else:
            result, calls = self._run(arrays, sites, record="outputs" if self._exposed else False)
        named = [(f"output_{i}", value) for i, value in enumerate(result)]
        by_site = {c.site: c for c in calls if c.site is not None and c.output is not None}
        for pair in mapping.pairs:  # the site tensors validate asked for, by the candidate's names
            call = by_site.get(pair.call.site)
            if pair.site.output_name in self._exposed and call is not None:
                named.append((pair.site.output_name, self._back(call.output.detach().cpu().numpy(), arrays)))
        return named

    def expose(self, names: list[str]) -> list[str]:
        """Also return the outputs of the candidate's scale-driven sites among ``names`` (by the candidate's
        tensor names): each is the routed call's output paired with that site."""
        outputs = {site.output_name for site in candidate_sites(self.candidate)}
        self._exposed = [n for n in names if n in outputs]
        return list(self._exposed)

    def _at_original(
        self, arrays: Sequence[np.ndarray], sites: Mapping[int, Any]
    ) -> Optional[tuple[list[np.ndarray], list[ResizeCall]]]:
        """The pairing run's outputs and calls, when this point is that run again (same data, sites as written)."""
        if self._original is None or self.mapping is None:
            return None
        data, outputs, calls = self._original
        written = {p.call.site: p.call.original_factors for p in self.mapping.pairs}
        if any(type(v) is not tuple or v != written.get(k) for k, v in sites.items()):  # not OutputSize etc.
            return None
        if len(data) != len(arrays) or not all(a is b or np.array_equal(a, b) for a, b in zip(data, arrays)):
            return None
        return [value.copy() for value in outputs], calls

    def parameters(self) -> dict[str, np.ndarray]:
        state = getattr(self.module, "state_dict", None)
        if state is None:
            return {}
        return {name: value.detach().cpu().numpy() for name, value in state().items()}

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "kind": self.kind,
            "label": self.label,
            "dynamic": self.dynamic,
            "baked_factor": self.baked_factor,
            "baked_note": self.baked_note,
            "precision": self.precision,
        }
        if self.mapping is not None:
            data["sites"] = self.sites()
            data["size_driven_calls"] = len(self.mapping.size_driven_calls)
            data["mapping_notes"] = list(self.mapping.notes)
            data["left_to_pytorch"] = [c.describe() for c in self.mapping.unpaired_calls]
        return data

    # -- sites -----------------------------------------------------------------------------
    def prepare(self, arrays: Sequence[np.ndarray]) -> SiteMapping:
        """Run once at the code's factors and pair the calls with the candidate's sites (cached)."""
        if self.mapping is None:
            outputs, calls = self._run(arrays, {}, record="outputs" if self._exposed else False)
            self.mapping = map_sites(calls, self.candidate, label="the candidate")
            self._original = (list(arrays), outputs, calls)  # a point at the written factors reuses this run
        return self.mapping

    def sites(self) -> list[dict[str, Any]]:
        """One line per site: number, node, scope, mode, ctm, the code's factors, and the feed that frees it."""
        assert self.mapping is not None, "prepare() first"
        return [
            {
                "site": p.call.site,
                "node": p.site.node_name,
                "op_type": p.site.op_type,
                "scope": p.call.scope,
                "mode": p.site.mode,
                "coordinate_transformation_mode": p.site.coordinate_transformation_mode,
                "factors": list(p.call.original_factors or ()),
                "free": bool(p.site.scales_input),
                "scales_input": p.site.scales_input,
            }
            for p in self.mapping.pairs
        ]

    def original_scales(self) -> dict[str, tuple[float, ...]]:
        """Candidate node name -> the full scales its paired call has in the code (``(1, 1, fh, fw)``)."""
        assert self.mapping is not None, "prepare() first"
        return {p.site.node_name: (1.0, 1.0, *(p.call.original_factors or ())) for p in self.mapping.pairs}

    @property
    def free_sites(self) -> list[int]:
        return [] if self.mapping is None else [p.call.site for p in self.mapping.pairs if p.site.scales_input]

    def site_factors(self, candidate_feeds: Mapping[str, np.ndarray]) -> dict[int, Any]:
        """Site number -> what the candidate's feeds give it (factors or OutputSize); free sites only."""
        assert self.mapping is not None, "prepare() first"
        if not hasattr(self, "_factor_inputs"):  # integer inputs that hold factors (validate's own ports)
            model = (
                self.candidate
                if isinstance(self.candidate, onnx.ModelProto)
                else onnx.load(str(self.candidate), load_external_data=False)
            )
            self._factor_inputs = {
                s.name
                for s in model_ports(model, "the candidate").scale_inputs
                if s.layout not in ("sizes", "size-tensor")
            }
        sites: dict[int, Any] = {}
        for pair in self.mapping.pairs:
            name = pair.site.scales_input
            if not name or name not in candidate_feeds:
                continue
            spatial = len(pair.call.original_factors or ()) or 2
            value = site_values(candidate_feeds[name], spatial, name in self._factor_inputs)
            if value is None:
                raise RunFailed(
                    f"the candidate feeds {name!r} = {np.asarray(candidate_feeds[name]).tolist()} to "
                    f"{pair.site.describe()}, which gives no factor for {spatial} spatial axes"
                )
            if pair.site.size_tensor and not isinstance(value, OutputSize):
                value = FlooredSize(value)  # the plugin reads floor(in * f) from a size tensor built in the graph
            sites[pair.call.site] = value  # type: ignore[index]
        return sites

    # -- running ---------------------------------------------------------------------------
    def _run(
        self, arrays: Sequence[np.ndarray], sites: Mapping[int, Any], *, record: Union[bool, str]
    ) -> tuple[list[np.ndarray], list[ResizeCall]]:
        tensors = [torch.from_numpy(a if a.flags.writeable else a.copy()) for a in arrays]
        wanted = self._module_dtype()
        if wanted is not None:  # the precision the module computes in: cast float inputs at the boundary
            given = sorted(
                {str(t.dtype).replace("torch.", "") for t in tensors if t.is_floating_point() and t.dtype != wanted}
            )
            tensors = [t.to(wanted) if t.is_floating_point() else t for t in tensors]
            if given:
                name = str(wanted).replace("torch.", "")
                self.precision = (
                    f"the module's parameters are {name}: float inputs cast from {', '.join(given)} "
                    f"to {name} at the boundary, outputs cast back to the inputs' dtype"
                )
        router = ResizeRouter(
            sites=dict(sites),
            record_tensors=record,
            module=self.module if isinstance(self.module, torch.nn.Module) else None,
        )
        try:
            result = router.run(self.module, *tensors)
        except Exception as exc:  # the user's module: whatever it raises is theirs, reported by type
            raise RunFailed.raised(self.label, exc) from exc  # exit 5 when the op or torch is what is missing
        return [self._back(t.detach().cpu().numpy(), arrays) for t in flatten_outputs(result)], router.calls

    def _module_dtype(self) -> Any:
        return module_dtype(self.module)

    def _back(self, value: np.ndarray, arrays: Sequence[np.ndarray]) -> np.ndarray:
        """A float output in the dtype of the float inputs, when the inputs were cast at the boundary."""
        if not self.precision or not np.issubdtype(value.dtype, np.floating):
            return value
        dtype = next((a.dtype for a in arrays if np.issubdtype(np.asarray(a).dtype, np.floating)), value.dtype)
        return value.astype(dtype, copy=False)

    def localise(
        self,
        run_candidate: Callable[[list[str]], Mapping[str, np.ndarray]],
        data: Optional[Sequence[tuple[str, np.ndarray]]] = None,
        candidate_feeds: Optional[Mapping[str, np.ndarray]] = None,
    ) -> Localisation:
        """Name the first site (in execution order) whose output differs from the module's.

        ``run_candidate(names)`` runs the candidate on ``candidate_feeds`` with the tensors
        ``names`` (each site's input and output) as extra outputs and returns them by name.
        ``data``/``candidate_feeds`` give the sweep point (default: the last run's).
        """
        if data is not None and candidate_feeds is not None:
            arrays = [np.asarray(value) for _, value in data]
            self.prepare(arrays)
            sites = self.site_factors(candidate_feeds)
        elif self.mapping is None or self._last is None:
            raise RuntimeError("localise() needs a run() first, or data= and candidate_feeds=")
        else:
            arrays, sites = self._last
        _, calls = self._run(arrays, sites, record=True)
        by_site = {c.site: c for c in calls if c.site is not None}
        names = [n for p in self.mapping.pairs for n in (p.site.input_name, p.site.output_name)]
        values = run_candidate(names)
        for pair in self.mapping.pairs:
            call = by_site.get(pair.call.site)
            if call is None or call.output is None:
                continue
            out_diff = self._difference(values.get(pair.site.output_name), call.output.numpy())
            if out_diff is None:
                continue
            in_diff = self._difference(
                values.get(pair.site.input_name), call.input.numpy() if call.input is not None else None
            )
            where = f"site {call.site} ({pair.site.describe()}, module {call.scope or 'root'!r})"
            if in_diff is not None:
                message = (
                    f"{where} is the first site whose output differs (max |diff| {out_diff:.3g}); its input "
                    f"already differs (max |diff| {in_diff:.3g}): the error comes from upstream"
                )
            else:
                message = (
                    f"{where} is the first site whose output differs (max |diff| {out_diff:.3g}) while its "
                    "input agrees: the error appears at this site"
                )
            return Localisation(call.site, pair.site.node_name, call.scope, out_diff, in_diff is not None, message)
        return Localisation(
            None,
            "",
            "",
            0.0,
            False,
            "every resize site's output agrees with the module's: the difference arises elsewhere",
        )

    def _difference(self, got: Optional[np.ndarray], want: Optional[np.ndarray]) -> Optional[float]:
        """max |diff| when ``got`` and ``want`` differ beyond tolerance (inf for a shape change), else None."""
        if got is None or want is None:
            return None
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            return float("inf")
        diff = np.abs(got - want)
        worst = float(diff.max()) if diff.size else 0.0
        return worst if bool((diff > self.atol + self.rtol * np.abs(want)).any()) else None
