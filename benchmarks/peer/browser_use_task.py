"""Peer harness: run the open-source agent browser-use on one task against a local OpenAI-compatible server.

Benchmark-only. It runs inside its own virtualenv, ``.venv-peer`` (``scripts/setup_peer.sh``), because browser-use
pins pydantic/openai/httpx versions that conflict with notebook_agent's; so it must not import notebook_agent, and
it never goes into ``.venv``.

Reads one JSON object from stdin::

    {"task": str, "url": str, "base_url": "http://127.0.0.1:PORT/v1", "model": str, "max_steps": int,
     "executable_path": "/usr/bin/chromium", "js": "() => ..." | null, "use_vision": false,
     "llm_timeout": 300, "max_failures": 2, "max_completion_tokens": 4096}    # the last three are optional

and prints browser-use's logs to stderr and one line to stdout, ``PEER-RESULT {json}``, with the answer, the
claimed success, per-step actions/validity/LLM time/tokens (prompt, cached, completion; summed over every HTTP call
of the step, counted in ``calls``), the final page's URL and text, the ``js`` check on it, an error and the wall
time. Exit 0 whatever the agent did (its failure is data), 2 on bad input.

Run: .venv-peer/bin/python benchmarks/peer/browser_use_task.py < task.json

What is changed from browser-use's defaults, and why:
- no network but the given server: telemetry, cloud sync, the version check and the cloud hints are off (env
  vars below), and the default extensions (uBlock/cookie/ClearURLs, downloaded at start) are not used;
- the judge (``use_judge``, one more LLM call after ``done`` that grades the run and only logs its verdict) is off:
  it doesn't change the agent's answer and would add a long call to the figures. Planning needs no call of its own
  in this version (plan fields in the step's output) and stays on; the ``extract`` tool and message compaction use
  the same llm (browser-use's default) and their calls are counted in the step that made them;
- the start page is loaded by ``initial_actions`` (navigate) before step 1, without a model call;
- the openai client retries once (browser-use's default is 5) and ``max_failures`` is 2 (default 5), so a dead
  server ends the run in seconds; the LLM timeout is raised from 75 s to ``llm_timeout`` (a CPU model is slow).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import httpx

for _key, _value in {
    "ANONYMIZED_TELEMETRY": "false",
    "BROWSER_USE_CLOUD_SYNC": "false",
    "BROWSER_USE_VERSION_CHECK": "false",
    "BROWSER_USE_CLOUD_HINTS": "false",
    "BROWSER_USE_DISABLE_EXTENSIONS": "1",
}.items():
    os.environ[_key] = _value

TEXT_LIMIT = 20_000
NO_ACTION = "No next action returned by LLM!"  # the done() browser-use puts in when the model gave no action twice
REAL_STDOUT = sys.stdout


class BadInput(ValueError):
    pass


@dataclass
class Call:
    step: int
    seconds: float = 0.0
    status: int | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0


class Recorder(httpx.AsyncBaseTransport):
    """An httpx transport around the openai client's: each chat-completions request, its wall time (also when it
    fails or is cancelled by browser-use's timeout) and the server's usage (``usage.prompt_tokens_details.
    cached_tokens``, else llama-server's ``timings.cache_n``), filed under the agent's step number at the time."""

    def __init__(self) -> None:
        self.agent: Any = None
        self.calls: list[Call] = []
        self._inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not request.url.path.endswith("/chat/completions"):
            return await self._inner.handle_async_request(request)
        call = Call(step=self.agent.state.n_steps if self.agent is not None else 0)
        self.calls.append(call)
        started = time.perf_counter()
        try:
            response = await self._inner.handle_async_request(request)
            await response.aread()
        finally:
            call.seconds = time.perf_counter() - started
        call.status = response.status_code
        try:
            body = json.loads(response.content)
        except ValueError:
            return response
        if not isinstance(body, dict):
            return response
        usage, timings = body.get("usage") or {}, body.get("timings") or {}
        call.prompt_tokens = int(usage.get("prompt_tokens") or 0)
        call.completion_tokens = int(usage.get("completion_tokens") or 0)
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        call.cached_tokens = int(cached if cached is not None else timings.get("cache_n") or 0)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def read_input(raw: str) -> dict[str, Any]:
    try:
        spec = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BadInput(f"stdin is not JSON: {exc}") from exc
    if not isinstance(spec, dict):
        raise BadInput("stdin must hold one JSON object")
    for key in ("task", "url", "base_url", "model", "executable_path"):
        if not isinstance(spec.get(key), str) or not spec[key]:
            raise BadInput(f"{key!r} must be a non-empty string")
    numbers = {"max_steps": None, "llm_timeout": 300, "max_failures": 2, "max_completion_tokens": 4096}
    for key, default in numbers.items():
        value = spec.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise BadInput(f"{key!r} must be a positive integer")
        spec[key] = value
    if spec.get("js") is not None and not isinstance(spec["js"], str):
        raise BadInput("'js' must be a string (a JS arrow function) or null")
    spec.setdefault("use_vision", False)
    if not isinstance(spec["use_vision"], bool):
        raise BadInput("'use_vision' must be a boolean")
    if not (os.path.isfile(spec["executable_path"]) and os.access(spec["executable_path"], os.X_OK)):
        raise BadInput(f"executable_path {spec['executable_path']!r} is not an executable")
    return spec


def action_text(action: Any) -> str:
    dumped = action.model_dump(exclude_none=True, mode="json")
    return "".join(f"{name}{json.dumps(args, separators=(',', ':'))}" for name, args in dumped.items())


def step_rows(history: Any, calls: list[Call]) -> list[dict[str, Any]]:
    """One row per agent step (step 0, the initial navigation, and browser-use's closing 'max steps' entry are
    left out), with the LLM calls made while the agent was on that step."""
    rows: dict[int, dict[str, Any]] = {}
    for item in history.history:
        number = item.metadata.step_number if item.metadata is not None else 0
        if number < 1:
            continue
        actions = [action_text(a) for a in (item.model_output.action if item.model_output else [])]
        actions = [a for a in actions if a]
        no_action = any(a.startswith("done") and NO_ACTION in a for a in actions)
        rows[number] = {
            "step": number,
            "actions": actions,
            "valid": bool(actions) and not no_action,
            "step_s": round(item.metadata.step_end_time - item.metadata.step_start_time, 3),
            "result_error": next((r.error for r in item.result if r.error), None),
        }
    for call in calls:
        if call.step >= 1 and call.step not in rows:  # a step that timed out before browser-use recorded it
            rows[call.step] = {"step": call.step, "actions": [], "valid": False, "step_s": None, "result_error": None}
    for number, row in rows.items():
        mine = [c for c in calls if c.step == number]
        row["calls"] = len(mine)
        row["model_s"] = round(sum(c.seconds for c in mine), 3) if mine else row["step_s"]
        for key in ("prompt_tokens", "cached_tokens", "completion_tokens"):
            row[key] = sum(getattr(c, key) for c in mine)
    return [rows[n] for n in sorted(rows)]


async def evaluate(session: Any, expression: str) -> Any:
    cdp = await session.get_or_create_cdp_session()
    result = await cdp.cdp_client.send.Runtime.evaluate(
        params={"expression": expression, "returnByValue": True, "awaitPromise": True}, session_id=cdp.session_id
    )
    if "exceptionDetails" in result:
        raise RuntimeError(f"JS failed: {result['exceptionDetails'].get('text', '')}")
    return result.get("result", {}).get("value")


async def final_page(session: Any, js: str | None, out: dict[str, Any]) -> None:
    out["final_url"] = await session.get_current_page_url()
    text = await evaluate(session, "document.body ? document.body.innerText : ''")
    out["final_text"] = (text or "")[:TEXT_LIMIT]
    if js is not None:
        check = f"(async () => {{ try {{ return !!(await ({js})()); }} catch (e) {{ return false; }} }})()"
        out["js_ok"] = bool(await evaluate(session, check))  # a check that throws is a failed check


async def run(spec: dict[str, Any], workdir: str) -> dict[str, Any]:
    from browser_use import Agent, BrowserProfile, BrowserSession, ChatOpenAI

    started = time.perf_counter()
    out: dict[str, Any] = {"answer": "", "success_claimed": None, "done": False, "steps": [], "final_url": None}
    out |= {"final_text": "", "js_ok": None, "error": None}
    recorder = Recorder()
    http = httpx.AsyncClient(transport=recorder)
    llm = ChatOpenAI(
        model=spec["model"],
        base_url=spec["base_url"],
        api_key="not-needed",
        temperature=0,
        max_retries=1,
        max_completion_tokens=spec["max_completion_tokens"],
        timeout=float(spec["llm_timeout"]),
        http_client=http,
    )
    profile = BrowserProfile(
        executable_path=spec["executable_path"],
        headless=True,
        chromium_sandbox=False,  # --no-sandbox: we run as root
        enable_default_extensions=False,
        user_data_dir=os.path.join(workdir, "profile"),
        downloads_path=os.path.join(workdir, "downloads"),
        keep_alive=False,
    )
    session = BrowserSession(browser_profile=profile)
    agent = Agent(
        task=spec["task"],
        llm=llm,
        browser_session=session,
        initial_actions=[{"navigate": {"url": spec["url"], "new_tab": False}}],
        directly_open_url=False,
        use_vision=spec["use_vision"],
        use_judge=False,
        max_failures=spec["max_failures"],
        llm_timeout=spec["llm_timeout"],
        step_timeout=spec["llm_timeout"] + 120,
        file_system_path=os.path.join(workdir, "files"),
        enable_signal_handler=False,
        calculate_cost=False,
    )
    recorder.agent = agent
    real_close = agent.close

    async def keep_open() -> None:  # run() closes the browser at its end: the final page is read first
        return None

    # browser_use is typed where it is installed (the peer's own environment), and untyped (Any) here
    agent.close = keep_open  # type: ignore[method-assign, unused-ignore]
    history = None
    try:
        cap = spec["max_steps"] * (spec["llm_timeout"] + 180) + 120
        history = await asyncio.wait_for(agent.run(max_steps=spec["max_steps"]), timeout=cap)
    except TimeoutError:
        out["error"] = f"the run did not end within {cap} s"
    except Exception as exc:  # the agent's failure is data
        out["error"] = f"{type(exc).__name__}: {exc}"
    history = history if history is not None else agent.history
    try:
        await asyncio.wait_for(final_page(session, spec.get("js"), out), timeout=30)
    except Exception as exc:
        out["error"] = out["error"] or f"reading the final page failed: {type(exc).__name__}: {exc}"
    with contextlib.suppress(Exception):
        await asyncio.wait_for(real_close(), timeout=30)
    with contextlib.suppress(Exception):
        await http.aclose()

    out["done"] = history.is_done()
    out["success_claimed"] = history.is_successful()
    out["answer"] = (history.final_result() or "") if out["done"] else ""
    out["steps"] = steps = step_rows(history, recorder.calls)
    if out["error"] is None and not out["done"]:
        # browser-use gives up after max_failures + 1 consecutive failed steps; say why, as when no call succeeded
        answered = any(c.status == 200 for c in recorder.calls)
        gave_up = agent.state.consecutive_failures >= spec["max_failures"] + 1 and len(steps) < spec["max_steps"]
        last = next((s["result_error"] for s in reversed(steps) if s["result_error"]), None)
        if gave_up or (steps and not answered):
            out["error"] = f"{'stopped after consecutive failures' if gave_up else 'no LLM call succeeded'}: {last}"
    out["seconds"] = round(time.perf_counter() - started, 3)
    return out


def main() -> int:
    try:
        spec = read_input(sys.stdin.read())
    except BadInput as exc:
        print(f"browser_use_task: bad input: {exc}", file=sys.stderr)
        return 2
    workdir = tempfile.mkdtemp(prefix="peer-browser-use-")
    os.environ.setdefault("BROWSER_USE_CONFIG_DIR", os.path.join(workdir, "config"))
    tempfile.tempdir = workdir  # browser-use's agent directory, screenshots and temp files go here and are removed
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(sys.stderr):  # anything browser-use prints is a log
            out = asyncio.run(run(spec, workdir))
    except Exception as exc:  # a crash outside the run (import, setup): still one result line
        out = {"answer": "", "success_claimed": None, "done": False, "steps": [], "final_url": None}
        out |= {"final_text": "", "js_ok": None, "error": f"{type(exc).__name__}: {exc}"}
        out["seconds"] = round(time.perf_counter() - started, 3)
    finally:
        tempfile.tempdir = None
        shutil.rmtree(workdir, ignore_errors=True)
    REAL_STDOUT.write("PEER-RESULT " + json.dumps(out, ensure_ascii=False) + "\n")
    REAL_STDOUT.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
