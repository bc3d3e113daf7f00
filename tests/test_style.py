"The house rules that a reader checks by eye, checked by machine: short functions, shallow nesting, no private imports across modules."
import ast, json
from pathlib import Path
import pytest

pkg = Path(__file__).resolve().parent.parent/'llmsurgery'
mods = sorted(p for p in pkg.rglob('*.py') if not p.name.startswith('_'))
def modname(p): return '.'.join(p.with_suffix('').relative_to(pkg).parts)   # 'hosts.claude'
max_lines,max_depth = 25,4
_nesting = (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith, ast.Match, ast.TryStar)

def _elif(node, c): return isinstance(node, ast.If) and node.orelse==[c] and isinstance(c, ast.If)

def depth(node, d=0):
    "Deepest nesting of compound statements inside `node` (a function body is depth 0; an `elif` is no deeper than its `if`)"
    kids = [depth(c, d+(isinstance(c, _nesting) and not _elif(node, c))) for c in ast.iter_child_nodes(node)
            if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    return max([d, *kids])

def functions(p):
    return [n for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]

@pytest.mark.parametrize('p', mods, ids=modname)
def test_functions_short_and_shallow(p):
    size = lambda f: f.end_lineno-f.body[0].lineno+1   # the body: a signature of one documented parameter a line is no code
    long = [f'{f.name}: {size(f)} lines' for f in functions(p) if size(f) > max_lines]
    deep = [f'{f.name}: depth {depth(f)}' for f in functions(p) if depth(f) > max_depth]
    assert not long and not deep, f'{p.name}: ' + '; '.join(long+deep)

@pytest.mark.parametrize('p', mods, ids=modname)
def test_no_private_imports(p):
    bad = [f'{n.module}.{a.name}' for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.ImportFrom)
           for a in n.names if a.name.startswith('_') and not a.name.startswith('__') and (n.level or (n.module or '').startswith('llmsurgery'))]
    assert not bad, f'{p.name} imports private names: {bad}'

def test_depth_counts_nesting():
    f = ast.parse('def f():\n  for a in b:\n    if a:\n      with c:\n        try: pass\n        except: pass\n').body[0]
    assert depth(f) == 4 and depth(ast.parse('def g(): return 1').body[0]) == 0
    chain = ast.parse('def h(x):\n  if x: pass\n  elif x>1: pass\n  elif x>2:\n    if x>3: pass\n').body[0]
    assert depth(chain) == 2

def layout():
    "`{module: set of modules it may import}` from the module table of the Development page"
    cells = json.loads((pkg.parent/'nbs'/'004_development.ipynb').read_text())['cells']
    text = '\n'.join(''.join(c['source']) for c in cells if c['cell_type']=='markdown')
    rows = [l.split('|') for l in text.splitlines() if l.startswith('| `llmsurgery.')]
    return {r[1].strip(' `').split('.', 1)[1]: {w.strip() for w in r[4].split(',')} for r in rows}

def _imported(n, at):
    "The package's modules a relative `from` import `n`, in the package `at` (a list of names), names"
    base = at[:len(at)-n.level+1]
    if n.module: return {'.'.join([*base, n.module])}
    return {'.'.join([*base, a.name]) for a in n.names if a.name!='__version__'}

def own_imports(p):
    "The package's modules that module `p` imports"
    at = list(p.relative_to(pkg).parts[:-1])
    nodes = [n for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, ast.ImportFrom) and n.level]
    return set().union(*(_imported(n, at) for n in nodes))

def test_layout_is_the_code():
    "The Development page's module table lists every module, and each imports only what its row allows"
    table = layout()
    assert set(table) == {modname(p) for p in mods}
    wrong = {modname(p): own_imports(p) - table[modname(p)] for p in mods if own_imports(p) - table[modname(p)]}
    assert not wrong, wrong

max_width = 120

def _all_lines(tree):
    "Line numbers of the module's `__all__ = [...]` block, which nbdev writes"
    alls = [n for n in tree.body if isinstance(n, ast.Assign) and any(getattr(t, 'id', '')=='__all__' for t in n.targets)]
    return {i for n in alls for i in range(n.lineno, n.end_lineno+1)}

def long_lines(p):
    "`[(line number, length)]` of module `p`'s lines over `max_width`, but nbdev's `__all__` block and `# %%` markers"
    text = p.read_text(encoding='utf-8')
    gen = _all_lines(ast.parse(text))
    return [(i, len(l)) for i,l in enumerate(text.splitlines(), 1)
            if len(l)>max_width and i not in gen and not l.startswith('# %% ')]

wrapped = [p for p in sorted(pkg.rglob('*.py')) if p.name!='_modidx.py']   # `_gates.py` too: tools/gates.py formats it

@pytest.mark.parametrize('p', wrapped, ids=lambda p: p.relative_to(pkg).as_posix())
def test_lines_within_width(p):
    "Every line of an exported module is within 120 characters: a longer one is wrapped in its notebook"
    assert not (bad := long_lines(p)), f'{p.name}: lines over {max_width} characters (line, length): {bad}'

def test_long_lines_found(tmp_path):
    "`long_lines` finds a long line, and passes a long `__all__` and a long cell marker"
    names = ', '.join([repr('name')]*30)
    (f := tmp_path/'m.py').write_text(f"__all__ = [{names},\n  'more']\n# %% {'x'*130}\nx = 1\ny = '{'y'*130}'\n")
    assert long_lines(f) == [(5, 136)]
