"""`onnxtool certify` and `validate --certify`: the report's first line, JUnit, --verify, usage errors.

What certify finds (the departures, the SRCNN family's certificate) is tested through the API in
tests/certify/; here the command around it.
"""

from __future__ import annotations

import json

import onnx
from certify import certify_models as cm  # tests/certify/certify_models.py (tests/ is on sys.path, see conftest.py)


def test_a_candidate_with_one_coordinate_mode_changed_is_refused_with_the_first_counterexample(tmp_path, run_cli):
    onnx.save(cm.resize_model("linear", "half_pixel"), tmp_path / "reference.onnx")
    onnx.save(cm.resize_model("linear", "asymmetric"), tmp_path / "mutated.onnx")
    result = run_cli(
        "certify",
        tmp_path / "mutated.onnx",
        "--reference",
        tmp_path / "reference.onnx",
        "--profile",
        "16..20:1,2",
        "--junit",
        tmp_path / "cert.xml",
    )
    assert result.code == 1 and result.out.startswith("NOT certified: site 'up': at height 16 -> 32 (x2)")
    assert 'type="counterexample"' in (tmp_path / "cert.xml").read_text()


def test_usage_errors_are_one_line_exit_2_before_any_work(tmp_path, run_cli, save_model_file):
    model = save_model_file(cm.resize_model("linear", "half_pixel"))
    for args, words in (
        (["--profile", "16"], "expected SIZES:FACTORS"),
        (["--profile", "16:2", "--out", model], "a model this command reads"),
        (["--profile", "16:2", "--site", "nope"], "no such Resize/plugin node"),
    ):
        result = run_cli("certify", model, *args)
        assert result.code == 2 and words in result.err and len(result.err.strip().splitlines()) == 1, result.err


def test_validate_carries_the_certificate_in_json_and_junit(srcnn_family, run_cli, tmp_path):
    junit = tmp_path / "report.xml"
    result = run_cli(
        "validate",
        srcnn_family["dynamic"],
        "--reference",
        "torch:srcnn",
        "--factors",
        "2",
        "--certify",
        "16..40:2,3",
        "--json",
        "--junit",
        junit,
    )
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert report["certificate"]["certified"] and report["certificate"]["schema"] == "onnxtool.certificate/1"
    assert 'name="certify./upsample/Resize"' in junit.read_text()


def test_verify_holds_on_the_certified_model_and_fails_on_a_changed_model_or_engine(srcnn_family, run_cli, tmp_path):
    cert = tmp_path / "cert.json"
    made = run_cli(
        "certify", srcnn_family["plugin"], "--reference", "torch:srcnn", "--profile", "16..24:2,3", "--out", cert
    )
    assert made.code == 0, made.err
    assert run_cli("certify", "--verify", cert, srcnn_family["plugin"]).code == 0
    changed = tmp_path / "changed.onnx"
    changed.write_bytes(srcnn_family["plugin"].read_bytes() + b"\x00")
    result = run_cli("certify", "--verify", cert, changed)
    assert result.code == 1 and "sha256" in result.out
    data = json.loads(cert.read_text())
    data["engines"]["onnxruntime"] = "0.0.1"
    cert.write_text(json.dumps(data))
    result = run_cli("certify", "--verify", cert, srcnn_family["plugin"])
    assert result.code == 1 and "onnxruntime is" in result.out and "0.0.1" in result.out
