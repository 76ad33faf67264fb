"""What the model reads and writes: the state message of each step (``state_message``) and the outcome line it
ends with (``outcome``), the packaged system prompts and their profiles (``system_prompt``, ``profiles``,
``prompts/``), the actions a run offers and which ones a run calls for (``toolset``, ``offers``), page text defused
before it is shown (``untrusted_text``), the ``AgentOutput`` macro tool (``agent_output``) and its streamed preview
(``preview``).

May import ``agent.safety`` and ``agent.runs``, and the layers below ``agent``.
"""
