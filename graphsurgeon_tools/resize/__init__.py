"""Resize, Upsample and DynamicTRTResize: the one home of their semantics.

- :mod:`.semantics`   defaults per op version, input slots, modes and coordinate modes
- :mod:`.sites`       ``find_resize_sites(model) -> list[ResizeSite]`` (where each site's scales come from)
- :mod:`.sanity`      the one nonsense-scales gate (``MAX_SCALE``, ``scales_problems``)
- :mod:`.plugin_node` DynamicTRTResize node attributes <-> Resize semantics

This package re-exports the public names so ``from graphsurgeon_tools.resize import
find_resize_sites`` keeps working.
"""

from graphsurgeon_tools.core.constants import MAX_FOLD_NODES, ValueSource, ValueTrace, trace_value
from graphsurgeon_tools.resize.sanity import MAX_SCALE, scales_problems
from graphsurgeon_tools.resize.sites import MAIN_GRAPH, ResizeSite, find_resize_sites

__all__ = [
    "MAIN_GRAPH",
    "MAX_FOLD_NODES",
    "MAX_SCALE",
    "ResizeSite",
    "ValueSource",
    "ValueTrace",
    "find_resize_sites",
    "scales_problems",
    "trace_value",
]
