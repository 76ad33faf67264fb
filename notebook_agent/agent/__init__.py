"""The page agent: one step = state message → model → action, on top of the browser layer.

Its front modules are the entry points: ``page_agent`` (``PageAgent``: a run's settings, ``run``, ``stream``,
``copy``, and ``map`` and ``replay`` from the engines below), ``run_options`` (a run's options as one typed value),
``evaluate`` (variants over a task suite) and ``recipes`` (a run done again for every row of a table, free). Its
sub-packages, in the order they may import each other:

- ``safety``: what a run may do, decided before it happens: approval policies, domains, secrets, effects, downloads;
- ``runs``: what a run leaves, as data: its result, its page events, its tables and answer, its run file, a
  Playwright script made from it;
- ``prompt``: what the model reads and writes: the state message, the system prompts and profiles, the actions
  offered (``toolset``, ``offers``), the ``AgentOutput`` macro tool;
- ``step``: one run, step by step: the loop's hooks (``run``) around one explicit state (``run_state``), the gate,
  the loop guard, the claim check, pilots (who decides a step when it is not the model), typed answers;
- ``otel``: a run, a replay and a map as OpenTelemetry traces, made from the page events (imported only when
  tracing is on);
- ``batch``: one task over many rows, here or on an executor.
"""

from .batch.map_budget import EstimateQuestion, MapEstimate, MapEstimated
from .batch.map_counts import MapCounts
from .batch.map_runner import (
    MapEvent,
    MapFinished,
    MapInputError,
    MapInterrupted,
    MapProgress,
    MapResult,
    MapRow,
    RowEvent,
)
from .page_agent import PageAgent
from .prompt.agent_output import MACRO_NAME, agent_output, macro_spec, parse_output
from .prompt.system_prompt import default_system_prompt, prompt_hash
from .recipes.recipe import Recipe
from .recipes.recipe_map import RecipeMapResult
from .recipes.slots import RecipeError
from .run_options import RunOptions
from .runs.events import (
    ActionFinished,
    ActionProgress,
    ActionStarted,
    AnyEvent,
    ApprovalAnswered,
    ApprovalRequested,
    ModelOutputParsed,
    PageEvent,
    ReflectionPartial,
    RunFinished,
    ScreenshotTaken,
    StepFinished,
    StepStarted,
)
from .runs.playwright_export import to_playwright, write_script
from .runs.result import PageAgentResult, PageStep, Status, StepRequest
from .runs.run_file import compare_runs, find_run, list_runs, load_run, save_run
from .safety.approval import (
    POLICY_NAMES,
    Approval,
    ApprovalAnswer,
    ApprovalRequest,
    Approver,
    PolicyFunction,
    PolicyName,
    check_policy,
    decide,
    risk_reason,
)
from .safety.secrets import CaseInsensitive
from .step.pilot import Pilot
from .step.replay_pilot import replay_model

__all__ = [
    "MACRO_NAME",
    "POLICY_NAMES",
    "ActionFinished",
    "ActionProgress",
    "ActionStarted",
    "AnyEvent",
    "Approval",
    "ApprovalAnswer",
    "ApprovalAnswered",
    "ApprovalRequest",
    "ApprovalRequested",
    "Approver",
    "CaseInsensitive",
    "EstimateQuestion",
    "MapCounts",
    "MapEstimate",
    "MapEstimated",
    "MapEvent",
    "MapFinished",
    "MapInputError",
    "MapInterrupted",
    "MapProgress",
    "MapResult",
    "MapRow",
    "ModelOutputParsed",
    "PageAgent",
    "PageAgentResult",
    "PageEvent",
    "PageStep",
    "Pilot",
    "PolicyFunction",
    "PolicyName",
    "Recipe",
    "RecipeError",
    "RecipeMapResult",
    "ReflectionPartial",
    "RowEvent",
    "RunFinished",
    "RunOptions",
    "ScreenshotTaken",
    "Status",
    "StepFinished",
    "StepRequest",
    "StepStarted",
    "agent_output",
    "check_policy",
    "compare_runs",
    "decide",
    "default_system_prompt",
    "find_run",
    "list_runs",
    "load_run",
    "macro_spec",
    "parse_output",
    "prompt_hash",
    "replay_model",
    "risk_reason",
    "save_run",
    "to_playwright",
    "write_script",
]
