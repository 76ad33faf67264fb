"""The provider adapters behind the one streaming ``Model`` protocol: Anthropic (``anthropic``), Google
(``google``), OpenAI Chat Completions and every OpenAI-compatible server (``openai_chat``) and OpenAI Responses
(``openai_responses``), with the request shapes they share
(``chat_messages``, ``responses_messages``, ``schema_output``, ``chat_servers``).

May import only the llm layer's base modules (``convert``, ``errors``, ``deadlines``, ``pricing``,
``endpoints``) and core.
"""
