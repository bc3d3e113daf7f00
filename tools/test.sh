#!/bin/sh
# The whole test suite, as `make test` and CI run it. Expects the venv's bin first on PATH.
set -e
cd "$(dirname "$0")/.."
fail() { echo "FAILED: $*" >&2; exit 1; }
echo "== nbdev-export: llmsurgery/ must match nbs/"
nbdev-export
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git diff --exit-code --stat -- llmsurgery || fail "llmsurgery/*.py is out of sync with nbs/: run nbdev-export and commit"
  [ -z "$(git ls-files --others --exclude-standard llmsurgery)" ] || fail "nbdev-export made untracked modules: commit them"
fi
echo "== nbdev-clean: notebooks must be clean"
nbdev-clean
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git diff --exit-code --stat -- nbs || fail "notebooks are not clean: run nbdev-clean and commit"; fi
echo "== README.md must be generated from nbs/index.ipynb"
python tools/readme.py --check || fail "README.md is stale: run 'make readme' and commit"
echo "== nbdev-test: every notebook runs and its assertions hold"
nbdev-test --flags ''
echo "== pytest: properties, readers and CLI"
python -m pytest -q -rs -p no:cacheprovider tests   # -rs: each skip says why
