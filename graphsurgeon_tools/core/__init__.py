"""The graph core: the one home of each graph-level concept the passes, checks and reports share.

Modules, each small and importable on its own (nothing here imports a pass, a check, the
CLI, ``exporters`` or torch):

- :mod:`.graph`      producer/consumer maps, names, ``downstream_tensors``, linear ``remove_unused``
- :mod:`.mentions`   whether any node reads or produces a few names, from the graph's bytes (no walk)
- :mod:`.opsets`     default domains, ``default_opset``, opset-import edits
- :mod:`.dtypes`     the one dtype table (ONNX element type <-> numpy dtype <-> name)
- :mod:`.attributes` the one node-attribute reader and maker
- :mod:`.constants`  ``tensor_to_array`` and the one constant tracer (iterative, bounded)
- :mod:`.folding`    the budgeted evaluator the tracer folds with (sizes tensors before making them)
- :mod:`.checker`    the ONNX checker and shape inference on weightless copies
- :mod:`.output_types` output types re-derived by inference; the full check's inference shared
- :mod:`.wire`       how protobuf writes a string field (what the byte searches look for)
- :mod:`.records`    plain dataclasses built and replaced at C speed (one per site of a big run)
- :mod:`.graphs`     accept a ModelProto, a path or an ``onnx_graphsurgeon.Graph``; give back the kind given

This ``__init__`` imports nothing, so ``import graphsurgeon_tools.core.opsets`` stays cheap.
"""
