#!/usr/bin/env bash
# Sets up .venv-peer, the virtualenv of the benchmark-only peer harness (benchmarks/peer/browser_use_task.py), which
# runs the open-source agent browser-use for comparison. It is a venv of its own because browser-use pins pydantic,
# openai and httpx versions that conflict with notebook_agent's: never install it into .venv.
# Idempotent and quick when nothing changed (keyed on the pin below). Uses the same Python as .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
PIN="browser-use==0.13.14"

if [ -x .venv/bin/python ]; then
  PYTHON=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
else
  PYTHON=${PYTHON:-python3.11}
fi
if [ ! -x .venv-peer/bin/python ]; then
  echo "setup_peer: creating .venv-peer"
  "$PYTHON" -m venv .venv-peer
fi
stamp=".venv-peer/.installed-$(echo "$PIN" | sha1sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  echo "setup_peer: installing $PIN into .venv-peer"
  .venv-peer/bin/python -m pip install -q "$PIN"
  rm -f .venv-peer/.installed-*
  touch "$stamp"
fi
echo "setup_peer: ready: .venv-peer/bin/python benchmarks/peer/browser_use_task.py < task.json"
