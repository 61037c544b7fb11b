"""Transitional shim: moved to graphsurgeon_tools.validation.references (and .ports, .runner, .sweep)."""
from graphsurgeon_tools.validation.ports import *  # noqa: F401,F403  # transitional shim
from graphsurgeon_tools.validation.ports import PLUGIN_OP_TYPE, DataInput, Ports, ScaleInput, default_opset, model_ports  # noqa: F401
from graphsurgeon_tools.validation.references import *  # noqa: F401,F403  # transitional shim
from graphsurgeon_tools.validation.runner import OnnxRunner, RunFailed, ort_session  # noqa: F401
from graphsurgeon_tools.validation.sweep import Factor, format_factor  # noqa: F401
