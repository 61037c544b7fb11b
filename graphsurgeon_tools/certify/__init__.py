"""``certify``: prove a rewritten model's Resize sites equal to the reference over a whole profile.

- :mod:`.profile`      ``"16..512:1,2,3,4"`` -> every length and factor certified
- :mod:`.bands`        per-axis matrices read from an engine with comb probes (band entries only)
- :mod:`.readers`      the implementations (ONNX Runtime, the candidate's node, onnx.reference,
                       PyTorch through the extensions registry) and :mod:`.trt_model` (a model)
- :mod:`.ledger`       pair comparisons as compact ranges and first counterexamples;
                       :mod:`.causes` the known departures that explain them
- :mod:`.certificate`  the JSON certificate and its words; :mod:`.verify` re-checks one
- :mod:`.whole_model`  factor-dependent nodes and full runs at boundary points
- :mod:`.api`          :func:`certify`

``from graphsurgeon_tools import certify`` gives this package, which is callable as the
function (``certify(model, profile="16..512:1,2,3,4")``) so the name works either way.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from graphsurgeon_tools.certify.api import certify
from graphsurgeon_tools.certify.certificate import SCHEMA, Certificate
from graphsurgeon_tools.certify.profile import CertifyProfile, parse_certify_profile
from graphsurgeon_tools.certify.verify import VerifyReport, verify_certificate

__all__ = [
    "SCHEMA",
    "Certificate",
    "CertifyProfile",
    "VerifyReport",
    "certify",
    "parse_certify_profile",
    "verify_certificate",
]


class _CallablePackage(types.ModuleType):
    # `graphsurgeon_tools.certify` is both this package and the API function: importing a
    # submodule rebinds the package attribute to the module, so the module calls the function.
    def __call__(self, *args: Any, **kwargs: Any) -> Certificate:
        return certify(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
