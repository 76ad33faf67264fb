"""Each provider's real streaming wire format, scripted: one class per adapter with the same methods.

The shared contract tests call the same method (``text``, ``tool_calls``, ``thinking``...) on each class and
replay the result through :class:`ScriptedServer`, so every adapter is exercised through its real SDK on the
same scenarios. Chunks follow the providers' documented SSE shapes (event names, field names, terminal events).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any, ClassVar

from notebook_agent.llm import get_model
from tests.llm.server import Reply, StreamItem, json_reply, sse_reply

# Usage every scenario reports: 100 prompt tokens of which 40 cached, 20 output.
PROMPT, CACHED, OUTPUT = 100, 40, 20


@dataclass
class Call:
    id: str | None
    name: str
    fragments: list[str]

    @property
    def arguments(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads("".join(self.fragments))
        return value


def split(text: str, size: int = 3) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def interleave(calls: list[Call]) -> list[tuple[int, str]]:
    """Fragments of several calls, round-robin: (call index, fragment)."""
    out: list[tuple[int, str]] = []
    for frags in itertools.zip_longest(*(c.fragments for c in calls)):
        out.extend((i, f) for i, f in enumerate(frags) if f is not None)
    return out


class Wire:
    name: ClassVar[str]
    path_suffix: ClassVar[str] = ""
    model_id: str  # per class; a test may set another on its instance
    fragmented_args: ClassVar[bool] = True
    """False for Gemini, which sends function calls whole."""

    def model(self, url: str, **kw: Any) -> Any:
        kw.setdefault("api_key", "test-key")
        kw.setdefault("max_retries", 2)
        kw.setdefault("timeout", 5)
        return get_model(f"{self.name}:{self.model_id}", base_url=url + self.path_suffix, **kw)

    # scenarios, implemented per provider
    def text(self, chunks: list[str], *, usage: bool = True) -> Reply:
        return sse_reply(self.text_items(chunks, usage=usage))

    def text_items(self, chunks: list[str], *, usage: bool = True, terminal: bool = True) -> list[StreamItem]:
        raise NotImplementedError

    def tool_calls(self, calls: list[Call], *, mixed: bool = False, terminal: bool = True) -> list[StreamItem]:
        raise NotImplementedError

    def thinking(self, thinking: list[str], text: list[str], signature: str) -> list[StreamItem]:
        raise NotImplementedError

    def error(self, status: int, kind: str, message: str) -> Reply:
        raise NotImplementedError


# -- OpenAI Chat Completions ---------------------------------------------------------------------------


def chat_chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, usage: dict[str, Any] | None = None
) -> str:
    obj: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    obj["choices"] = (
        [] if delta is None and finish is None else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    )
    if usage is not None:
        obj["usage"] = usage
    return f"data: {json.dumps(obj)}\n\n"


CHAT_USAGE = {
    "prompt_tokens": PROMPT,
    "completion_tokens": OUTPUT,
    "total_tokens": PROMPT + OUTPUT,
    "prompt_tokens_details": {"cached_tokens": CACHED},
}


class ChatWire(Wire):
    name = "openai"
    path_suffix = "/v1"
    model_id = "gpt-4o-mini"
    tool_calls_field = "tool_calls"

    def terminal(self, finish: str) -> list[StreamItem]:
        return [chat_chunk({}, finish=finish), chat_chunk(usage=CHAT_USAGE), "data: [DONE]\n\n"]

    def text_items(self, chunks: list[str], *, usage: bool = True, terminal: bool = True) -> list[StreamItem]:
        items: list[StreamItem] = [chat_chunk({"role": "assistant", "content": ""})]
        items += [chat_chunk({"content": c}) for c in chunks]
        if terminal:
            items += self.terminal("stop") if usage else [chat_chunk({}, finish="stop"), "data: [DONE]\n\n"]
        return items

    def call_head(self, index: int, call: Call) -> dict[str, Any]:
        return {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}

    def tool_calls(self, calls: list[Call], *, mixed: bool = False, terminal: bool = True) -> list[StreamItem]:
        f = self.tool_calls_field
        items: list[StreamItem] = [chat_chunk({"role": "assistant", "content": "Let me act." if mixed else None})]
        items += [chat_chunk({f: [self.call_head(i, c)]}) for i, c in enumerate(calls)]
        items += [chat_chunk({f: [{"index": i, "function": {"arguments": frag}}]}) for i, frag in interleave(calls)]
        if terminal:
            items += self.terminal("tool_calls")
        return items

    def thinking(self, thinking: list[str], text: list[str], signature: str) -> list[StreamItem]:
        items: list[StreamItem] = [chat_chunk({"role": "assistant"})]
        items += [chat_chunk({"reasoning_content": t}) for t in thinking]
        items += [chat_chunk({"content": t}) for t in text]
        return items + self.terminal("stop")

    def error(self, status: int, kind: str, message: str) -> Reply:
        return json_reply(status, {"error": {"message": message, "type": kind, "code": kind}})


class MistralWire(ChatWire):
    """Mistral's OpenAI-compatible stream, with its quirks: camelCase ``toolCalls`` and the id "null"."""

    name = "mistral"
    model_id = "mistral-small-latest"
    tool_calls_field = "toolCalls"

    def terminal(self, finish: str) -> list[StreamItem]:
        # Mistral puts usage on the chunk that carries the finish reason.
        return [chat_chunk({}, finish=finish, usage=CHAT_USAGE), "data: [DONE]\n\n"]

    def call_head(self, index: int, call: Call) -> dict[str, Any]:
        return {"index": index, "id": "null", "function": {"name": call.name, "arguments": ""}}

    def thinking(self, thinking: list[str], text: list[str], signature: str) -> list[StreamItem]:
        items: list[StreamItem] = [chat_chunk({"role": "assistant", "content": ""})]
        items += [
            chat_chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": t}]}]}) for t in thinking
        ]
        items += [chat_chunk({"content": [{"type": "text", "text": t}]}) for t in text]
        return items + self.terminal("stop")


