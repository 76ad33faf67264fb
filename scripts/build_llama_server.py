#!/usr/bin/env python3
"""Build llama-server once for the local-model tests and ``local:`` models; print its path.

A thin entry for CI and the test setup: the build itself (llama.cpp from the ``llama-cpp-python`` sdist, only
the ``llama-server`` target, cached in ``~/.cache/notebook_agent/llama.cpp/<version>/``) lives in
:mod:`notebook_agent.llm.local.llama_server`, which ``get_model("local:...")`` also uses. A cached or
``$NOTEBOOK_AGENT_LLAMA_SERVER`` binary is reused, so a warm call returns at once.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from notebook_agent.llm.local.llama_server import main

if __name__ == "__main__":
    raise SystemExit(main(["build", *sys.argv[1:]]))
