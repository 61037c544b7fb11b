"""Prove a rewrite right: :func:`validate` runs the candidate against a reference over a factor sweep.

The package is ``validation``, not ``validate``: a submodule named like the function would
replace ``graphsurgeon_tools.validate`` (the function) with itself as soon as anything
imported it, and ``from graphsurgeon_tools import validate`` would then return a module.

Modules: ``ports`` (data and scale inputs of a model), ``references`` (what is compared
against), ``sweep`` (the factor parser and plan), ``runner`` (loading and running in ORT),
``diagnosis`` (why a comparison failed), ``report`` (the result values), ``render`` (terminal
table), ``junit`` (JUnit XML), ``api`` (:func:`validate`).
"""

from graphsurgeon_tools.check.compare import OutputComparison, compare_arrays
from graphsurgeon_tools.validation.api import DEFAULT_ATOL, DEFAULT_INPUT_SIZE, DEFAULT_RTOL, validate
from graphsurgeon_tools.validation.junit import check_junit_path, junit_xml, write_junit
from graphsurgeon_tools.validation.render import render_report
from graphsurgeon_tools.validation.report import Diagnosis, FactorResult, ValidationReport
from graphsurgeon_tools.validation.runner import load_onnx
from graphsurgeon_tools.validation.sweep import DEFAULT_FACTORS, parse_factors

__all__ = [
    "DEFAULT_ATOL",
    "DEFAULT_FACTORS",
    "DEFAULT_INPUT_SIZE",
    "DEFAULT_RTOL",
    "Diagnosis",
    "FactorResult",
    "OutputComparison",
    "ValidationReport",
    "check_junit_path",
    "compare_arrays",
    "junit_xml",
    "load_onnx",
    "parse_factors",
    "render_report",
    "validate",
    "write_junit",
]
