"""The profile a certificate covers: ``SIZES:FACTORS``.

``"32,256,1024:1,2,4"`` -> lengths (32, 256, 1024), factors (1, 2, 4); ``"16..512:1,2,3,4"``
-> every integer length from 16 to 512; items mix (``"8,16..64,100:2,2.5,64/26"``). A factor
is a positive number or ``A/B`` (an output/input ratio, e.g. ``64/26``). The same syntax as
the model-writing commands' ``--profile`` (whose three sizes are min, opt, max: here every
length listed, and every one inside a range, is certified).

Requires: text. Ensures: sorted, de-duplicated lengths >= 1 and factors > 0, or UsageError.
Does NOT read a model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from graphsurgeon_tools.certify.ledger import compact_ranges
from graphsurgeon_tools.errors import UsageError

__all__ = ["CertifyProfile", "parse_certify_profile"]

#: Lengths one profile may hold (every one is probed per factor and axis).
MAX_LENGTHS = 100_000


@dataclass(frozen=True)
class CertifyProfile:
    text: str
    lengths: tuple[int, ...]
    factors: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "lengths": compact_ranges(list(self.lengths)), "factors": list(self.factors)}


def _factor(item: str, text: str) -> float:
    try:
        if "/" in item:
            top, bottom = item.split("/", 1)
            value = float(top) / float(bottom)
        else:
            value = float(item.lstrip("xX"))
    except (ValueError, ZeroDivisionError):
        raise UsageError(f"profile={text!r}: factor {item!r} is not a number or A/B") from None
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"profile={text!r}: factor {item!r} must be positive and finite")
    return value


def parse_certify_profile(text: str) -> CertifyProfile:
    sizes, sep, factors = str(text).partition(":")
    if not sep or not sizes.strip() or not factors.strip():
        raise UsageError(f"profile={text!r}: expected SIZES:FACTORS, e.g. 16..512:1,2,3,4")
    lengths: set[int] = set()
    for item in (i.strip() for i in sizes.split(",") if i.strip()):
        try:
            if ".." in item:
                low, high = (int(v) for v in item.split("..", 1))
                if low > high:
                    raise ValueError
                if high - low + len(lengths) > MAX_LENGTHS:
                    raise UsageError(f"profile={text!r}: more than {MAX_LENGTHS} lengths")
                lengths.update(range(low, high + 1))
            else:
                lengths.add(int(item))
        except ValueError:
            raise UsageError(f"profile={text!r}: {item!r} is not a length or a range MIN..MAX") from None
    if not lengths or min(lengths) < 1:
        raise UsageError(f"profile={text!r}: lengths must be positive integers")
    values = sorted({_factor(i.strip(), text) for i in factors.split(",") if i.strip()})
    return CertifyProfile(str(text), tuple(sorted(lengths)), tuple(values))
