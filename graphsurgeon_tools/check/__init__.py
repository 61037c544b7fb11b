"""Checks that run models: the ONE array comparison, input feeds, resource limits, and the
built-in equivalence check shared by the passes and ``validate``.

Submodules: ``compare`` (OutputComparison, compare_arrays), ``feeds``, ``limits``,
``equivalence`` (compare_models, CheckResult). Nothing is imported eagerly here.
"""
