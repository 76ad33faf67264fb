#!/usr/bin/env bash
# The whole check: lint, types, then every test (real Chromium, real kernel, real JupyterLab).
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== ruff"; .venv/bin/ruff check notebook_agent tests benchmarks && .venv/bin/ruff format --check -q notebook_agent tests benchmarks
echo "== mypy"; .venv/bin/mypy
echo "== pytest"
set +e
.venv/bin/pytest tests notebooks --nbval-lax --nbval-current-env --nbval-cell-timeout=300 "$@"
code=$?
set -e
if [ "$code" = 5 ]; then echo "pytest collected no tests: that is a failure"; exit 1; fi
exit "$code"
