"""``python -m notebook_agent`` is the same as the ``notebook-agent`` command."""

from .cli.main import main

raise SystemExit(main())
