"""Which downloads a run keeps: the approval policy's consent, applied to files a page starts on its own.

A link marked ``download`` is known before the click and asked about like any risky action. A download a
script or a redirect starts is only seen when the browser reports it; then this policy answers: kept under
``auto`` or within :data:`DOWNLOAD_GRACE_S` of a person approving the action that caused it, otherwise
cancelled with a sentence for the model, and the action that caused it is remembered so that doing it again
asks first. A policy function decides downloads itself (``request.action == "download"``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from .approval import ApprovalRequest, PolicyFunction, PolicyName, format_args

#: How long after a person approves an action that downloads its download is kept (it may start late).
DOWNLOAD_GRACE_S = 30.0


def action_key(request: ApprovalRequest) -> str:
    """An action on a page, named by what it acts on rather than by index (indices change between steps)."""
    what = (request.element or {}).get("line") or format_args(request.args)
    return f"{request.url}\n{request.action}\n{what}"


class DownloadPolicy:
    """One run's answer to downloads; the browser calls :meth:`refusal` for each download it sees."""

    def __init__(self, policy: PolicyName | PolicyFunction, page_url: Callable[[], str]) -> None:
        self.policy = policy
        self.page_url = page_url
        self.acting: str | None = None
        """The action now running (or last run), as :func:`action_key` names it."""
        self._sources: set[str] = set()
        """Actions after which the page started a download the policy cancelled: asked about next time."""
        self._until = 0.0
        """Until when (monotonic) downloads are kept: set when a person approved an action that downloads."""

    def expected(self, request: ApprovalRequest) -> str | None:
        """What ``request`` would download, when that is known before it runs (for the approval question)."""
        attrs = (request.element or {}).get("attributes") or {}
        if "download" in attrs:
            name = attrs["download"] or PurePosixPath(urlsplit(attrs.get("href", "")).path).name
            return f"a file ({name})" if name else "a file"
        if action_key(request) in self._sources:
            return "a file (the page started a download the last time this was done)"
        return None

    def approved(self) -> None:
        """A person approved an action that downloads: keep what it downloads for a while."""
        self._until = time.monotonic() + DOWNLOAD_GRACE_S

    def refusal(self, name: str, url: str) -> str | None:
        """None keeps the download ``name`` from ``url``; a sentence (for the model) cancels it."""
        policy = self.policy
        if callable(policy):
            request = ApprovalRequest(
                "download", {"file": name, "url": url}, self.page_url(), reason=f"downloads {name}"
            )
            return None if policy(request) == "allow" else "the approval policy did not allow it."
        if policy == "auto" or time.monotonic() < self._until:
            return None
        if self.acting is not None:
            self._sources.add(self.acting)
        if policy == "deny-risky":
            return "downloads are refused under the approval policy deny-risky."
        return (
            f"no approved action asked for a download (approval policy {policy}). If the task needs the file, do "
            "the same action again: the user will be asked first."
        )
