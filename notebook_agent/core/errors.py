"""The one base class of the package's errors.

Every error this package raises on purpose derives from :class:`NotebookAgentError` (keeping the built-in
base it had, such as ``ValueError`` or ``RuntimeError``, so existing ``except`` clauses still match). The
notebook, the CLI and the evaluation can then tell the package's own errors, whose messages are written for the
person reading them, from bugs and third-party failures, and catch and word them in one place. It lives in
core, which imports nothing else of the package, so every layer can use it.
"""

from __future__ import annotations


class NotebookAgentError(Exception):
    """The common base of every error this package raises, so the notebook, CLI and evaluation can catch and
    word them in one place."""


class InputError(NotebookAgentError, ValueError):
    """What a person or a file gave cannot be used (an option, a URL, a row, a run or recipe file, a secret, a
    type): the message says which and what to give instead. Raised before anything runs."""


class BusyError(NotebookAgentError, RuntimeError):
    """What this needs is held by something else running (an agent's run, a browser, a trace): wait for it or
    stop it, then try again."""


class ModelOutputError(NotebookAgentError, ValueError):
    """What a model wrote cannot be used (arguments that are not JSON, an output with no action, arguments that
    fail their schema). Inside a run the model is told and tries again; it reaches a caller only from a direct
    call."""


def says_what_to_do(exc: BaseException) -> bool:
    """The error's message was written for the person reading it: the package's own errors, and the bad values
    and files (``ValueError``, ``OSError``) that option checks and disks report. Anything else is a bug or a
    third-party failure whose message needs its type to make sense."""
    return isinstance(exc, (NotebookAgentError, ValueError, OSError)) and bool(str(exc))


def error_message(exc: BaseException) -> str:
    """How an error reads wherever it is shown (the notebook's view and record, the CLI, a run's result): the
    message alone when it says what to do, else the type first."""
    if says_what_to_do(exc):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
