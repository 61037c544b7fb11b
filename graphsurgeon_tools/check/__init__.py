"""Checks that run models: the ONE array comparison, input feeds, resource limits, and the
built-in equivalence check shared by the passes and ``validate``.

Submodules: ``compare`` (OutputComparison, compare_arrays), ``feeds``, ``limits``,
``equivalence`` (compare_models, CheckResult), ``sessions`` (how a check's models run in ONNX
Runtime), ``alone`` (each plugin site run on its own), ``steps`` (the models a check names).
Nothing is imported eagerly here.
"""
