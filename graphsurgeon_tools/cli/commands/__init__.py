"""One module per command; importing one registers it on the typer app.

Each module imports only typer and the standard library at module level, so
``onnxtool --help`` never pays for onnxruntime, onnxsim or torch.
"""

from graphsurgeon_tools.cli.commands import (  # noqa: F401
    certify,
    demo,
    doctor,
    export,
    inspect,
    lint,
    make_dynamic_scale,
    set_factor,
    swap_plugin,
    validate,
)
