"Write README.md from nbs/index.ipynb offline (`nbdev-readme` needs Quarto); `--check` fails if it is stale."
import json, posixpath, re, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent

def _txt(s): return ''.join(s) if isinstance(s, list) else s

def _out(o):
    "Plain text of one stored output"
    if o.get('output_type') == 'stream': return _txt(o.get('text', ''))
    return _txt(o.get('data', {}).get('text/plain', ''))

_rel_link = re.compile(r'\]\((?![a-z]+:|#|/)([^)\s]+)\)')

def from_root(md, folder='nbs'):
    "Markdown `md` of a page in `folder`, its relative links made relative to the repository's root (the README's)"
    return _rel_link.sub(lambda m: f'](' + posixpath.normpath(posixpath.join(folder, m[1])) + ')', md)

def nb2md(nb, links=from_root):
    "Markdown cells, links by `links`; code cells fenced, with their stored plain-text outputs; `#|` lines dropped"
    parts = []
    for c in nb['cells']:
        src = _txt(c['source'])
        if c['cell_type'] == 'markdown': parts.append(links(src)); continue
        lines = [l for l in src.splitlines() if not l.startswith('#|')]
        if any(l.strip() in ('#| hide', '#|hide') for l in src.splitlines()): continue
        if lines: parts.append('```python\n' + '\n'.join(lines) + '\n```')
        outs = ''.join(_out(o) for o in c.get('outputs', [])).rstrip('\n')
        if outs: parts.append('```\n' + outs + '\n```')
    return '<!-- WARNING: generated from nbs/index.ipynb by tools/readme.py; edit the notebook, not this file -->\n\n' + '\n\n'.join(parts) + '\n'

if __name__ == '__main__':
    md = nb2md(json.loads((root/'nbs'/'index.ipynb').read_text()))
    dest = root/'README.md'
    if '--check' in sys.argv: sys.exit(0 if dest.exists() and dest.read_text() == md else 1)
    dest.write_text(md)
