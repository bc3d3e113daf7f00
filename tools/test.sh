#!/bin/sh
# The whole test suite, as `make test` and CI run it. Expects the venv's bin first on PATH.
set -e
cd "$(dirname "$0")/.."
fail() { echo "FAILED: $*" >&2; exit 1; }
start=$(date +%s)
# importing pyskills makes its folder in XDG_DATA_HOME (~/.local/share/pyskills): the notebooks and tests that import it get a temporary one
XDG_DATA_HOME=$(mktemp -d "${TMPDIR:-/tmp}/llmsurgery-test-data.XXXXXX"); export XDG_DATA_HOME
trap 'rm -rf "$XDG_DATA_HOME"' EXIT
echo "== make test: about 5 minutes on 2 idle cores (more on a busy machine). The host tests run the real agent CLIs, installed once from npm (about 1.35 GB"
echo "   for Claude Code, Codex, Gemini CLI, opencode and Qwen Code) into a cache outside the repository; npm is needed the first time only:"
python - <<'PY'
import sys; sys.path.insert(0, 'tests')
import hostkit as h, ockit as o, qwenkit as q
pins = sorted((getattr(m, n), getattr(m, n[:-4]+'_VER')) for m in (h, o, q) for n in dir(m) if n.endswith('_PKG') and hasattr(m, n[:-4]+'_VER'))
c = h.hosts_cache()
def mb(d): return sum({(s.st_dev, s.st_ino): s.st_size for f in d.rglob('*') if f.is_file() and not f.is_symlink() for s in [f.stat()]}.values())/2**20   # as du counts: a hard link once
for pkg,ver in pins:
    d = c/f"{pkg.replace('/', '+')}@{ver}"
    print(f"   {pkg}@{ver}: " + (f"installed ({mb(d):,.0f} MB)" if d.is_dir() else "to install"))
print(f"   cache: {c} (LLMSURGERY_HOSTS_CACHE or XDG_CACHE_HOME moves it; delete it to free the space)")
import re, pathlib
uv = re.search(r"UV_VER = '([^']+)'", pathlib.Path('tests/test_tool.py').read_text())[1]
t = h.hosts_cache().parent/'tools'/f'uv-{uv}'
print(f"   and uv=={uv} from PyPI for the install test (tests/test_tool.py): " + ("installed" if t.is_dir() else "to install") + f", in {t.parent}")
PY
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
t=$(( $(date +%s) - start )); echo "== all passed in $((t/60)) min $((t%60)) s"
