"""Transitional shim: moved to graphsurgeon_tools.check.equivalence."""
from graphsurgeon_tools.check.equivalence import *  # noqa: F401,F403  # transitional shim
from graphsurgeon_tools.check.equivalence import CheckResult, OutputComparison, compare_models  # noqa: F401
from graphsurgeon_tools.check.feeds import concrete_input_shapes, guard_output_sizes, random_feeds  # noqa: F401
