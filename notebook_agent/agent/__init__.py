"""The page agent: one step = state message → model → action, on top of the browser layer.

``PageAgent`` (page_agent.py) holds a run's settings; ``PageRun`` (run.py) drives the core loop; the state
message and observations (state.py), the ``AgentOutput`` macro tool and output repair (macro.py), approval
policies and the one-life Approval (approval.py), results (results.py), the page events every view consumes
(events.py), run files (runs.py, written by recorder.py), suite evaluation
(evaluate.py), one task over many rows (mapping.py, map_rows.py, map_table.py) and the system prompt
(prompt.py, prompts/) each have a module of their own.
"""

from .approval import (
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
from .events import (
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
from .macro import MACRO_NAME, agent_output, macro_spec, parse_output
from .mapping import (
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
from .pilot import Pilot
from .prompt import default_system_prompt, prompt_hash
from .recipe import Recipe, RecipeError
from .recipe_map import RecipeMapResult
from .results import PageAgentResult, PageStep, Status, StepRequest
from .runs import compare_runs, find_run, list_runs, load_run, save_run
from .toolset import BUILTIN_ORDER

__all__ = [
    "BUILTIN_ORDER",
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
    "risk_reason",
    "save_run",
]
