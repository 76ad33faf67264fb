"""The door every effect passes: the route on the browser context that judges requests before they leave
(``route``) and the redirect hops it judges before the browser follows them (``redirects``).

May import ``browser.page`` (the tabs it asks and the frozen ones it does not wait for) besides the base modules.
"""
