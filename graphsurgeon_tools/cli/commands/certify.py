"""`onnxtool certify CANDIDATE --profile SIZES:FACTORS`: the CLI face of :func:`graphsurgeon_tools.certify`.

``--verify CERT.json MODEL...`` re-checks a certificate instead (hashes, versions, a re-run sample).
Exit codes: 0 certified (or the certificate holds), 1 a counterexample inside the profile (or a
certificate that no longer holds), 2 usage, 3 unreadable models, 5 environment.
"""

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from graphsurgeon_tools.cli._app import JsonOption, emit, note, split_csv


def certify(
    models: Annotated[
        list[Path],
        typer.Argument(
            help="The candidate model (never modified); with --verify, the "
            "certified model, then its ONNX reference if it had one."
        ),
    ],
    reference: Annotated[
        Optional[str],
        typer.Option(
            "--reference",
            "-r",
            help="An ONNX model (its Resize attributes), onnx-reference, torch:NAME or "
            "python:MODULE:CALLABLE (the routed PyTorch op). Default: the "
            "candidate's own Resize semantics in ONNX Runtime.",
        ),
    ] = None,
    profile: Annotated[
        Optional[str],
        typer.Option(
            "--profile",
            help="SIZES:FACTORS to certify, e.g. 16..512:1,2,3,4 (every length in a range; "
            "a factor may be A/B, e.g. 64/26).",
        ),
    ] = None,
    sites: Annotated[
        Optional[list[str]], typer.Option("--site", help="Only these sites (node names; repeatable).")
    ] = None,
    junit: Annotated[Optional[Path], typer.Option("--junit", help="Also write the verdict as JUnit XML.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Write the certificate (JSON) to this file.")] = None,
    verify: Annotated[
        Optional[Path], typer.Option("--verify", help="Re-check this certificate against MODELS instead.")
    ] = None,
    as_json: JsonOption = False,
) -> int:
    """Prove CANDIDATE's Resize sites equal to the reference for every length and factor of a profile.

    Each site's per-axis matrix is read from every implementation (ONNX Runtime, the candidate's
    node, onnx.reference, PyTorch's routed op and interpolate, a model of TensorRT) for every
    length and factor, and compared exactly (nearest) or within a stated weight bound.
    """
    from graphsurgeon_tools.errors import UsageError

    if verify is not None:
        if profile is not None or reference is not None or out is not None:
            raise UsageError("--verify re-checks a certificate: --profile, --reference and --out have no effect")
        from graphsurgeon_tools.certify import verify_certificate

        result = verify_certificate(verify, list(models))
        emit(
            result.to_dict(),
            as_json=as_json,
            human=lambda d: "\n".join([d["summary"], *(f"  {p}" for p in d["problems"][1:])]),
        )
        return 0 if result.passed else 1
    if profile is None:
        raise UsageError("certify needs profile=SIZES:FACTORS, e.g. profile='16..512:1,2,3,4'")
    if len(models) != 1:
        raise UsageError("certify takes one candidate model (pass --verify CERT.json to re-check one)")
    from graphsurgeon_tools.certify import certify as run_certify
    from graphsurgeon_tools.certify.profile import parse_certify_profile

    parsed = parse_certify_profile(profile)  # a malformed profile is exit 2 before any work
    reads = [models[0]] + ([Path(reference)] if reference and Path(reference).exists() else [])
    if junit is not None:
        from graphsurgeon_tools.validation import check_junit_path

        check_junit_path(junit, inputs=reads)
    if out is not None:
        import os

        from graphsurgeon_tools.io import check_destination

        check_destination(out)
        if out.exists() and any(path.exists() and os.path.samefile(out, path) for path in reads):
            raise UsageError(f"--out {out} is a model this command reads; the certificate would overwrite it")
    certificate = run_certify(models[0], reference, profile=parsed, sites=split_csv(sites))
    data = certificate.to_dict()
    if out is not None:
        from graphsurgeon_tools.io import write_bytes_atomic

        write_bytes_atomic((json.dumps(data, indent=1, allow_nan=False) + "\n").encode("utf-8"), out)
    if junit is not None:
        from graphsurgeon_tools.validation.junit import write_junit

        write_junit(
            {
                "passed": data["certified"],
                "summary": data["summary"],
                "certificate": data,
                "factors": [],
                "candidate": str(models[0]),
            },
            junit,
        )
    emit(data, as_json=as_json, human=lambda _: certificate.text())
    if out is not None and not as_json:
        note(f"certificate written to {out}")
    return 0 if certificate.certified else 1


__all__ = ["certify"]


def register(app: typer.Typer) -> None:
    """Add ``onnxtool certify`` (called by :func:`graphsurgeon_tools.cli.commands.register_all`)."""
    app.command("certify")(certify)
