"""The terminal commands' tests read real pages: the browser tests' fixture servers."""

from tests.browser.conftest import servers  # noqa: F401
