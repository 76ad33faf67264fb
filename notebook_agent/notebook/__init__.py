"""The Jupyter layer: magics, the live run view, approvals in widgets. Nothing imports it."""
