"""The report as JUnit XML: :func:`junit_xml`, :func:`check_junit_path`, :func:`write_junit`.

One testcase per factor and compared tensor (graph outputs, then site outputs); skipped factors
and vacuous comparisons (a constant or below-atol reference) as skipped, failed runs as errors.
A report carrying a ``certificate`` (``validate(certificate=...)``, ``onnxtool certify --junit``)
adds one testcase per certified site: failed with the first counterexample in words.
The suite's properties carry the evidence record (versions, the plugin kernel that ran, the torch
op, each model's sha256) as flat ``evidence.*`` names.

Requires: the report (a :class:`ValidationReport` or its dict). Ensures: :func:`write_junit`
writes atomically (temp file in the same folder, then rename) and never over an input model.
Does NOT write anything else. Messages name the API keyword ``junit=``; the CLI says ``--junit``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence, Union

from graphsurgeon_tools.errors import UsageError
from graphsurgeon_tools.io import write_bytes_atomic
from graphsurgeon_tools.validation.render import _fmt, _point_label
from graphsurgeon_tools.validation.report import ValidationReport

__all__ = ["check_junit_path", "evidence_properties", "junit_xml", "write_junit"]


def junit_xml(report: Mapping[str, Any]) -> str:
    """The report as JUnit XML: one testcase per factor and output; skipped factors as skipped."""
    import xml.etree.ElementTree as ET

    cases = []
    failures = skipped = errors = 0
    suite_name = f"onnxtool.validate.{Path(str(report['candidate'])).stem}"
    for point in report["factors"]:
        label = _point_label(point["factor"])
        if not point["outputs"]:
            case = ET.Element("testcase", classname=suite_name, name=label, time=f"{point['seconds']:.4f}")
            if point["status"] == "skipped":
                ET.SubElement(case, "skipped", message=point["reason"])
                skipped += 1
            else:
                ET.SubElement(case, "error", message=point["reason"] or "failed to run")
                errors += 1
            cases.append(case)
            continue
        for out in point["outputs"]:
            case = ET.Element(
                "testcase",
                classname=suite_name,
                name=f"{label}.{out['output']}",
                time=f"{point['seconds'] / max(1, len(point['outputs'])):.4f}",
            )
            if out["passed"] and out.get("vacuous"):  # within tolerance of a reference that passes anything
                ET.SubElement(case, "skipped", message=out["note"] or "vacuous comparison", type="vacuous")
                skipped += 1
            elif not out["passed"]:
                failures += 1
                message = out["note"] or "out of tolerance"
                failure = ET.SubElement(case, "failure", message=message, type="mismatch")
                failure.text = "\n".join(
                    f"{k}: {_fmt(v) if not isinstance(v, list) else v}"
                    for k, v in out.items()
                    if k not in ("output", "passed")
                )
                if report.get("diagnosis"):
                    failure.text += f"\ndiagnosis: {report['diagnosis']['summary']}"
            cases.append(case)
    for case, failed in _certificate_cases(report.get("certificate"), suite_name):
        cases.append(case)
        failures += failed
    if not report["passed"] and not cases:
        case = ET.Element("testcase", classname=suite_name, name="sweep")
        ET.SubElement(case, "failure", message=report["summary"])
        cases.append(case)
        failures += 1
    suite = ET.Element(
        "testsuite",
        name=suite_name,
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=f"{sum(p['seconds'] for p in report['factors']):.4f}",
    )
    properties = ET.SubElement(suite, "properties")
    for key in ("candidate", "atol", "rtol", "seed"):
        if key in report:
            ET.SubElement(properties, "property", name=key, value=str(report[key]))
    if isinstance(report.get("reference"), Mapping):
        ET.SubElement(properties, "property", name="reference", value=str(report["reference"].get("label")))
    for key, value in evidence_properties(report.get("evidence")):
        ET.SubElement(properties, "property", name=key, value=value)
    suite.extend(cases)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _certificate_cases(certificate: Any, suite_name: str) -> list[tuple[Any, int]]:
    """(testcase, 1 if failed) per site of a certificate dict (schema onnxtool.certificate/1)."""
    import xml.etree.ElementTree as ET

    if not certificate:
        return []
    first = certificate.get("first_counterexample") or {}
    cases = []
    for site in certificate.get("sites", []):
        gate = next((p for p in site["pairs"] if p.get("gating")), None)
        case = ET.Element(
            "testcase", classname=suite_name, name=f"certify.{site['site']}", time=f"{site.get('seconds', 0.0):.4f}"
        )
        failed = gate is None or gate["verdict"] in ("differs", "not-compared")
        if failed:
            text = first.get("text") if first.get("site") == site["site"] else None
            ET.SubElement(
                case, "failure", message=text or certificate.get("summary", "not certified"), type="counterexample"
            )
        cases.append((case, int(failed)))
    whole = certificate.get("whole_model")
    if whole and not whole.get("agrees", True):
        case = ET.Element("testcase", classname=suite_name, name="certify.whole_model")
        ET.SubElement(case, "failure", message=whole.get("note", ""), type="whole-model")
        cases.append((case, 1))
    return cases


def evidence_properties(evidence: Any) -> list[tuple[str, str]]:
    """The evidence record as flat (name, value) properties: ``evidence.versions.onnxruntime``,
    ``evidence.plugin_kernel.0.path``, ``evidence.model.candidate.sha256``... (None values left out)."""
    if not evidence:
        return []
    found: list[tuple[str, str]] = []

    def add(prefix: str, values: Mapping[str, Any]) -> None:
        for key, value in values.items():
            if value is not None and not isinstance(value, (dict, list)):
                found.append((f"{prefix}.{key}", str(value)))

    add("evidence.versions", evidence.get("versions") or {})
    for index, kernel in enumerate(evidence.get("plugin_kernels") or []):
        add(f"evidence.plugin_kernel.{index}", kernel)
    found.append(("evidence.slow_fallback", str(bool(evidence.get("slow_fallback"))).lower()))
    if evidence.get("torch_op"):
        add("evidence.torch_op", evidence["torch_op"])
    for model in evidence.get("models") or []:
        add(f"evidence.model.{model['role']}", {k: v for k, v in model.items() if k != "role"})
    return found


def check_junit_path(path: Union[str, os.PathLike], *, inputs: Sequence[Union[str, os.PathLike]] = ()) -> Path:
    """Refuse (UsageError, exit 2) a JUnit destination that cannot be written, before any work.

    ``inputs``: files the run reads (the candidate, an ONNX reference); the report must not
    overwrite one of them, whatever the spelling (``dir/../x``, a symlink to it).
    """
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"junit={target}: is a directory")
    if not target.parent.is_dir():
        raise UsageError(f"junit={target}: folder {target.parent} does not exist")
    if not os.access(target.parent, os.W_OK):
        raise UsageError(f"junit={target}: folder {target.parent} is not writable")
    if target.exists():
        for source in inputs:
            if Path(source).exists() and os.path.samefile(target, source):
                raise UsageError(f"junit={target} is the input model {source}; the report would overwrite it")
    return target


def write_junit(report: Union[ValidationReport, Mapping[str, Any]], path: Union[str, os.PathLike]) -> Path:
    """Write :func:`junit_xml` to ``path`` atomically (temp file in the same folder, then rename)."""
    data = report.to_dict() if isinstance(report, ValidationReport) else report
    target = check_junit_path(path)
    try:
        return write_bytes_atomic(junit_xml(data).encode("utf-8"), target)
    except UsageError as exc:  # a read-only file system, a folder that went away: the user's to fix
        raise UsageError(f"junit=: {exc}") from None
