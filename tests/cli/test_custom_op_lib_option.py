"""--custom-op-lib on the command line: make-dynamic-scale checks a model with a user's own op, swap-plugin runs
no session, validate takes the option more than once; a library file that does not exist is a usage error
(exit 2) naming the flag and the file. The libraries themselves: tests/runtime/test_ort_library.py.
"""

from __future__ import annotations

import onnx
from user_ops import library, twice_as_mul, user_library, user_resize_model  # noqa: F401 - fixtures


def test_cli_custom_op_lib_on_validate_and_make_dynamic_scale(library, user_library, tmp_path, run_cli):
    original = tmp_path / "user.onnx"
    onnx.save(user_resize_model(plugin=False, constant_scales=True), original)
    done = run_cli("make-dynamic-scale", original, "-o", tmp_path / "dynamic.onnx", "--custom-op-lib", user_library)
    assert done.code == 0 and "check passed" in done.out, done
    done = run_cli("swap-plugin", tmp_path / "dynamic.onnx", "-o", tmp_path / "plugin.onnx")  # runs no session
    assert done.code == 0, done
    onnx.save(twice_as_mul(user_resize_model(plugin=False)), tmp_path / "reference.onnx")
    done = run_cli(
        "validate",
        tmp_path / "plugin.onnx",
        "--reference",
        tmp_path / "reference.onnx",
        "--factors",
        "2,3",
        "--custom-op-lib",
        user_library,
        "--custom-op-lib",
        user_library,
    )
    assert done.code == 0, done
    done = run_cli(
        "validate",
        tmp_path / "plugin.onnx",
        "--reference",
        tmp_path / "reference.onnx",
        "--custom-op-lib",
        tmp_path / "missing.so",
    )
    assert done.code == 2 and "--custom-op-lib" in done.err and "missing.so" in done.err, done
