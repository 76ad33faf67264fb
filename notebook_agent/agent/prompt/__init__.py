"""What the model reads and writes: the state message of each step (``state_message``), the packaged system
prompts and their profiles (``system_prompt``, ``profiles``, ``prompts/``), page text defused before it is shown
(``untrusted_text``), the ``AgentOutput`` macro tool (``agent_output``) and its streamed preview (``preview``).

May import ``agent.safety`` and ``agent.runs``, and the layers below ``agent``.
"""
