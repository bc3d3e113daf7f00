"""A host from another package: a throwaway package, installed into a venv of its own, adds a host in one file through
the entry-point group `llmsurgery.hosts`; `llmsurgery-compact` then lists, compacts, shows and resumes its sessions as
it does a built-in host's, and its name is in `--help`'s choices. Nothing of llmsurgery names it."""
import json, os, re, site, subprocess, sys
from pathlib import Path
import pytest

TOY = '''"A toy agent's sessions: one JSONL file each, under `$TOY_HOME` (else `~/.toy`)"
import os
from aidialog.msg_parts import Msg, Text, ToolUse, ToolResult
from llmsurgery.jsonl import records
from llmsurgery.hosts.base import JsonlHost, first_record

class Toy(JsonlHost):
    "A toy agent: a header, one record a message, a `run` and its `out`, and a `summary` for a compaction"
    name,label = 'toy','Toy Agent'
    home_var,home_dir = 'TOY_HOME','.toy'
    mark,resume_cmd = b'"summary"',('toy', '--resume', '{id}')

    def owns(self, r): return 2 if r.get('toy') in ('session', 'say', 'run', 'out', 'summary') else 0
    def is_boundary(self, r): return r.get('toy')=='summary'
    def read_lines(self, lines, whole=False, sidechains=False, start=1):
        res = self.log(whole, start)
        for r in records(lines, res):
            t = r.get('toy')
            if t=='session': res.note_cwd(r.get('cwd'))
            elif t=='summary':
                res.at_boundary()
                res.summary = r['text']
                (res.set_aside if whole else res.add)([Msg('user', [Text(r['text'])])])
            elif t=='say': res.add([Msg(r['who'], [Text(r['text'])])])
            elif t=='run': res.add([Msg('assistant', [ToolUse(id=r['id'], name='Bash', arguments={'command': r['cmd']})])])
            elif t=='out': res.add([Msg('tool', [ToolResult(id=r['id'], name='Bash', text=r['text'])])])
        return res
    def session_files(self, cwd=None):
        fs = sorted((self.home()/'sessions').glob('*.jsonl'))
        return fs if cwd is None else [f for f in fs if first_record(f).get('cwd')==os.path.realpath(cwd)]
    def resume_from(self, session, cwd=None): return self.home()/'sessions',session.cwd or os.getcwd(),{}
    def resume_records(self, meta, doc, new, run):
        return [dict(toy='session', id=new, cwd=run), dict(toy='summary', text=doc)]
'''

PYPROJECT = '''[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "llmsurgery-toy"
version = "0.0.1"

[project.entry-points."llmsurgery.hosts"]
toy = "llmsurgery_toy:Toy"
'''

CLI = "import sys\nfrom llmsurgery.cli import llmsurgery_compact\nif __name__ == '__main__': sys.exit(llmsurgery_compact())\n"

