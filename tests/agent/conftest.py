from tests.browser.conftest import browser, servers, shared_browser  # noqa: F401
