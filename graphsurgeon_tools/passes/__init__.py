"""Graph passes: one contract, one package per pass.

- :mod:`.base`                the contract: requires -> call -> ensures, PassResult, Skip, select
- :mod:`.model_check`         the contract's ONNX checks: structural before ``call``, full after (ModelCheck)
- :mod:`.make_dynamic_scale`  constant Resize/Upsample scales -> graph inputs (plan, rewrite, shapes, run)
- :mod:`.swap_plugin`         Resize -> DynamicTRTResize and back, and spec-driven swaps (forward,
                              size_tensor, reverse, generic, refusals, edit)

Every pass takes a ModelProto, a path or an onnx_graphsurgeon Graph and returns a result of
the same shape (:class:`.base.PassResult`). Importing this package imports no pass.
"""
