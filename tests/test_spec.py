"""The user's spec, run: every python block of `shared/spec/compact.md`, in order, in one namespace; all its assertions must hold.

The spec lives outside the repo: `$LLMSURGERY_SPEC`, or `<repo>/../shared/spec/compact.md`. Where it is absent these
tests skip, saying so, unless `LLMSURGERY_REQUIRE_SPEC=1` (set by `.ci/run`, whose clone has `shared/` beside it): then
they fail.
Only the code runs: where the spec's printed outputs and its assertions disagree, the assertions win.
"""
import os, re
from pathlib import Path
import pytest

SPEC = Path(os.environ.get('LLMSURGERY_SPEC') or Path(__file__).resolve().parents[1].parent/'shared'/'spec'/'compact.md')
# The spec uses Message, scode, code_output and snote unimported, and fastcore's `in_`: the notebook it was rendered from
# imports those in cells the rendering hides
PRELUDE = 'from llmsurgery.compact import *\nfrom aidialog.dialog import *\nfrom fastcore.utils import *\n'
RENAMES = {'from aidialog.hist import chat2dlg': 'from llmsurgery.hist import chat2dlg'}

def python_blocks(md):
    "`(line, source)` of each python block in `md`, in order; a block may be fenced with three backticks or more"
    blocks, lines, i = [], md.splitlines(), 0
    while i < len(lines):
        m = re.fullmatch(r'(`{3,}) ?python\s*', lines[i])
        i += 1
        if not m: continue
        start, body = i, []
        while i < len(lines) and not re.fullmatch(re.escape(m[1]) + r'`*\s*', lines[i]): body.append(lines[i]); i += 1
        i += 1
        blocks.append((start, '\n'.join(body)))
    return blocks

def is_signature(src):
    "Is `src` a bare signature the docs show for a function (a `def` header with no body)?"
    return bool(re.fullmatch(r'\s*def \w+\(.*\):\s*', src, re.DOTALL))

def runnable(md):
    "The blocks to run, with the library's own import in place of aidialog's; bare signatures left out"
    res = []
    for line, src in python_blocks(md):
        for old, new in RENAMES.items(): src = src.replace(old, new)
        try: compile(src, f'spec:{line}', 'exec')
        except SyntaxError:
            if is_signature(src): continue
            raise
        res.append((line, src))
    return res

@pytest.fixture(scope='module')
def spec_md():
    return spec_text(SPEC)

def spec_text(path):
    "The spec at `path`; where it is absent a skip saying so, or a failure when the environment requires the spec"
    if path.is_file(): return path.read_text()
    where = f'the spec is not at {path}: set LLMSURGERY_SPEC, or clone the repo with shared/ beside it'
    if os.environ.get('LLMSURGERY_REQUIRE_SPEC', '') not in ('', '0'): pytest.fail(f'{where} (required here)')
    pytest.skip(where)

def test_spec_blocks_found(spec_md):
    "Extraction: the spec's code (four-backtick blocks included) is found, with its assertions; only bare signatures are skipped"
    blocks, run = python_blocks(spec_md), runnable(spec_md)
    assert len(run) >= 20, len(run)
    ran = {line for line, _ in run}
    assert all(is_signature(s) for line, s in blocks if line not in ran)
    code = '\n'.join(s for _, s in run)
    assert code.count('test_eq(') >= 20 and 'creply = compact_reply' in code    # the latter sits in a four-backtick block
    assert 'aidialog.hist' not in code

def test_spec_runs(spec_md):
    "The spec: every block, in order, in one namespace, with every assertion holding"
    ns = {}
    exec(compile(PRELUDE, 'prelude', 'exec'), ns)
    for line, src in runnable(spec_md):
        try: exec(compile(src, f'{SPEC.name}:{line}', 'exec'), ns)
        except Exception as e: pytest.fail(f'spec block at line {line} failed: {type(e).__name__}: {e}\n\n{src}')
