"""Element fingerprints: what a step saw of the element it acted on (``model``), how well a candidate agrees with
one (``score``), and finding that element again on a changed page (``finder``, ``fingerprint.js``).

May import ``browser.page`` (the page script) besides the browser layer's base modules.
"""
