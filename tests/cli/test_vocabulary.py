"""cli/vocabulary.py: library messages name API keywords; the CLI shows the flags a user types."""

from __future__ import annotations

import pytest

from graphsurgeon_tools.cli.vocabulary import FLAGS, fix_hint, report_to_flags, to_flags
from graphsurgeon_tools.refusal import Fix


@pytest.mark.parametrize(
    ("library", "cli"),
    [
        ("shared=True needs equal scales", "--shared needs equal scales"),
        ("nodes=[...] picks the sites", "--nodes picks the sites"),
        ("nodes=['nothing*'] matches no node", "--nodes 'nothing*' matches no node"),
        ("nodes=['a', \"b\"] x", "--nodes 'a,b' x"),
        (
            'use signature="size-tensor" (or from_sizes=True first)',
            "use --signature size-tensor (or --from-sizes first)",
        ),
        ("input_name='x' is already a tensor name", "--input-name 'x' is already a tensor name"),
        ("size_input= needs reverse=False", "--size-input needs no --reverse"),
        ("compared once; factors ignored, pass factors=.", "compared once; factors ignored, pass --factors."),
        ("check=False skips the check", "--no-check skips the check"),
        ("seed=3, input_size=0", "--seed 3, --input-size 0"),
    ],
)
def test_api_keywords_become_flags(library: str, cli: str) -> None:
    assert to_flags(library) == cli


@pytest.mark.parametrize(
    "untouched",
    [
        "onnx.checker.check_model(full_check=True) failed",  # part of a longer name
        "/tmp/check=1/model.onnx: not found",  # inside a path
        "interpolate(..., align_corners=True)",  # not a CLI keyword
        "pass external_data_dir= to save_model",  # API-only keyword
    ],
)
def test_other_text_is_left_alone(untouched: str) -> None:
    assert to_flags(untouched) == untouched


def test_reports_are_rewritten_and_refusals_with_a_fix_get_its_command_as_hint() -> None:
    fix = Fix("make_dynamic_scale", (("from_sizes", True),)).to_dict()
    report = {
        "skipped": [
            {
                "node": "r",
                "code": "sizes-driven",
                "reason": "driven by sizes (from_sizes=True converts it)",
                "fix": fix,
            },
            {"node": "s", "code": "antialias", "reason": "no kernel", "fix": None},
        ],
        "shape": (1, 2),
        "count": 3,
    }
    out = report_to_flags(report)
    assert out["skipped"][0]["reason"] == "driven by sizes (--from-sizes converts it)"
    assert out["skipped"][0]["hint"] == "make-dynamic-scale --from-sizes"
    assert "hint" not in out["skipped"][1]  # no fix, no hint
    assert out["shape"] == (1, 2) and out["count"] == 3
    assert report["skipped"][0]["reason"].startswith("driven by sizes (from_sizes=True")  # input untouched


@pytest.mark.parametrize(
    ("fix", "hint"),
    [
        (Fix("swap_plugin", (("signature", "scales"),)), "swap-plugin --signature scales"),
        (
            Fix("make_dynamic_scale", (("layout", "sizes"),), then=Fix("swap_plugin", (("signature", "sizes"),))),
            "make-dynamic-scale --layout sizes, then swap-plugin --signature sizes",
        ),
        (
            Fix("make_dynamic_scale", (("from_sizes", True), ("simplify", True)), then=Fix("swap_plugin")),
            "make-dynamic-scale --from-sizes --simplify, then swap-plugin",
        ),
        (
            Fix("make_dynamic_scale", (("only_free", False),), note="with shared=True"),
            "make-dynamic-scale without --only-free (with --shared)",
        ),
        (
            Fix("swap_plugin", (("reverse", True),), then=Fix("set_factor", (("every", 2),))),
            "swap-plugin --reverse, then set-factor --all 2",
        ),
    ],
)
def test_a_fix_is_spelled_as_the_commands_that_apply_it(fix: Fix, hint: str) -> None:
    assert fix_hint(fix.to_dict()) == hint


def test_flags_map_one_to_one_onto_keywords() -> None:
    """Polygraphy's rule: the flag is the keyword with dashes (one documented exception)."""
    # repeatable flags name one item: --input NAME=FILE, --custom-op-lib PATH, --site NAME=F;
    # set-factor's --all F is every= in the API (a keyword ``all`` would shadow the builtin)
    renamed = {"inputs": "--input", "custom_op_libs": "--custom-op-lib", "sites": "--site", "every": "--all"}
    for keyword, flag in FLAGS.items():
        assert flag.on == renamed.get(keyword, "--" + keyword.replace("_", "-")), keyword