# -- OpenAI Responses ----------------------------------------------------------------------------------


class ResponsesWire(Wire):
    name = "openai-responses"
    path_suffix = "/v1"
    model_id = "gpt-5-mini"

    def __init__(self) -> None:
        self.seq = 0

    def ev(self, type_: str, **data: Any) -> str:
        self.seq += 1
        return f"event: {type_}\ndata: {json.dumps({'type': type_, 'sequence_number': self.seq, **data})}\n\n"

    def response(self, status: str, output: list[Any] | None = None, usage: bool = True) -> dict[str, Any]:
        resp: dict[str, Any] = {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "status": status,
            "model": self.model_id,
            "output": output or [],
        }
        if usage:
            resp["usage"] = {
                "input_tokens": PROMPT,
                "input_tokens_details": {"cached_tokens": CACHED},
                "output_tokens": OUTPUT,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": PROMPT + OUTPUT,
            }
        return resp

    def start(self) -> list[StreamItem]:
        return [self.ev("response.created", response=self.response("in_progress", usage=False))]

    def message(self, index: int, chunks: list[str], item_id: str = "msg_1") -> list[StreamItem]:
        item = {"id": item_id, "type": "message", "role": "assistant", "status": "in_progress", "content": []}
        part = {"type": "output_text", "text": "", "annotations": []}
        items: list[StreamItem] = [
            self.ev("response.output_item.added", output_index=index, item=item),
            self.ev("response.content_part.added", item_id=item_id, output_index=index, content_index=0, part=part),
        ]
        items += [
            self.ev("response.output_text.delta", item_id=item_id, output_index=index, content_index=0, delta=c)
            for c in chunks
        ]
        text = "".join(chunks)
        done = {**item, "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}
        items += [
            self.ev("response.output_text.done", item_id=item_id, output_index=index, content_index=0, text=text),
            self.ev("response.output_item.done", output_index=index, item=done),
        ]
        return items

    def text_items(self, chunks: list[str], *, usage: bool = True, terminal: bool = True) -> list[StreamItem]:
        items = self.start() + self.message(0, chunks)
        if terminal:
            items.append(self.ev("response.completed", response=self.response("completed", usage=usage)))
        return items

    def tool_calls(self, calls: list[Call], *, mixed: bool = False, terminal: bool = True) -> list[StreamItem]:
        items = self.start()
        offset = 0
        if mixed:
            items += self.message(0, ["Let me act."])
            offset = 1
        fc = lambda c, i: {  # noqa: E731
            "id": f"fc_{i}",
            "type": "function_call",
            "call_id": c.id or f"call_{i}",
            "name": c.name,
            "arguments": "",
            "status": "in_progress",
        }
        for i, c in enumerate(calls):
            items.append(self.ev("response.output_item.added", output_index=offset + i, item=fc(c, i)))
        for i, frag in interleave(calls):
            items.append(
                self.ev(
                    "response.function_call_arguments.delta", item_id=f"fc_{i}", output_index=offset + i, delta=frag
                )
            )
        if not terminal:
            return items
        for i, c in enumerate(calls):
            args = "".join(c.fragments)
            items.append(
                self.ev(
                    "response.function_call_arguments.done", item_id=f"fc_{i}", output_index=offset + i, arguments=args
                )
            )
            done = {**fc(c, i), "arguments": args, "status": "completed"}
            items.append(self.ev("response.output_item.done", output_index=offset + i, item=done))
        items.append(self.ev("response.completed", response=self.response("completed")))
        return items

    def thinking(self, thinking: list[str], text: list[str], signature: str) -> list[StreamItem]:
        item = {"id": "rs_1", "type": "reasoning", "summary": []}
        items = self.start()
        items += [
            self.ev("response.output_item.added", output_index=0, item=item),
            self.ev(
                "response.reasoning_summary_part.added",
                item_id="rs_1",
                output_index=0,
                summary_index=0,
                part={"type": "summary_text", "text": ""},
            ),
        ]
        items += [
            self.ev("response.reasoning_summary_text.delta", item_id="rs_1", output_index=0, summary_index=0, delta=t)
            for t in thinking
        ]
        done = {
            **item,
            "summary": [{"type": "summary_text", "text": "".join(thinking)}],
            "encrypted_content": signature,
        }
        items.append(self.ev("response.output_item.done", output_index=0, item=done))
        items += self.message(1, text)
        items.append(self.ev("response.completed", response=self.response("completed")))
        return items

    def error(self, status: int, kind: str, message: str) -> Reply:
        return json_reply(status, {"error": {"message": message, "type": kind, "code": kind}})


# -- Anthropic -----------------------------------------------------------------------------------------


def anth(type_: str, **data: Any) -> str:
    return f"event: {type_}\ndata: {json.dumps({'type': type_, **data})}\n\n"


class AnthropicWire(Wire):
    name = "anthropic"
    model_id = "claude-sonnet-4-6"

    def start(self) -> list[StreamItem]:
        message: dict[str, Any] = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": self.model_id,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": PROMPT - CACHED,
                "output_tokens": 1,
                "cache_read_input_tokens": CACHED,
                "cache_creation_input_tokens": 0,
            },
        }
        return [anth("message_start", message=message), anth("ping")]

    def end(self, reason: str) -> list[StreamItem]:
        return [
            anth(
                "message_delta", delta={"stop_reason": reason, "stop_sequence": None}, usage={"output_tokens": OUTPUT}
            ),
            anth("message_stop"),
        ]

    def text_block(self, index: int, chunks: list[str]) -> list[StreamItem]:
        items: list[StreamItem] = [anth("content_block_start", index=index, content_block={"type": "text", "text": ""})]
        items += [anth("content_block_delta", index=index, delta={"type": "text_delta", "text": c}) for c in chunks]
        return [*items, anth("content_block_stop", index=index)]

    def text_items(self, chunks: list[str], *, usage: bool = True, terminal: bool = True) -> list[StreamItem]:
        items = self.start() + self.text_block(0, chunks)
        return items + (self.end("end_turn") if terminal else [])

    def tool_calls(self, calls: list[Call], *, mixed: bool = False, terminal: bool = True) -> list[StreamItem]:
        items = self.start()
        offset = 0
        if mixed:
            items += self.text_block(0, ["Let me act."])
            offset = 1
        for i, c in enumerate(calls):
            block = {"type": "tool_use", "id": c.id or f"toolu_{i}", "name": c.name, "input": {}}
            items.append(anth("content_block_start", index=offset + i, content_block=block))
        for i, frag in interleave(calls):
            delta = {"type": "input_json_delta", "partial_json": frag}
            items.append(anth("content_block_delta", index=offset + i, delta=delta))
        if not terminal:
            return items
        items += [anth("content_block_stop", index=offset + i) for i in range(len(calls))]
        return items + self.end("tool_use")

    def thinking(self, thinking: list[str], text: list[str], signature: str) -> list[StreamItem]:
        items = self.start()
        items.append(
            anth("content_block_start", index=0, content_block={"type": "thinking", "thinking": "", "signature": ""})
        )
        items += [
            anth("content_block_delta", index=0, delta={"type": "thinking_delta", "thinking": t}) for t in thinking
        ]
        items.append(anth("content_block_delta", index=0, delta={"type": "signature_delta", "signature": signature}))
        items.append(anth("content_block_stop", index=0))
        return items + self.text_block(1, text) + self.end("end_turn")

    def error(self, status: int, kind: str, message: str) -> Reply:
        return json_reply(status, {"type": "error", "error": {"type": kind, "message": message}})


