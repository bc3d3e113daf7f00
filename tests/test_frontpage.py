"""The front page stays a front page, and the docs speak to users: the README within 2,000 words; no issue number,
commit hash or history of the work in the README, the pages, the notebooks' prose or the modules' docstrings; and
each notebook shows what its examples do.

Each finding names its place (file, cell id or function): the README, every notebook and every module must pass."""
import ast, json, re, subprocess
from pathlib import Path
import pytest

root = Path(__file__).resolve().parent.parent
nbs = sorted((root/'nbs').glob('*.ipynb'))
mods = sorted((root/'llmsurgery').rglob('*.py'))

def test_readme_is_short():
    words = len((root/'README.md').read_text(encoding='utf-8').split())
    assert words <= 2000, f'README.md has {words:,} words: move the rest to a page'

# What tells of the work's history rather than of llmsurgery
ISSUE = re.compile(r'\bissues?\s*#?\d+', re.I)   # `issue 12`, `Issue 26's`, `(issue 20)`, `issues 12`
ISSUE_REF = re.compile(r'(?<![\w&/#-])#\d+\b')   # `#12` in prose (code is left out: there `#N` is a message's number)
HEX = re.compile(r'(?<![\w-])[0-9a-f]{7,40}(?![\w-])')   # a commit hash: 40 long, or a commit of this repository
HISTORY = ('this round', 'last round', 'next round', 'previous round', "the round's", 'before this session',
           'after this session', "this session's", "last session's", 'earlier this session', 'lab note')
CODE = re.compile(r'^```.*?^```|`[^`\n]*`', re.S|re.M)

def commits(cands):
    "Those of the hex strings `cands` that name a commit of this repository"
    cands = sorted(set(cands))
    if not cands or not (root/'.git').exists(): return set()
    p = subprocess.run(['git', 'cat-file', '--batch-check'], input=''.join(f'{c}^{{commit}}\n' for c in cands),
                       capture_output=True, text=True, cwd=root)
    return {c for c,l in zip(cands, p.stdout.splitlines()) if not l.endswith(('missing', 'ambiguous'))}

def _prose(text):
    "`text` with its code (fenced blocks, inline spans) blanked, each character's place kept"
    return CODE.sub(lambda m: re.sub(r'[^\n]', ' ', m[0]), text)

def history(text):
    "What in `text` tells of the work's history: `[(kind, what, where)]`, `where` its offset in `text`"
    found = [('issue', m[0], m.start()) for m in ISSUE.finditer(text)]
    found += [('issue', m[0], m.start()) for m in ISSUE_REF.finditer(_prose(text))]
    hexes = list(HEX.finditer(text))
    ours = commits(m[0] for m in hexes if len(m[0])<40)
    found += [('commit', m[0], m.start()) for m in hexes if len(m[0])==40 or m[0] in ours]
    low = text.lower()
    return found + [('phrase', p, low.index(p)) for p in HISTORY if p in low]

def md_cells(path):
    "`[(cell id, text)]` of the markdown cells of notebook `path`"
    cells = json.loads(path.read_text(encoding='utf-8'))['cells']
    return [(c.get('id'), ''.join(c['source'])) for c in cells if c['cell_type']=='markdown']

def docstrings(path):
    "`[(name, docstring)]` of the module at `path`, its classes and its functions"
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    nodes = [n for n in ast.walk(ast.parse(path.read_text(encoding='utf-8'))) if isinstance(n, kinds)]
    return [(getattr(n, 'name', '<module>'), d) for n in nodes if (d := ast.get_docstring(n, clean=False))]

def places(path):
    "`[(place, kind, what)]`: each history finding in the text `path` shows users"
    rel = path.relative_to(root)
    if path.suffix == '.ipynb': parts = [(f'{rel} cell {i}', t) for i,t in md_cells(path)]
    elif path.suffix == '.py': parts = [(f'{rel} {n}', d) for n,d in docstrings(path)]
    else:
        t = path.read_text(encoding='utf-8')
        return [(f'{rel} line {t.count(chr(10), 0, at)+1}', kind, what) for kind,what,at in history(t)]
    return [(where, kind, what) for where,t in parts for kind,what,_ in history(t)]

def test_history_is_found():
    "The checks find what they look for, and leave a message's number, a DSL fence and an id alone"
    assert [k for k,*_ in history('Until issue 30 (#12), this round did it')] == ['issue', 'issue', 'phrase']
    assert history('`--show 12` prints `#12`:\n```\n*** #4159\n```\nand the id 5f1c2e9a-0b1c, 4c1d2e9') == []
    assert history('x ' + 'a'*40) == [('commit', 'a'*40, 2)]
    if (root/'.git').exists():
        head = subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True, text=True, cwd=root).stdout.strip()
        assert history(f'as of {head[:7]}') == [('commit', head[:7], 6)]

_texts = [root/'README.md', *nbs, *mods]
@pytest.mark.parametrize('path', _texts, ids=[str(p.relative_to(root)) for p in _texts])
def test_no_history(path):
    found = places(path)
    assert not found, '\n'.join(f'{where}: {kind} {what!r}' for where,kind,what in found)

# A notebook's examples show what they do. Counted: each code cell but those exported (`#| export`, `exporti`,
# `exports`); a hidden set-up cell or one of imports counts too, as a reader of the stored notebook meets it.
DIRECTIVE = re.compile(r'^\s*#\s*\|\s*([\w-]+)')
SKIP = {'export', 'exporti', 'exports'}

def examples(path):
    "`(shown, counted)`: how many of notebook `path`'s example cells show an output, of how many"
    cells = [c for c in json.loads(path.read_text(encoding='utf-8'))['cells'] if c['cell_type']=='code']
    ex = [c for c in cells if not {m[1] for l in ''.join(c['source']).splitlines() if (m := DIRECTIVE.match(l))} & SKIP]
    return sum(bool(c.get('outputs')) for c in ex),len(ex)

def test_examples_are_counted():
    nb = lambda *cs: dict(cells=[dict(cell_type='code', source=s, outputs=o) for s,o in cs])
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = Path(d)/'x.ipynb'
        p.write_text(json.dumps(nb(('#| export\ndef f(): pass', []), ('#| hide\nx=1', []), ('import os', []),
                                   ('# a note', []), ('f()', [{'output_type': 'stream'}]), ('test_eq(1, 1)', []))))
        assert examples(p) == (1, 5)

@pytest.mark.parametrize('path', nbs, ids=[p.name for p in nbs])
def test_examples_show_outputs(path):
    shown,n = examples(path)
    assert not n or shown >= .6*n, f'{path.name}: {shown} of {n} example cells show an output (at least 60% must)'

def test_readme_shows_the_set_up_commands():
    "A newcomer's clone needs two commands, both on the front page: the main job on the bundled example, and the tests"
    sh = [l.split('#')[0].strip() for b in re.findall(r'^```sh\n(.*?)^```', (root/'README.md').read_text(encoding='utf-8'),
                                                     re.S|re.M) for l in b.splitlines()]
    assert {'make demo', 'make test'} <= set(sh), 'README.md must show `make demo` and `make test` in a sh block'
    targets = re.findall(r'^(\w+):', (root/'Makefile').read_text(), re.M)
    assert {'demo', 'test'} <= set(targets)
