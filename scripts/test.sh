#!/usr/bin/env bash
# The whole check: lint, types, a strict build of the docs site (mkdocs.yml), then every test (real Chromium, real
# kernel, real JupyterLab); then the tests that start a real kernel (not the JupyterLab one) again on the oldest
# supported ipykernel, in .venv-floor.
set -euo pipefail
cd "$(dirname "$0")/.."
# one command a line: under `set -e` a failure before `&&` would not stop the script
echo "== ruff"
.venv/bin/ruff check notebook_agent tests benchmarks
.venv/bin/ruff format --check -q notebook_agent tests benchmarks
echo "== mypy"; .venv/bin/mypy
echo "== docs: mkdocs build --strict (a broken link, anchor or API reference fails it)"
# (not --quiet: it hides the warnings, and strict mode then does not count them)
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict
echo "== local model: llama-server and Qwen2.5-Coder 0.5B (built and fetched once, cached in ~/.cache/notebook_agent)"
.venv/bin/python scripts/build_llama_server.py
.venv/bin/python scripts/fetch_test_model.py 0.5b
export NOTEBOOK_AGENT_LOCAL_LLM="${NOTEBOOK_AGENT_LOCAL_LLM:-1}"  # the real-model test runs, and must not skip
echo "== pytest"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
.venv/bin/pytest tests notebooks --nbval-lax --nbval-current-env --nbval-cell-timeout=300 -rfE --durations=25 "$@" 2>&1 | tee "$log"
code=${PIPESTATUS[0]}
if [ "$code" = 5 ]; then echo "pytest collected no tests: that is a failure"; code=1; fi
echo "== pytest on the oldest supported kernel ($(.venv-floor/bin/python -c 'import ipykernel; print("ipykernel", ipykernel.__version__)'))"
.venv-floor/bin/pytest -p no:cacheprovider tests/notebook/test_kernel.py notebooks --nbval-lax --nbval-current-env \
  --nbval-cell-timeout=300
floor=$?
set -e
if [ "$floor" = 5 ]; then echo "pytest collected no tests on .venv-floor: that is a failure"; floor=1; fi
if [ "$code" != 0 ]; then
  # repeated last, where a log cut to its tail still shows it
  echo "== the main pytest run failed (exit $code):"
  if grep -q "short test summary info" "$log"; then
    sed -n '/short test summary info/,$p' "$log" | cut -c1-400
  else
    # no summary: pytest was cut short by its hang guard; what the tasks waited on (tests/conftest.py), then
    # the end (the thread stacks)
    sed -n '/is about to time out: the tasks/,/~~~~ Stack of/p' "$log" | head -n 120 | cut -c1-400
    tail -n 60 "$log" | cut -c1-400
  fi
  exit "$code"
fi
exit "$floor"
