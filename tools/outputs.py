"""Refresh the output shown after each `sh` block of `nbs/index.ipynb` and the pages (`nbs/00N*`), run as
`tests/test_readme.py` runs them; an output that still passes that test is left as it is."""
import json, re, sys, tempfile
from pathlib import Path

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root/'tests'))
from test_readme import clone_home, run_sh, same_output

_shown = re.compile(r'^```sh\n(.*?)^```\n\n```\n(.*?)^```(?=\n|$)', re.S|re.M)

def _fresh(m, got):
    "The `sh` block matched by `m` with what it printed now, `got`, unless its shown output still passes"
    return m[0] if same_output(got, m[2]) else f"```sh\n{m[1]}```\n\n```\n{got.rstrip(chr(10))}\n```"

def refresh(path):
    "Run each `sh` block of notebook `path` that shows an output, in one fresh home, and store what it prints"
    nb = json.loads(path.read_text(encoding='utf-8'))
    with tempfile.TemporaryDirectory(prefix='llmsurgery-') as tmp:
        home = clone_home(Path(tmp))
        for c in nb['cells']:
            if c['cell_type'] != 'markdown': continue
            src = ''.join(c['source'])
            c['source'] = _shown.sub(lambda m: _fresh(m, run_sh(m[1], home)), src)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n', encoding='utf-8')

if __name__ == '__main__':
    for p in [root/'nbs'/'index.ipynb', *sorted((root/'nbs').glob('00[0-9]*.ipynb'))]: refresh(p)
