"llmsurgery's modules import one another without a circle"
import ast
from pathlib import Path

pkg = Path(__file__).resolve().parent.parent/'llmsurgery'

def mod_name(p):
    "Dotted module name of file `p` under the package (a package's `__init__` is the package)"
    parts = ('llmsurgery',)+p.relative_to(pkg).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1]=='__init__' else parts)

mods = {mod_name(p):p for p in pkg.rglob('*.py')}

def base_of(name, node):
    "The absolute module an `ImportFrom` in module `name` names, `from .x import y` resolved"
    if not node.level: return node.module or ''
    pkg_parts = name.split('.') if mods[name].name=='__init__.py' else name.split('.')[:-1]
    up = pkg_parts[:len(pkg_parts)-node.level+1]
    return '.'.join(up+([node.module] if node.module else []))

def targets(name):
    "The llmsurgery modules module `name` imports anywhere in its file, at module level or inside a function"
    for node in ast.walk(ast.parse(mods[name].read_text())):
        if isinstance(node, ast.Import): yield from (a.name for a in node.names if a.name in mods)
        elif isinstance(node, ast.ImportFrom):
            b = base_of(name, node)
            for a in node.names:
                if f'{b}.{a.name}' in mods: yield f'{b}.{a.name}'   # `from pkg import submodule`
                elif b in mods: yield b

def graph(): return {m:set(targets(m))-{m} for m in mods}

def cycle(g):
    "One import circle in graph `g` as a list of modules, or None"
    state,path = {},[]
    def visit(m):
        state[m] = 'open'; path.append(m)
        for t in sorted(g[m]):
            if state.get(t)=='open': return path[path.index(t):]+[t]
            if t not in state and (c := visit(t)): return c
        state[m] = 'done'; path.pop()
    for m in sorted(g):
        if m not in state and (c := visit(m)): return c

def test_cycle_finds_a_circle():
    assert cycle({'a':{'b'}, 'b':{'c'}, 'c':{'a'}})==['a','b','c','a']
    assert cycle({'a':{'b'}, 'b':set(), 'c':{'a','b'}}) is None

def test_graph_sees_both_kinds_of_import():
    g = graph()
    assert 'llmsurgery.hookgate' in g['llmsurgery.hooks']          # at module level
    assert 'llmsurgery.hookstate' in g['llmsurgery.hooks']         # inside a function

def test_no_import_circle():
    "Imports at module level and inside functions both count: a lazy import is still a dependency"
    assert (c := cycle(graph())) is None, ' -> '.join(c)
