"""The claim check (agent/step/requested_clicks.py) applied to episodes a MiniWoB++ run kept with ``--states``.

For each episode of ``benchmarks/miniwob.py --json FILE --states``, the run's clicks are replayed into a
:class:`ClaimCheck` with the elements each step's state message listed, and its first ``done`` claiming success
is judged against the page that step showed: would the check have questioned it? Printed per episode: the task's
reward, the claim, and whether the claim agrees with the reward as recorded and with the check applied. This
counts what the check would do to the decisions a model made; it cannot say what the model would have done next
after a refusal before its last step (a new run can).

    .venv/bin/python benchmarks/miniwob_claims.py FILE.json [--max-steps 4]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from notebook_agent.agent.step.requested_clicks import ClaimCheck

#: An element line of the state message: ``*[5]<button id=subbtn>Submit />``.
LINE = re.compile(r"^\s*\*?\[(\d+)\]<(\w+)([^>]*)>(.*?) />", re.MULTILINE)
ATTR = re.compile(r"([\w-]+)=(\S+)")


def elements(state: str) -> dict[int, dict[str, Any]]:
    """The page's elements as the state message lists them (tag, role, text, attributes)."""
    page = state.split("<browser_state>")[-1]
    out = {}
    for m in LINE.finditer(page):
        attrs = dict(ATTR.findall(m.group(3)))
        out[int(m.group(1))] = {
            "tag": m.group(2),
            "role": attrs.get("role", ""),
            "text": m.group(4),
            "attributes": attrs,
        }
    return out


def judged(episode: dict[str, Any], max_steps: int) -> tuple[str | None, bool]:
    """(what the check would say of the episode's claim or None, whether that claim was on the last step)."""
    check = ClaimCheck()
    states = episode.get("states") or []
    for i, action in enumerate(episode["actions"]):
        page = elements(states[i]) if i < len(states) else {}
        if action["action"] == "done":
            if not action["args"].get("success"):
                return None, False
            last = i + 1 >= max_steps
            return check.judge(episode["utterance"], page, last), last
        if not action["error"]:
            check.made(action["action"], page.get(action["args"].get("index", -1)))
    return None, False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file")
    parser.add_argument("--max-steps", type=int, default=4, help="the run's --max-steps")
    args = parser.parse_args()
    runs = [r for r in json.loads(Path(args.file).read_text())["runs"] if r["agent"] == "ours"]
    if not any(r.get("states") for r in runs):
        raise SystemExit(f"{args.file} kept no state messages: run benchmarks/miniwob.py with --states")
    before = after = 0
    for run in runs:
        said, last = judged(run, args.max_steps)
        passed = run["first_reward"] > 0
        claim = bool(run["claimed"]) and said is None
        before += run["claimed"] == passed
        after += claim == passed
        mark = f"  questioned{' (last step)' if last else ' (the model could go on)'}" if said else ""
        print(f"{run['task']:24} seed {run['seed']} reward {run['first_reward']:5.2f} claimed {run['claimed']!s:5} "
              f"agrees {run['claimed'] == passed!s:5} -> {claim == passed!s:5}{mark}")  # fmt: skip
    n = len(runs)
    print(f"\nclaims agreeing with the reward: {before}/{n} as recorded, {after}/{n} with the check")


if __name__ == "__main__":
    main()
