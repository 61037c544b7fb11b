"""Real models for the tests: built by their projects' own code with random weights, or shipped in wheels.

* :mod:`realmodels.builders` - transformers/diffusers models from small configs (no download).
* :mod:`realmodels.exports`  - both torch exporters at two opsets each.
* :mod:`realmodels.shipped`  - ONNX files inside PaddleOCR-family wheels.
* :mod:`realmodels.inputs`   - inputs a model responds to (a text-like image for the detectors).
* :mod:`realmodels.tensors`  - run two models in ONNX Runtime, compare every shared tensor exactly.
* :mod:`realmodels.flow`     - the CLI flow per model (inspect, make-dynamic-scale, swap-plugin,
  validate), each step once per session.
* :mod:`realmodels.fixtures` - the session fixtures.

Nothing here imports torch at import time; the torch models need the ``realmodels`` extra.
"""
