"""`onnxtool inspect MODEL`: placeholder until the core issue lands."""
from graphsurgeon_tools.cli._app import ModelArgument, app


@app.command()
def inspect(model: ModelArgument) -> None:
    """List the Resize/Upsample sites of MODEL."""
    raise NotImplementedError
