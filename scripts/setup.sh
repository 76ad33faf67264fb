#!/usr/bin/env bash
# Sets up a fresh checkout: a virtualenv in .venv with the package and its dev tools, and a Chromium. With
# --with-floor (what `make test` runs) also a second one in .venv-floor with the oldest supported kernel stack, which
# only the tests use.
# Idempotent and quick when nothing changed (the install is keyed on pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
with_floor=0
for arg in "$@"; do
  case "$arg" in
    --with-floor) with_floor=1 ;;
    *) echo "setup: unknown option $arg (usage: scripts/setup.sh [--with-floor])" >&2; exit 2 ;;
  esac
done

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PYTHON" -m venv .venv
fi
stamp=".venv/.installed-$(sha1sum pyproject.toml | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  echo "setup: installing notebook-agent and its dev tools into .venv"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e ".[dev]"
  rm -f .venv/.installed-*
  touch "$stamp"
fi

# The oldest supported kernel stack (scripts/kernel-floor.txt) in .venv-floor: scripts/test.sh runs the tests that
# start a real kernel there as well. Keyed on pyproject.toml and the pins, like .venv.
if [ "$with_floor" = 1 ]; then
  if [ ! -x .venv-floor/bin/python ]; then
    echo "setup: creating .venv-floor (the oldest supported ipykernel)"
    "$PYTHON" -m venv .venv-floor
  fi
  floor_stamp=".venv-floor/.installed-$(cat pyproject.toml scripts/kernel-floor.txt | sha1sum | cut -c1-12)"
  if [ ! -f "$floor_stamp" ]; then
    echo "setup: installing notebook-agent with the oldest supported kernel stack into .venv-floor"
    .venv-floor/bin/python -m pip install -q -e ".[data]" -r scripts/kernel-floor.txt
    rm -f .venv-floor/.installed-*
    touch "$floor_stamp"
  fi
fi

# A browser: Playwright's own, a system Chromium/Chrome, or install one.
has_browser() { .venv/bin/python -c "from notebook_agent.browser.session.launch import find_browser; find_browser()" >/dev/null 2>&1; }
if ! has_browser; then
  echo "setup: no Chromium found; installing one"
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && apt-get install -y -qq chromium fonts-liberation) >/dev/null
  elif command -v apt-get >/dev/null 2>&1 && command -v sudo >/dev/null 2>&1; then
    (sudo DEBIAN_FRONTEND=noninteractive apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-liberation) >/dev/null
  else
    .venv/bin/python -m playwright install chromium
  fi
  .venv/bin/python -c "from notebook_agent.browser.session.launch import find_browser; print('setup: browser', find_browser())"
fi
