"""Transitional shim: the graph helpers moved to graphsurgeon_tools.core (graph, opsets, constants,
checker). Import from there; the lead deletes this module at integration."""

from graphsurgeon_tools.core.checker import *  # noqa: F401,F403  transitional shim
from graphsurgeon_tools.core.checker import WEIGHTLESS_THRESHOLD  # noqa: F401
from graphsurgeon_tools.core.constants import evaluate_subgraph, tensor_to_array  # noqa: F401
from graphsurgeon_tools.core.graph import *  # noqa: F401,F403
from graphsurgeon_tools.core.opsets import DEFAULT_DOMAINS, default_opset, set_default_opset  # noqa: F401
