"""Loaded by tests as sitecustomize (this folder first on PYTHONPATH): a Python where torch is not installed.

A meta-path finder refuses torch (and the packages that only come with it) the way a missing
distribution does, so ``import torch`` raises ModuleNotFoundError(name='torch').
"""

import sys

_BLOCKED = ("torch", "torchvision", "onnxscript")


class _NotInstalled:
    def find_spec(self, name, path=None, target=None):  # noqa: ANN001, ANN201 - the finder protocol
        if name.split(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
