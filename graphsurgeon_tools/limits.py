"""Transitional shim: moved to graphsurgeon_tools.check.limits."""
from graphsurgeon_tools.check.limits import *  # noqa: F401,F403  # transitional shim
from graphsurgeon_tools.check.limits import ENV_VAR, DEFAULT_MAX_OUTPUT_BYTES, _parse_size  # noqa: F401
