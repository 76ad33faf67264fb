"""Models on this machine: a GGUF file behind a managed llama.cpp ``llama-server`` (``llama_server``) and model
references to local files or the Hub (``model_files``).

May import ``llm.providers`` (the server is reached through the Chat Completions adapter) and the base modules.
"""
