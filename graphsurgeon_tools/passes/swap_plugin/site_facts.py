"""What swap-plugin needs to know of a site beyond its ResizeSite, found once per pass.

* :func:`site_rank`: X's rank, else the length of the scales/sizes vector (a declared
  ``float[4]`` scales input fixes the rank even where X has no shape);
* :func:`full_rank_view`: a Resize-18 site with ``axes`` seen with full-rank scales/sizes
  (what the plugin gets), so the refusals judge the vector the plugin will read;
* :func:`expand_axes`: the in-graph expansion of such a site's scales (or sizes) to every
  axis: ``Gather(Concat(ones | Shape(X), v), index)``, for constant and fed vectors alike::

      full[i] = v[axes.index(i)]  for i in axes,  1 (scales) / X.shape[i] (sizes) elsewhere

* :class:`SourceNotes`: "sizes: computed from the static shape of ...: simplify=True folds
  it" instead of the tracer's "computed from graph input"/"constant subgraph over 64 nodes"
  (:mod:`graphsurgeon_tools.resize.shape_source`; the shape flow is built only when needed);
* :func:`freedom_of`: each site's factor freedom for the report.

Requires: sites from ``find_resize_sites`` on the model being swapped (before it changes).
Does NOT refuse anything itself (refusals.py does) or swap anything (forward.py does).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np
from onnx import ModelProto, NodeProto

from graphsurgeon_tools.passes.swap_plugin.edit import Builder
from graphsurgeon_tools.resize.freedom import site_freedom
from graphsurgeon_tools.resize.shape_source import SourceNotes
from graphsurgeon_tools.resize.sites import ResizeSite

__all__ = ["SourceNotes", "expand_axes", "freedom_of", "full_rank_view", "site_rank"]


def _static_length(type_proto: Any) -> Optional[int]:
    """The length of a 1-D tensor type with a static dim, else None."""
    if type_proto is None or not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return None
    dims = type_proto.tensor_type.shape.dim
    if len(dims) == 1 and dims[0].HasField("dim_value") and dims[0].dim_value > 0:
        return int(dims[0].dim_value)
    return None


def site_rank(site: ResizeSite, types: dict[str, Any]) -> Optional[int]:
    """X's rank; else (no ``axes``) the length of the scales or sizes, as values or as declared."""
    if site.input_rank:
        return site.input_rank
    x = types.get(site.input_name)
    if x is not None and x.HasField("tensor_type") and x.tensor_type.HasField("shape"):
        return len(x.tensor_type.shape.dim)
    if site.axes is not None:
        return None
    for values, tensor in ((site.scales, site.scales_tensor), (site.sizes, site.sizes_tensor)):
        if values:
            return len(values)
        length = _static_length(types.get(tensor)) if tensor else None
        if length:
            return length
    return None


def full_rank_view(site: ResizeSite, rank: Optional[int]) -> ResizeSite:
    """The site as the plugin will see it: ``axes`` folded into full-rank scales/sizes, rank set."""
    if site.axes is None or rank is None:
        return dataclasses.replace(site, input_rank=rank) if rank and not site.input_rank else site
    axes = [a % rank for a in site.axes]
    scales = sizes = None
    if site.scales is not None and len(site.scales) == len(axes):
        scales = tuple(site.scales[axes.index(i)] if i in axes else 1.0 for i in range(rank))
    if site.sizes is not None and len(site.sizes) == len(axes):
        shape = site.input_shape or (None,) * rank
        sizes = tuple(site.sizes[axes.index(i)] if i in axes else shape[i] for i in range(rank))
        if any(not isinstance(s, int) for s in sizes):
            sizes = None
    return dataclasses.replace(
        site,
        axes=None,
        scales=scales if site.scales is not None else None,
        sizes=sizes if site.sizes is not None else None,
        input_rank=rank,
    )


def expand_axes(
    builder: Builder,
    nodes: list[NodeProto],
    base: str,
    vector: str,
    rank: int,
    axes: tuple[int, ...],
    x: Optional[str] = None,
) -> str:
    """``vector`` (one entry per axis in ``axes``) expanded to ``rank`` entries in-graph: 1.0 on the
    other axes for scales, X's dims for sizes (``x`` given). Returns the full vector's name."""
    normal = [a % rank for a in axes]
    if x is None:
        rest = builder.initializer(f"{base}/axes/ones", np.ones(rank, dtype=np.float32))
    else:
        rest = builder.node(nodes, "Shape", [x], f"{base}/axes/in_shape")
    extended = builder.node(nodes, "Concat", [rest, vector], f"{base}/axes/extended", axis=0)
    index = np.array([rank + normal.index(i) if i in normal else i for i in range(rank)], dtype=np.int64)
    picks = builder.initializer(f"{base}/axes/index", index)
    return builder.node(nodes, "Gather", [extended, picks], f"{base}/axes/full", axis=0)


def freedom_of(model: ModelProto, sites: list[ResizeSite]) -> dict[str, Any]:
    """site label -> Freedom (graphsurgeon_tools.resize.freedom), main-graph sites only."""
    main = [s for s in sites if s.in_main_graph]
    return site_freedom(model, sites=main) if main else {}
