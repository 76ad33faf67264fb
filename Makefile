# The two commands a new user needs: `make demo` (set up, then run the demo) and `make test`.
.PHONY: demo lab test setup
setup:
	@scripts/setup.sh
demo: setup
	@.venv/bin/notebook-agent demo
lab: setup
	@.venv/bin/notebook-agent demo --lab
test: setup
	@scripts/test.sh