# -- Google Gemini -------------------------------------------------------------------------------------

GEMINI_USAGE = {
    "promptTokenCount": PROMPT,
    "cachedContentTokenCount": CACHED,
    "candidatesTokenCount": OUTPUT - 5,
    "thoughtsTokenCount": 5,
    "totalTokenCount": PROMPT + OUTPUT,
}


def gem(parts: list[dict[str, Any]], finish: str | None = None, usage: dict[str, Any] | None = None) -> str:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    obj: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-2.5-flash"}
    if usage:
        obj["usageMetadata"] = usage
    return f"data: {json.dumps(obj)}\r\n\r\n"


class GoogleWire(Wire):
    name = "google"
    model_id = "gemini-2.5-flash"
    fragmented_args = False

    def model(self, url: str, **kw: Any) -> Any:
        kw.setdefault("retry_options", {"initial_delay": 0.01, "max_delay": 0.02, "jitter": 0.0})
        return super().model(url, **kw)

    def text_items(self, chunks: list[str], *, usage: bool = True, terminal: bool = True) -> list[StreamItem]:
        items: list[StreamItem] = [gem([{"text": c}]) for c in chunks]
        if terminal:
            items.append(gem([], finish="STOP", usage=GEMINI_USAGE if usage else None))
        return items

    def tool_calls(self, calls: list[Call], *, mixed: bool = False, terminal: bool = True) -> list[StreamItem]:
        parts: list[dict[str, Any]] = [{"text": "Let me act."}] if mixed else []
        for c in calls:
            call: dict[str, Any] = {"name": c.name, "args": c.arguments}
            if c.id:
                call["id"] = c.id
            parts.append({"functionCall": call})
        if not terminal:
            return [gem(parts[:1])]
        return [gem(parts), gem([], finish="STOP", usage=GEMINI_USAGE)]

    def thinking(self, thinking: list[str], text: list[str], signature: str) -> list[StreamItem]:
        items: list[StreamItem] = [gem([{"text": t, "thought": True}]) for t in thinking[:-1]]
        items.append(gem([{"text": thinking[-1], "thought": True, "thoughtSignature": signature}]))
        items += [gem([{"text": t}]) for t in text]
        return [*items, gem([], finish="STOP", usage=GEMINI_USAGE)]

    def error(self, status: int, kind: str, message: str) -> Reply:
        statuses = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 401: "UNAUTHENTICATED", 400: "INVALID_ARGUMENT"}
        return json_reply(status, {"error": {"code": status, "message": message, "status": statuses.get(status, kind)}})


WIRES: dict[str, type[Wire]] = {
    "openai": ChatWire,
    "openai-responses": ResponsesWire,
    "anthropic": AnthropicWire,
    "google": GoogleWire,
    "mistral": MistralWire,
}
