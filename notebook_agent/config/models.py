"""Turning what a user typed after ``--model`` into a model, the same way in the notebook and the terminal.

Model names follow the registry's one rule (``get_model``: ``provider:model``, ``demo``); this adds what needs
the layers above it: nothing (and no ``NOTEBOOK_AGENT_MODEL``) means the offline demo model, so every demo works
without a key, and ``replay:RUN`` replays a saved run's outputs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.model import Model

if TYPE_CHECKING:  # the evaluation is imported when one runs
    from ..agent.evaluate import SuiteTask, Variant


def choose_model(name: str | None, task: str, *, runs_dir: str | Path = "agent_runs") -> tuple[Model, str]:
    """The model and a one-line note saying which kind was chosen (shown to the user)."""
    chosen = name or os.environ.get("NOTEBOOK_AGENT_MODEL")
    if chosen and chosen.startswith("replay:"):
        from ..agent.runs.run_file import find_run, load_run
        from ..agent.step.replay_pilot import replay_model

        saved = load_run(find_run(runs_dir, chosen.split(":", 1)[1]), with_screenshots=False)
        return replay_model(saved), f"replaying run {saved.run_id}"
    if chosen and chosen.startswith("scripted:"):
        raise ValueError(
            f"The model {chosen!r} was a scripted model; choose one with --model, or replay a saved run with "
            "--model replay:RUN."
        )
    from ..llm import get_model
    from ..llm.registry import parse_model_name

    if not chosen or parse_model_name(chosen)[0] == "demo":
        # the registry's rule for the name; the task is known here, so the demo plays it from the first call
        note = "offline demo model (no API key needed)"
        if not chosen:
            note += "; set --model or NOTEBOOK_AGENT_MODEL for a real one"
        return get_model(chosen or "demo", task=task), note
    return get_model(chosen), ""


def variant_model(variant: Variant, task: SuiteTask) -> Model:
    """Model factory for evaluations: the same names as ``--model`` (``demo``, ``replay:RUN``, providers).
    Module-level, so it can be shipped to executor workers."""
    return choose_model(variant.model, task.task)[0]
