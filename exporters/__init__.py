"""onnxtool's PyTorch side: the SRCNN example family, the C++ resize op, and export helpers.

This package imports torch. ``graphsurgeon_tools`` never imports it at module level.
Public names resolve lazily, so ``import exporters`` does not load the C++ library
or onnxscript::

    from exporters import export, srcnn
    model = srcnn("cxx-op")
    export(model, model.example_inputs(3), "srcnn_cxx.onnx", exporter="dynamo")

    from exporters import route_resize
    with route_resize(3):           # every scale_factor= interpolate call runs at x3
        y = users_model(x)          # through torch.ops.onnxtool.resize
"""

from __future__ import annotations

from graphsurgeon_tools.lazy import lazy_face

_LAZY = {
    "export": "exporters.onnx_export",
    "ExportResult": "exporters.onnx_export",
    "ExportFailedError": "exporters.onnx_export",
    "export_srcnn": "exporters.onnx_export",
    "srcnn": "exporters.models",
    # Run any unmodified nn.Module with its interpolate calls executed by the C++ op, at any
    # factor per site (and the pairing of those calls with an ONNX model's Resize sites).
    "route_resize": "exporters.routing",
    "ResizeRouter": "exporters.routing",
    "OutputSize": "exporters.routing",
    "FlooredSize": "exporters.routing",
    "map_sites": "exporters.site_mapping",
    "SiteMappingError": "exporters.site_mapping",
    "RoutedModuleReference": "exporters.module_reference",
}

__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_face(__name__, _LAZY)
