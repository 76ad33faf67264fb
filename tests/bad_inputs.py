"""Bad option values and the one message each gets, whether typed in a terminal, a %%agent line or
%agent config (the tests of each entry point use this table)."""

from __future__ import annotations

BAD_OPTIONS: list[tuple[list[str], str]] = [
    (["--max-steps", "0"], "--max-steps must be at least 1 (got 0): it is how many steps a run may take."),
    (["--max-steps", "-1"], "--max-steps must be at least 1 (got -1): it is how many steps a run may take."),
    (["--max-steps", "many"], "--max-steps needs a whole number, got 'many'."),
    (["--model", "foo:bar"], "--model: Unknown model provider 'foo' in 'foo:bar'. Valid providers: openai:,"),
    (["--approve", "sometimes"], "--approve: Unknown approval policy 'sometimes'. Use one of ask-risky,"),
]
"""(arguments, the start of the message) for options every entry point takes."""

BAD_BUDGETS: list[tuple[list[str], str]] = [
    (["--max-cost", "-1"], "--max-cost must be a number of dollars above 0, got '-1'."),
    (["--max-cost", "lots"], "--max-cost must be a number of dollars above 0, got 'lots'."),
    (["--max-cost", "nan"], "--max-cost must be a number of dollars above 0, got 'nan'."),
    (["--max-tokens", "0"], "--max-tokens must be a whole number of tokens above 0, got '0'."),
    (["--max-tokens", "1.5"], "--max-tokens must be a whole number of tokens above 0, got '1.5'."),
]
"""(arguments, the start of the message) for a run's budget, in a cell and in the terminal's run and map."""

BAD_URL = (
    ["--url", "example"],
    "--url: 'example' is not a URL: write the whole address, e.g. https://example.com/ or http://localhost:8000/.",
)

UNSAFE_PORT = (
    "Chromium refuses to open http://127.0.0.1:9/: port 9 is on its list of unsafe ports (ports of other "
    "protocols, such as 6000 for X11). Serve the page on another port, e.g. 8000."
)
