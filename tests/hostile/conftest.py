"""Fixtures of the hostile suites: ``available``, the commands registered on the typer app (read once
per module; hostile.harness.run_and_check fails a run whose command is not among them)."""

from __future__ import annotations

import pytest

from hostile.harness import registered_commands


@pytest.fixture(scope="module")
def available() -> set[str]:
    return registered_commands()
