"""``RunOptions``: what a person chooses for a run, as one typed value.

``%%agent``, ``%agent rerun``/``replay``, the terminal's ``run``/``map``/``replay`` and Python all describe a run
by the same value, so an option means the same everywhere and is checked once: the fronts parse their flags
with the one parser (:mod:`notebook_agent.config.run_flags`), which checks every value by the rules of
:mod:`notebook_agent.config.options` and builds this value; the agent takes it (:meth:`RunOptions.make_agent`,
:meth:`RunOptions.map_options`, :meth:`RunOptions.replay_options`).

A field left ``None`` was not chosen: the front fills its own default (:meth:`RunOptions.with_defaults`: a kernel's
``%agent config``, a terminal's approval question), and what is still ``None`` is the agent's default.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .safety.approval import PolicyName

if TYPE_CHECKING:
    from .page_agent import PageAgent


@dataclass(frozen=True)
class RunOptions:
    """The options of one run (or of a map or replay), each already checked.

    ``model``: a model name (``provider:model``, ``demo``, ``replay:RUN``), resolved by the front (an alias in a
    notebook names a model). ``url``: where the run starts (a replay: the base URL the recorded one is replaced
    by; a map: a template with ``{column}``s). ``approve``: an approval policy's name. ``tracing``: send the run as an
    OpenTelemetry trace (None: as the ``OTEL_*`` settings say). ``output``: the answer's
    type, already found (a class, ``list[...]`` of one, or a JSON Schema dict). ``heal``: a replayed step that
    cannot be replayed goes to the model. ``recipe``: the run or recipe a map replays per row, as typed. ``mode``:
    how a recipe map's rows go (``auto``, ``request``, ``page``: agent/recipes/calls/rows.py). ``max_cost``,
    ``max_tokens``: a run's budget, or a map's whole budget; ``row_max_cost``, ``row_max_tokens``: each row's budget
    in a map.
    """

    model: str | None = None
    url: str | None = None
    max_steps: int | None = None
    approve: PolicyName | None = None
    timeout: float | None = None
    profile: str = "auto"
    prompt: str | None = None
    vision: bool | None = None
    js: bool = False
    ask: bool = False
    full_page: bool = False
    trace: bool = False
    tracing: bool | None = None
    headed: bool = False
    output: Any = None
    allowed_domains: tuple[str, ...] = ()
    heal: bool = True
    concurrency: int | None = None
    recipe: str | None = None
    mode: str | None = None
    max_cost: float | None = None
    max_tokens: int | None = None
    row_max_cost: float | None = None
    row_max_tokens: int | None = None

    def with_defaults(self, **defaults: Any) -> RunOptions:
        """This value with each field still ``None`` set from ``defaults`` (a front's own defaults)."""
        unknown = set(defaults) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise TypeError(f"RunOptions has no field {', '.join(sorted(unknown))}")
        chosen = {k: v for k, v in defaults.items() if getattr(self, k) is None}
        return dataclasses.replace(self, **chosen) if chosen else self

    def agent_options(self, *, row: bool = False) -> dict[str, Any]:
        """The :class:`~.page_agent.PageAgent` keywords these options set (a field left ``None`` is left out, so the
        agent's default holds). The model is not among them: the front resolves the name to a model. ``row``: the
        agent runs a map's rows, so its budget is each row's (the map keeps the whole one: :meth:`map_options`)."""
        chosen: dict[str, Any] = {
            "max_cost": self.row_max_cost if row else self.max_cost,
            "max_tokens": self.row_max_tokens if row else self.max_tokens,
            "max_steps": self.max_steps,
            "approval": self.approve,
            "approval_timeout": self.timeout,
            "vision": self.vision,
            "start_url": self.url,
            "output": self.output,
        }
        kwargs = {k: v for k, v in chosen.items() if v is not None}
        kwargs.update(enable_javascript=self.js, full_page=self.full_page, trace=self.trace, profile=self.profile)
        if self.allowed_domains:
            kwargs["allowed_domains"] = list(self.allowed_domains)
        if self.tracing is not None:
            kwargs["tracing"] = self.tracing
        return kwargs

    def make_agent(self, model: Any = None, *, row: bool = False, **more: Any) -> PageAgent[Any]:
        """The :class:`~.page_agent.PageAgent` of these options with ``model`` (a model or a name) and ``more``
        keywords a front adds (``browser``, ``approver``, ``runs_dir`` ...), which win over the options'. ``row``:
        the agent of a map's rows (see :meth:`agent_options`)."""
        from .page_agent import PageAgent

        return PageAgent(model=model, **{**self.agent_options(row=row), **more})

    def map_options(self) -> dict[str, Any]:
        """The keywords of :meth:`PageAgent.map` these options set (each row's start URL is ``url``'s template; the
        map's whole budget)."""
        kwargs: dict[str, Any] = {"start_url": self.url}
        if self.concurrency is not None:
            kwargs["concurrency"] = self.concurrency
        for name in ("max_cost", "max_tokens"):
            if getattr(self, name) is not None:
                kwargs[name] = getattr(self, name)
        return kwargs

    def replay_options(self) -> dict[str, Any]:
        """The keywords of :meth:`PageAgent.replay` these options set (``url``: the base URL to replay against)."""
        return {"heal": self.heal, "url": self.url}
