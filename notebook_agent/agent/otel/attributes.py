"""What each span of a run carries: the OpenTelemetry GenAI semantic conventions where they say, ``notebook_agent.*``
for the rest, and every string through the run's redactor first.

A model call is a ``chat {model}`` span (``gen_ai.operation.name``, ``gen_ai.provider.name`` and its older name
``gen_ai.system``, ``gen_ai.request.model``, ``gen_ai.response.model``, ``gen_ai.response.finish_reasons`` and
``gen_ai.usage.*``, whose ``input_tokens`` counts cached tokens too, as the conventions say); the run is an
``invoke_agent`` span with the run's totals; an action an ``execute_tool`` span. What a person reads (the task, the
prompts with the page text in them, the model's output, an action's arguments and result, the answer) goes in only
with the content opt-in (:func:`.settings.content_wanted`), as the conventions' opt-in messages.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...core.messages import Usage
from ...core.text import map_strings
from ..runs.result import PageAgentResult, PageStep

Scrub = Callable[[str], str]

PROVIDER_NAMES = {
    "openai": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "google": "gcp.gen_ai",
    "mistral": "mistral_ai",
}
"""This package's provider names as the conventions' ``gen_ai.provider.name`` values (others pass as they are)."""

FINISH_REASONS = {"stop": "stop", "length": "length", "toolUse": "tool_call", "error": "error", "aborted": "cancelled"}

DETAILS = "gen_ai.client.inference.operation.details"
"""The span event a model call's opt-in content goes in."""


def provider_name(provider: str) -> str:
    return PROVIDER_NAMES.get(provider, provider)


def usage(u: Usage) -> dict[str, Any]:
    """Token counts as the conventions count them (input includes cache reads and writes), and the cost in USD."""
    out: dict[str, Any] = {
        "gen_ai.usage.input_tokens": u.input + u.cache_read + u.cache_write,
        "gen_ai.usage.output_tokens": u.output,
    }
    if u.cache_read:
        out["gen_ai.usage.cache_read.input_tokens"] = u.cache_read
    if u.cache_write:
        out["gen_ai.usage.cache_creation.input_tokens"] = u.cache_write
    if u.cost is not None and u.cost.total:  # unknown (None) or free: no cost attribute
        out["notebook_agent.usage.cost_usd"] = u.cost.total
    return out


def run_start(model_id: str, provider: str, kind: str, follows: str) -> dict[str, Any]:
    name = provider_name(provider)
    out: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "notebook_agent",
        "gen_ai.request.model": model_id,
        "gen_ai.provider.name": name,
        "gen_ai.system": name,
        "notebook_agent.run.kind": kind,
    }
    if follows:
        out["notebook_agent.run.follows"] = follows
    return out


def run_end(result: PageAgentResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "gen_ai.conversation.id": result.run_id,
        "notebook_agent.run.id": result.run_id,
        "notebook_agent.run.status": result.status,
        "notebook_agent.run.success": result.success,
        "notebook_agent.run.steps": len(result.steps),
        **usage(result.usage),
    }
    for kind, count in result.replay_counts.items():
        out[f"notebook_agent.replay.{kind}"] = count
    return out


def model_call(step: PageStep, requested: str, provider: str) -> dict[str, Any]:
    """A model call's attributes; ``requested``, ``provider``: the run's model, for a call that failed before
    the model answered anything."""
    out = step.output
    name = provider_name(out.provider if out is not None and out.provider else provider)
    reason = FINISH_REASONS.get(out.stop_reason, out.stop_reason) if out is not None else "error"
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": name,
        "gen_ai.system": name,
        "gen_ai.request.model": requested,
        "gen_ai.response.model": out.model if out is not None and out.model else requested,
        "gen_ai.response.finish_reasons": [reason],
        "notebook_agent.step.index": step.index,
        **usage(step.usage),
    }
    if out is not None and out.output_mode:
        attrs["notebook_agent.output_mode"] = out.output_mode
    if step.replay:
        attrs["notebook_agent.step.replay"] = step.replay
    return attrs


def step_end(step: PageStep, scrub: Scrub) -> dict[str, Any]:
    out: dict[str, Any] = {"notebook_agent.step.index": step.index, "notebook_agent.step.is_error": step.is_error}
    if step.action:
        out["notebook_agent.step.action"] = step.action
    if step.url:
        out["url.full"] = scrub(step.url)
    if step.replay:
        out["notebook_agent.step.replay"] = step.replay
    if step.stopped:
        out["notebook_agent.step.stopped"] = True
    if step.output_error:
        out["notebook_agent.step.output_error"] = scrub(step.output_error)[:500]
    return out


def action_start(action: str) -> dict[str, Any]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": action, "gen_ai.tool.type": "function"}


def action_content(step: PageStep, scrub: Scrub) -> dict[str, Any]:
    """An action's arguments and result (opt-in: both may hold page text or what was typed)."""
    return {
        "gen_ai.tool.call.arguments": as_json(map_strings(step.args, scrub)),
        "gen_ai.tool.call.result": scrub(step.result),
    }


def model_content(step: PageStep, scrub: Scrub, *, system: bool = True) -> dict[str, Any]:
    """A model call's prompts and output as the conventions' opt-in messages: the system prompt (``system``: a run
    sends the same one every step, so it goes with the first call and again only if it changed), the state message
    (with the page's text) and what the model wrote (text, reasoning, the call)."""
    out: dict[str, Any] = {}
    request = step.request
    if request is not None and system:
        out["gen_ai.system_instructions"] = as_json([{"type": "text", "content": scrub(request.system_prompt)}])
    if request is not None:
        out["gen_ai.input.messages"] = as_json([{"role": "user", "parts": [_text(scrub(request.state))]}])
    if step.output is not None:
        parts = []
        for part in step.output.model_dump(mode="json")["content"]:
            if part.get("type") == "text":
                parts.append(_text(part.get("text", "")))
            elif part.get("type") == "thinking":
                parts.append({"type": "reasoning", "content": part.get("thinking", "")})
            elif part.get("type") == "toolCall":
                call = {k: part.get(k) for k in ("id", "name", "arguments")}
                parts.append({"type": "tool_call", **call})
        reason = FINISH_REASONS.get(step.output.stop_reason, step.output.stop_reason)
        message = {"role": "assistant", "parts": parts, "finish_reason": reason}
        out["gen_ai.output.messages"] = as_json([map_strings(message, scrub)])
    return out


def run_content(task: str, result: PageAgentResult | None, scrub: Scrub) -> dict[str, Any]:
    """The run's request and answer (opt-in)."""
    out = {"gen_ai.input.messages": as_json([{"role": "user", "parts": [_text(scrub(task))]}])}
    if result is not None:
        said = result.answer or result.error or ""
        out["gen_ai.output.messages"] = as_json([{"role": "assistant", "parts": [_text(scrub(said))]}])
    return out


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "content": text}


def as_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
