"""One run, step by step: the core loop's hooks that drive a browser one action per step (``run``), the
approval gate of each call (``gatekeeper``), the loop guard (``loop_guard``), the browser a run holds
(``run_browser``), the tools it offers and the context they get (``toolset``, ``tool_context``), typed answers
(``typed_output``), who decides each action when it is not the model (``replay_pilot``), the pictures of each step
(``screenshots``), the page events made from the loop's (``event_bridge``) and how a run ends (``ending``).

May import ``agent.safety``, ``agent.runs`` and ``agent.prompt``, and the layers below ``agent``.
"""