@pytest.fixture(scope='module')
def toy_venv(tmp_path_factory):
    """A venv of its own that sees this environment's packages (llmsurgery among them) through a `.pth`, with the toy
    package installed into it by pip, offline: `(its python, a console script for llmsurgery-compact)`"""
    d = tmp_path_factory.mktemp('toyvenv')
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(d/'venv')], check=True, timeout=120)
    py = d/'venv'/'bin'/'python'
    purelib = subprocess.run([py, '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                             capture_output=True, text=True, check=True).stdout.strip()
    adds = ''.join(f'import site; site.addsitedir({d!r})\n' for d in site.getsitepackages())
    Path(purelib, 'here.pth').write_text(adds)   # llmsurgery and its dependencies, its editable install's finder too
    pkg = d/'toy'; pkg.mkdir()
    (pkg/'llmsurgery_toy.py').write_text(TOY)
    (pkg/'pyproject.toml').write_text(PYPROJECT)
    r = subprocess.run([sys.executable, '-m', 'pip', '--python', str(py), 'install', '--no-deps', '--no-build-isolation',
                        '--no-index', '-q', str(pkg)], capture_output=True, text=True, timeout=300)
    assert r.returncode==0, r.stderr[-2000:]
    script = d/'bin'/'llmsurgery-compact'; script.parent.mkdir()
    script.write_text(CLI)
    return py,script

@pytest.fixture
def store(tmp_path):
    "A toy session with a compaction half way, in a sandboxed home: `(env, work dir, session file)`"
    home,work = tmp_path/'home',tmp_path/'work'
    work.mkdir(parents=True)
    log = [dict(toy='session', id='7a1c0000', cwd=str(work)), dict(toy='say', who='user', text='Count the rows of data.csv'),
           dict(toy='run', id='c1', cmd='wc -l data.csv'), dict(toy='out', id='c1', text='18 data.csv'),
           dict(toy='say', who='assistant', text='It has 17 rows and a header.'),
           dict(toy='summary', text='The user asked for the rows of data.csv: 17, and a header.'),
           dict(toy='say', who='user', text='Now count its columns.')]
    src = home/'.toy'/'sessions'/'7a1c0000.jsonl'
    src.parent.mkdir(parents=True)
    src.write_text(''.join(json.dumps(r)+'\n' for r in log))
    env = dict(os.environ, HOME=str(home), XDG_STATE_HOME=str(home/'state'), XDG_DATA_HOME=str(home/'data'),
               XDG_CONFIG_HOME=str(home/'config'), CLAUDE_CONFIG_DIR=str(home/'.claude'), CODEX_HOME=str(home/'.codex'),
               GEMINI_CLI_HOME=str(home))
    env.pop('TOY_HOME', None)
    return env,work,src

def run(toy_venv, store, *args):
    py,script = toy_venv
    env,work,src = store
    p = subprocess.run([py, '-P', script, *map(str, args)], capture_output=True, text=True, env=env, cwd=work, timeout=120)
    return p.returncode,p.stdout,p.stderr

def test_the_package_adds_its_host(toy_venv, store):
    rc,out,err = run(toy_venv, store, '--help')
    assert rc==0 and '--host {claude,codex,gemini,opencode,toy}' in out.replace('\n', ' ').replace('  ', ' ') or 'toy}' in out, out
    rc,out,err = run(toy_venv, store, '--list')
    rows = [l for l in out.splitlines() if l.startswith('toy')]
    assert rc==0 and len(rows)==1 and '7a1c0000' in rows[0] and 'Count the rows of data.csv' in rows[0], (out, err)

def test_a_compaction_and_recall(toy_venv, store):
    env,work,src = store
    rc,doc,err = run(toy_venv, store, '7a1c', '--report')
    assert rc==0, err
    assert 'Now count its columns.' in doc and '17, and a header' in doc and f'`{src}`' in doc
    assert '- Task (the first prompt typed): § Count the rows of data.csv §' in doc   # from before the compaction
    rc,out,err = run(toy_venv, store, src, '--show', '3-4')
    assert rc==0 and out.startswith('#3\n! wc -l data.csv') and '#4\n> 18 data.csv' in out, (out, err)
    rc,out,err = run(toy_venv, store, src, '--grep', 'rows')
    assert rc==0 and '#2: § Count the rows of data.csv §' in out, (out, err)

def test_a_resumed_session(toy_venv, store):
    env,work,src = store
    before = src.read_bytes()
    rc,out,err = run(toy_venv, store, src, '--resume')
    assert rc==0, err
    cmd = out.splitlines()[-1]
    assert cmd.startswith('toy --resume '), out
    new = src.parent/f'{cmd.split()[-1]}.jsonl'
    recs = [json.loads(l) for l in new.read_text().splitlines()]
    assert [r['toy'] for r in recs]==['session', 'summary'] and recs[1]['text'].startswith('This session is being continued')
    assert src.read_bytes()==before                                   # the original is only read
    rc,out,err = run(toy_venv, store, cmd.split()[-1][:6], '--show', '2')   # by its id: its numbers go on from the original's
    assert rc==0 and out.startswith('#2\n§ Count the rows of data.csv §'), (out, err)

def test_search_finds_its_sessions(toy_venv, store):
    """`--search` reads the toy host's sessions through the registry: words from before and after its compaction, each
    shown by `--show` of the hit; a session it adds later is found on the next search"""
    env,work,src = store
    rc,out,err = run(toy_venv, store, '--search', 'columns OR "rows of data.csv"', '--host', 'toy')
    hits = out.splitlines()[:-1]
    assert rc==0 and [h.split()[:2] for h in hits]==[['toy', '7a1c0000']]*len(hits), (out, err)
    assert {h.split()[4] for h in hits} >= {'#2', '#7'} and 'columns' in out, out
    rc,shown,err = run(toy_venv, store, '--show', '7', '7a1c0000')
    assert rc==0 and shown.startswith('#7\n§ Now count its columns. §'), (shown, err)
    new = src.parent/'7b2d0000.jsonl'
    new.write_text(''.join(json.dumps(r)+'\n' for r in [dict(toy='session', id='7b2d0000', cwd=str(work)),
                                                        dict(toy='say', who='user', text='Plot the wombat counts.')]))
    rc,out,err = run(toy_venv, store, '--search', 'wombat')
    assert rc==0 and out.splitlines()[0].split()[:2]==['toy', '7b2d0000'], (out, err)

def test_a_host_is_named_in_its_own_module_only():
    """No module of the package names a host but its own (the package's docstring, which lists the modules, and the two
    indexes generated from the modules aside: nbdev's, and the hosts' gates, which `tests/test_passthrough.py` checks)"""
    from llmsurgery.hosts.base import hosts
    root = Path(__file__).resolve().parent.parent/'llmsurgery'
    texts = {p: p.read_text() for p in root.rglob('*.py') if p.name not in ('__init__.py', '_modidx.py', '_gates.py')}
    for h in hosts():
        said = re.compile(rf'\b(?:{re.escape(h.name)}|{re.escape(h.label)})\b', re.I)
        assert not [p.relative_to(root) for p,t in texts.items() if p.stem!=h.name and said.search(t)], h.name
