"""``python -m notebook_agent`` is the same as the ``notebook-agent`` command."""

from .cli import main

raise SystemExit(main())
