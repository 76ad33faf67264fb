# The two commands a new user needs: `make demo` (set up, then run the demo) and `make test`.
# `make lab PORT=8899` opens JupyterLab on another port (default: JupyterLab's own, 8888 or the next free one).
.PHONY: demo lab test setup setup-test
setup:
	@scripts/setup.sh
setup-test:
	@scripts/setup.sh --with-floor
demo: setup
	@.venv/bin/notebook-agent demo
lab: setup
	@.venv/bin/notebook-agent demo --lab$(if $(PORT), --port $(PORT))
test: setup-test
	@scripts/test.sh
