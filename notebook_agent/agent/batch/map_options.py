"""How a map runs its rows (:class:`MapOptions`, kept with the result so ``retry()`` runs the failed rows the same
way), and every check of those options made before any row runs (:func:`check_options`): what would otherwise
fail on each row is said once, at the start.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...core.model import Model
from ...llm.ledger import Ledger
from ...llm.scripted import ScriptedModel
from ..safety.budget import Budget, checked_cost, checked_tokens
from ..step.pilot import Runner
from .map_budget import check_budgets, first_call
from .map_rows import Isolation, ModelFactory, PilotFactory, RowWays, shippable_agent
from .map_table import KeepRuns


@dataclass(frozen=True)
class MapOptions:
    """How a map runs its rows (kept with the result, so ``retry()`` runs the failed rows the same way)."""

    concurrency: int = 4
    isolation: Isolation = "tab"
    executor: concurrent.futures.Executor | None = None
    model: str | None = None
    model_factory: ModelFactory | None = None
    start_url: str | None = None
    interactive: bool = False
    pilots: PilotFactory | None = None
    """Each row follows the pilot this makes for it (a recipe's rows: agent/recipes/recipe_map.py), the model
    healing the steps the pilot leaves to it."""
    ways: RowWays | None = None
    """Asked how each row goes, when a row may go without a run (a recipe's learned call asked directly:
    agent/recipes/calls/rows.py); it runs the row as a run when it chooses to. Not with an executor."""
    keep_runs: KeepRuns = "all"
    """Which rows keep their whole run: ``all``, or the ``exceptions`` only (a recipe map's default: a row that
    replayed as recorded keeps its table row, and its run file when the agent has ``runs_dir``)."""
    max_cost: float | None = None
    """The whole map's budget in dollars (each row's is the agent's ``max_cost``): see map_budget.py."""
    max_tokens: int | None = None
    """The whole map's budget in tokens."""
    ask_estimate: bool = False
    """A front that can ask someone (a notebook's view, a terminal): a big map without a budget runs its first rows,
    then asks whether to go on at their rate (map_budget.py ``MapGate``)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_cost", checked_cost(self.max_cost))  # one-line errors, "$0.50" read as 0.5
        object.__setattr__(self, "max_tokens", checked_tokens(self.max_tokens))

    @property
    def budget(self) -> Budget:
        """The whole map's budget."""
        return Budget(self.max_cost, self.max_tokens)


def check_options(agent: Runner, options: MapOptions) -> None:
    """Everything about the options that would otherwise fail on a row, said before any row runs."""
    if options.concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    if options.isolation not in ("tab", "context"):
        raise ValueError(f"isolation must be 'tab' or 'context', not {options.isolation!r}")
    if options.keep_runs not in ("all", "exceptions"):
        raise ValueError(f"keep_runs must be 'all' or 'exceptions', not {options.keep_runs!r}")
    if options.model is not None and options.model_factory is not None:
        raise ValueError("Give model= (a name) or model_factory= (a function of the row), not both.")
    if options.model is not None and options.executor is None:  # a worker may hold keys this process has not
        from ...llm import get_model

        get_model(options.model)  # an unknown name or a missing key is said now, not once per row
    if agent.trace and options.isolation == "tab" and options.concurrency > 1 and options.executor is None:
        raise ValueError(
            "trace=True records one trace per browser context, and rows in tabs share one: use "
            "isolation='context' (or concurrency=1)."
        )
    _check_budgets(agent, options)
    if options.executor is not None:
        _check_shippable(agent, options)
    elif options.model is None and options.model_factory is None and _keeps_state(agent.model):
        raise ValueError(
            f"The model {agent.model.provider}:{agent.model.id} plays one script in order, so rows sharing it would "
            "take each other's answers: give map() a model_factory= (a function of the row returning a model)."
        )


def least_row(agent: Runner, task: str, model: object | None = None) -> Ledger:
    """At least what one row of ``task`` costs: its first model call (map_budget.py ``first_call``), priced at
    ``model``'s prices (None: not known, the cost is None)."""
    return first_call(f"{agent.full_system_prompt}\n{task}", model)


def _check_budgets(agent: Runner, options: MapOptions) -> None:
    """The map's and each row's budget, checked against the rows' model (known here unless a factory makes one
    per row): priced for a cost budget, and larger than one row's first call."""
    rows = Budget(agent.max_cost, agent.max_tokens)
    if not (rows or options.budget):
        return
    model: object | None = agent.model  # None: each row's own, not known before the row (a factory, a worker's)
    if options.model_factory is not None or (options.model is not None and options.executor is not None):
        model = None
    elif options.model is not None:
        from ...llm import get_model

        model = get_model(options.model)
    least = least_row(agent, "", model) if options.pilots is None else None  # a recipe's row may call no model
    check_budgets(rows, options.budget, model, least)


def _keeps_state(model: Model) -> bool:
    """Whether one model object cannot serve rows side by side: it says so (``stateful``), or it is a scripted
    model with a script (each call takes the next answer). The demo model computes each answer from the request,
    so one serves every row."""
    said = getattr(model, "stateful", None)
    if said is not None:
        return bool(said)
    return isinstance(model, ScriptedModel) and bool(model.script)


def _check_shippable(agent: Runner, options: MapOptions) -> None:
    """With an executor, what travels to the workers must pickle; the model travels as a name or a factory."""
    if options.model is None and options.model_factory is None:
        raise ValueError(
            "With executor=, each worker builds its own model: pass model='provider:model' (e.g. model='demo') or "
            "model_factory= a function of the row defined at module level (so it can be pickled)."
        )
    if options.interactive:
        raise ValueError("interactive=True answers approvals in this process; rows on an executor cannot wait for it.")
    if isinstance(options.executor, concurrent.futures.ThreadPoolExecutor):
        return  # threads share this process: nothing is pickled
    dumps = _dumps_for(options.executor)
    shipped = shippable_agent(agent)
    parts = {f"the agent's {k}": v for k, v in vars(shipped).items()}
    parts["model_factory"] = options.model_factory
    bad = []
    for name, value in parts.items():
        try:
            dumps(value)
        except Exception as exc:
            bad.append(f"{name} ({type(exc).__name__}: {exc})")
    if bad:
        raise ValueError(
            "With executor=, every row travels to a worker, and these cannot be pickled: "
            + "; ".join(bad)
            + ". Use functions and classes defined at module level, and model='provider:model' or a module-level "
            "model_factory for the model."
        )


def _dumps_for(executor: concurrent.futures.Executor | None) -> Callable[[Any], bytes]:
    """Dask pickles with cloudpickle (closures and lambdas travel); a process pool with pickle."""
    if type(executor).__module__.split(".")[0] in ("distributed", "dask"):
        with contextlib.suppress(ImportError):
            import cloudpickle

            return cloudpickle.dumps
    return pickle.dumps
