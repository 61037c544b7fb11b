"""The one refusal type: why a pass (or a lint rule) leaves a site as it is.

Modelled on lint's Reason and onnxscript's ``check`` results: a refusal has a stable
``code`` (kebab-case, part of the JSON contract), the ``text`` a user reads, and, where one
exists, the :class:`Fix` - the API call that would make the site pass. The CLI's hint beside a
refusal is that fix spelled as a command (``make_dynamic_scale`` + ``layout="sizes"`` ->
``make-dynamic-scale --layout sizes``, :func:`graphsurgeon_tools.cli.vocabulary.fix_hint`), so
a new pass's refusals need no hint table: a fix's ``call`` is a public function whose command is
its name with dashes, and each keyword has a flag in ``cli/vocabulary.FLAGS``.

Every refusal in every pass (make-dynamic-scale's layouts, swap-plugin's forms, the generic
spec engine, reverse) is a :class:`Refusal`; a pass records it against a node as a
:class:`graphsurgeon_tools.passes.base.Skip`. Requires nothing but the standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

__all__ = ["Fix", "Refusal", "RefusedError"]

_CODE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Fix:
    """The API call that rewrites a model so the subject passes (the CLI spells it as a command).

    ``then`` is a second call on the first one's result; ``note`` says what the call must be
    applied to when that is not the model at hand (e.g. the model before an earlier rewrite).
    """

    call: str  # a public function of graphsurgeon_tools: "make_dynamic_scale" | "swap_plugin" | ...
    keywords: tuple[tuple[str, Any], ...] = ()
    then: Optional["Fix"] = None
    note: str = ""

    def api(self) -> str:
        args = "".join(f", {key}={value!r}" for key, value in self.keywords).replace("'", '"')
        text = f"{self.call}(model{args})"
        if self.then is not None:
            text += f", then {self.then.api()}"
        return text + (f" ({self.note})" if self.note else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "call": self.call,
            "keywords": dict(self.keywords),
            "then": self.then.to_dict() if self.then is not None else None,
            "note": self.note,
            "api": self.api(),
        }


@dataclass(frozen=True)
class Refusal:
    """Why a site is left unchanged: a stable ``code``, the ``text``, and an optional ``fix``."""

    code: str
    text: str
    fix: Optional[Fix] = None

    def __post_init__(self) -> None:
        if not _CODE.match(self.code):
            raise ValueError(f"refusal code must be kebab-case, got {self.code!r}")

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "reason": self.text, "fix": self.fix.to_dict() if self.fix else None}


class RefusedError(Exception):
    """Raised inside a pass's per-site check to carry a :class:`Refusal` out of nested helpers.

    Never escapes a pass: the pass catches it and records the refusal as a Skip.
    """

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.text)
        self.refusal = refusal
