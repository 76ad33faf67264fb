"""The page agent: one step = state message → model → action, on top of the browser layer.

``PageAgent`` (page_agent.py) holds a run's settings; ``PageRun`` (run.py) drives the core loop; the state
message and observations (state.py), the ``AgentOutput`` macro tool and output repair (macro.py), approval
policies and the one-life Approval (approval.py), results (results.py), the page events every view consumes
(events.py), run files (runs.py, written by recorder.py), suite evaluation
(evaluate.py), one task over many rows (mapping.py, map_rows.py, map_table.py) and the system prompt
(prompt.py, prompts/) each have a module of their own.
"""

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
    "MapCounts",
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
