"""MiniWoB++ task pages from the ``miniwob`` wheel, served on 127.0.0.1 so that a page starts its own episode.

The package's gym environment opens a task page, then runs ``Math.seedrandom(seed)`` and
``core.startEpisodeReal()`` through Selenium, and reads ``WOB_REWARD_GLOBAL`` / ``WOB_RAW_REWARD_GLOBAL`` /
``WOB_DONE_GLOBAL`` after each action. Here no driver runs that JS for the agent: the server adds one script to
every task page that does the same on load when the URL has ``?seed=N``, so both agents measured (ours and a peer
in its own browser) start the same episode from the same URL with no setup call, and the harness reads the
reward from the page afterwards (:data:`READ_JS`).

Two changes from the gym's defaults, as other LLM-agent harnesses make them: the episode timer is an hour
instead of ten seconds (a model thinks for seconds per step), and the figure is the raw reward, without the
time penalty. The script also keeps the first completed episode's reward: when an episode ends MiniWoB shows its
START cover, and an agent that clicks it starts a new problem, so the last reward alone would hide a success
undone (or a failure retried).
"""

from __future__ import annotations

import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from pathlib import Path
from typing import Any

EPISODE_MS = 3_600_000

START_SCRIPT = """<script>
(function () {
  var seed = core.QueryString.seed;
  if (seed === undefined) return;
  var wob = window.__wob = {started: 0, ended: 0, first: null};
  var end = core.endEpisode, start = core.startEpisodeReal;
  core.endEpisode = function (reward, timeProportional, reason) {
    var live = core.EP_TIMER !== null;  // MiniWoB rewards only the first end of an episode
    var out = end.apply(this, arguments);
    if (live) {
      wob.ended++;
      if (wob.first === null) {
        wob.first = {raw: WOB_RAW_REWARD_GLOBAL, reward: WOB_REWARD_GLOBAL, reason: String(WOB_REWARD_REASON)};
      }
    }
    return out;
  };
  core.startEpisodeReal = function () { wob.started++; return start.apply(this, arguments); };
  window.addEventListener('load', function () {
    setTimeout(function () {
      Math.seedrandom(seed);
      core.EPISODE_MAX_TIME = EPISODE_MS;
      core.startEpisodeReal();
    }, 0);
  });
})();
</script>
""".replace("EPISODE_MS", str(EPISODE_MS))

READY_JS = "() => !!(window.__wob && window.__wob.started > 0 && window.WOB_TASK_READY !== false)"
READ_JS = """() => ({
  first: window.__wob ? window.__wob.first : null,
  started: window.__wob ? window.__wob.started : 0,
  ended: window.__wob ? window.__wob.ended : 0,
  done: !!window.WOB_DONE_GLOBAL,
  raw: window.WOB_RAW_REWARD_GLOBAL,
  utterance: (window.core && core.getUtterance) ? core.getUtterance() : '',
})"""


def html_root() -> Path:
    """The task HTML shipped in the ``miniwob`` wheel (``pip install miniwob``)."""
    # Found through the installed distribution, not ``import miniwob``: benchmarks/miniwob.py has that name.
    try:
        root = Path(str(metadata.distribution("miniwob").locate_file("miniwob/html"))).resolve()
    except metadata.PackageNotFoundError as exc:
        raise SystemExit("the MiniWoB++ benchmark needs the miniwob package: pip install miniwob") from exc
    if not (root / "miniwob").is_dir():
        raise SystemExit(f"the miniwob package at {root.parent} has no html/miniwob folder of task pages")
    return root


def task_names(root: Path | None = None) -> list[str]:
    return sorted(p.stem for p in ((root or html_root()) / "miniwob").glob("*.html"))


def serve(root: Path | None = None) -> tuple[ThreadingHTTPServer, str]:
    """Serve the html folder on 127.0.0.1, task pages with :data:`START_SCRIPT`; returns (server, base URL)."""
    directory = root or html_root()
    script = START_SCRIPT.encode()

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            file = directory / path.lstrip("/")
            if not (path.startswith("/miniwob/") and path.endswith(".html") and file.is_file()):
                super().do_GET()
                return
            html = file.read_bytes()
            at = html.rfind(b"</body>")
            html = html[:at] + script + html[at:] if at >= 0 else html + script
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(html)))
            self.send_header("cache-control", "no-store")
            self.end_headers()
            self.wfile.write(html)

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(directory)))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def task_url(base: str, task: str, seed: int) -> str:
    return f"{base}/miniwob/{task}.html?seed={seed}"
