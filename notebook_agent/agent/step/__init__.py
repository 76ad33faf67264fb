"""One run, step by step: the core loop's hooks that drive a browser one action per step (``run``), around one
explicit state every stage takes (``run_state``): reading the page (``page_read``), the approval gate of each call
(``gate``), the loop guard (``loop_guard``), the claim check (``requested_clicks``), the browser a run holds
(``run_browser``), the context tools get (``tool_context``), typed answers (``typed_output``), who decides each
action when it is not the model (``pilot``, ``replay_pilot``), the pictures of each step (``screenshots``), the page
events made from the loop's (``event_bridge``) and how a run ends (``ending``).

May import ``agent.safety``, ``agent.runs`` and ``agent.prompt``, and the layers below ``agent``.
"""
