"""The door every byte passes on its way out of a session's pages: one rule for where a request, WebSocket or frame
goes and whether it carries a secret in any encoding (``egress``), and the places that hold traffic and ask it:
the route on the browser context (``route``: the ``Door``, with the domain rule and the judge of effects), each
tab's own DevTools interception for what the route never sees, such as beacons and keepalive fetches sent while
a page unloads (``tab_door``, on the per-tab DevTools of ``tab_devtools``), and a WebSocket route that judges the
handshake and every frame (``sockets``); redirect hops are judged before the browser follows them
(``redirects``); and a request a recipe asks directly through the context's request client, which no route sees,
is judged by the same rules before it leaves (``direct``). The secrets a session holds, from the first run that
holds one until the session closes, and the structural rule for data while one is live (``live``).

May import ``browser.page`` (the tabs it asks and the frozen ones it does not wait for) besides the base modules.
"""
