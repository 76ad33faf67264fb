"""One tab, read and watched: the page script in every frame (``page_script``, ``snapshot.js``, ``extract.js``),
the indexed snapshot (``snapshot``) and its reader (``reader``), its pictures (``pictures``), which elements an action
cannot act on (``actionable``), the masks a screenshot needs (``mask``; where the page paints a value,
``painted``), what an action caused (``action_watch``), the element of the next action found ahead (``prefetch``),
the page's own fetch and XHR calls kept for a recipe (``call_log``), and the tabs of a context, frozen and hung
ones included (``tabs``, ``frozen_tabs``, ``hung_tabs``).

The bottom of the browser layer: it imports only ``browser.errors``, ``browser.urls`` and the core layer.
"""
