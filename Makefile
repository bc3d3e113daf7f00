# Two commands do all the set-up: `make demo` and `make test` each create .venv on first use.
VENV  := .venv
BIN   := $(VENV)/bin
# the install stamp is named by pyproject.toml's content, not its mtime (nbdev-export touches the file)
STAMP := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d" " -f1)
EXAMPLE ?= examples/claude_long.jsonl

.PHONY: demo test docs bench readme clean-venv

$(STAMP):
	@if ! { [ -x $(BIN)/python ] && $(BIN)/python -c 'import sys; sys.exit(sys.version_info < (3, 12))'; }; then \
	  PY=$$(sh tools/find_python.sh) || exit 1; echo "creating $(VENV) with $$PY" >&2; rm -rf $(VENV); $$PY -m venv $(VENV); fi
	@echo "installing llmsurgery and its dev tools into $(VENV)" >&2
	@$(BIN)/python -m pip install -q -U pip >&2
	@$(BIN)/python -m pip install -q -e '.[dev]' >&2
	@$(BIN)/python -c "from llmsurgery.compact import compact_enc; compact_enc()"  # the tokenizer loads offline
	@rm -f $(VENV)/.installed*; touch $(STAMP)

demo: $(STAMP)  ## compact the bundled long Claude Code session to 12,000 tokens; the document on stdout, the report on stderr
	@$(BIN)/llmsurgery-compact $(EXAMPLE) --max-tokens 12000 --report

test: $(STAMP)  ## the whole test suite, as CI runs it: about 5 min on 2 idle cores; the first run installs the host CLIs from npm (about 2 GB, into ~/.cache/llmsurgery/hosts)
	@PATH=$(CURDIR)/$(BIN):$$PATH sh tools/test.sh

docs: $(STAMP)  ## run nbdev's docs processors on every notebook into _proc/, as the deploy workflow does (rendering needs Quarto: nbdev-docs)
	@d=$$(mktemp -d); XDG_DATA_HOME=$$d $(BIN)/nbdev-proc-nbs; s=$$?; rm -rf $$d; exit $$s   # importing pyskills makes its folder in XDG_DATA_HOME: a temporary one

bench: $(STAMP)  ## the speed goals as ratios in one run (REV=<commit> also measures that revision), then the tables of the Performance page, then search's (not part of the tests)
	@$(BIN)/python bench/issue.py $(if $(REV),--rev $(REV))
	@$(BIN)/python bench/bench.py
	@$(BIN)/python bench/e2e.py   # end to end on 13, 100 and 400 MB sessions built from tests/data/claude-real (cached outside the repository)
	@$(BIN)/python bench/search.py   # --search on a 1 GB store of every host's sessions: build, refresh and query beside their baselines

readme: $(STAMP)  ## regenerate README.md from nbs/index.ipynb
	@$(BIN)/python tools/readme.py

clean-venv:
	rm -rf $(VENV)
