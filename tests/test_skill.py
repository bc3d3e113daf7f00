"The `llmsurgery.skill` pyskill: found by `list_pyskills()`, rendered by `doc()`, its tools registered, and each tool end to end"
import ast, inspect, json, os, re, subprocess, sys, warnings
from pathlib import Path
import pytest
import pyskills
from fastcore.docments import docments
from pyskills.core import __pytools__
import aidialog.ipynb   # patches `Dialog.save`, which the `dlg` fixture calls: no module the skill imports does any more
import llmsurgery.skill as sk
from llmsurgery.skill import dialog_doc, dialog_copy, session_doc, recent_sessions, session_report, resume_session
from llmsurgery.sessions import read_session
from llmsurgery.hist import chat2dlg
from llmsurgery.toks import len_toks
from llmsurgery.render import compact_policy
from llmsurgery.hosts.base import host_named
claude = host_named('claude')

ROOT = Path(__file__).resolve().parent.parent
ex = ROOT/'examples'
real = ROOT/'tests'/'data'/'claude-real'
ENV = dict(os.environ)   # as the run began: importing pyskills under another HOME rewrites the venv's pyskills.pth to point there
TOOLS = {'dialog_doc', 'dialog_copy', 'session_doc', 'recent_sessions', 'session_report', 'resume_session', 'recall',
         'search'}
MARKS = ('`§ … §`', '`» … »`', '`python`', '`!`', '`▶`', '`>`', '`¶`', '`***`', '` … `')

def description():
    "The first paragraph of skill.py's docstring, read from the source as pyskills reads it"
    return ast.get_docstring(ast.parse(Path(sk.__file__).read_text())).split('\n\n')[0]

def test_listed():
    "`list_pyskills()` finds the skill through its entry point (run `pip install -e .` if this fails) and shows its description"
    desc = pyskills.list_pyskills().get('llmsurgery.skill')
    assert desc == description(), desc
    assert desc.startswith('Compact a Solveit dialog') and '\n' not in desc

def test_doc():
    "`doc()` renders the skill: its description, what the marks mean, that the transcript is authoritative, and each tool"
    d = pyskills.doc(sk)
    assert description() in d and 'authoritative' in d
    for m in MARKS: assert m in d, m
    for t in TOOLS: assert f'- def {t}(' in d, t
    assert '## shared params:' in d and 'user_toks: int = None' in d
    for t in TOOLS:   # each tool's own doc: its signature with every parameter and the result documented, and its docstring
        f = getattr(sk, t)
        assert pyskills.doc(f).startswith(f'def {t}(') and f.__doc__ in pyskills.doc(f)
        assert all(docments(f).values()) and set(docments(f)) == {*inspect.signature(f).parameters, 'return'}

BUDGET_DOCS = dict(last_n='How many final messages to keep whole', user_toks='Token budget for a user message',
                   asst_toks='Token budget for assistant prose', call_toks='Token budget for a tool call', result_toks='Token budget for a tool result')

@pytest.mark.parametrize('t', sorted(TOOLS - {'recent_sessions', 'recall', 'search'}))   # the tools that compact
def test_budgets_in_doc(t):
    "Each budgeted tool's `doc()` shows every budget it takes on its own line: typed, None by default, its doc comment naming the default"
    f,d = getattr(sk, t),pyskills.doc(getattr(sk, t))
    names = [k for k in BUDGET_DOCS if not (t.startswith('dialog') and k=='last_n')]   # a dialog keeps no tail whole
    for k in names:
        assert re.search(rf'^ +(\*, )?{k}:int=None, # {re.escape(BUDGET_DOCS[k])} \(None: {compact_policy[k]}\)$', d, re.M), (t, k)
        assert inspect.signature(f).parameters[k].default is None
    assert ('last_n' in d) == (not t.startswith('dialog'))

def test_unknown_budget():
    "A budget a tool does not take fails as for any function, before anything is read"
    with pytest.raises(TypeError, match="dialog_doc\\(\\) got an unexpected keyword argument 'last_n'"): dialog_doc('missing.ipynb', last_n=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'usr_toks'"): session_doc('missing.jsonl', usr_toks=3)

def test_registered():
    "Importing the skill registers exactly its tools, all under the skill module, and nothing else"
    code = ("import json, pyskills.core as p\nbefore = {k: set(v) for k,v in p.__pytools__.items()}\nimport llmsurgery.skill as sk\n"
            "new = [getattr(k, '__name__', str(k)) for k in p.__pytools__ if k not in before or p.__pytools__[k]!=before[k]]\n"
            "names = sorted(o[0] if isinstance(o, tuple) else o for o in p.__pytools__[sk])\n"
            "print(json.dumps([new, names, sorted(sk.__all__)]))")
    new,names,all_ = json.loads(subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, env=ENV).stdout)
    assert new == ['llmsurgery.skill'] and set(names) == TOOLS == set(all_)
    assert {o[0] if isinstance(o, tuple) else o for o in __pytools__[sk]} == TOOLS
    pol = dict(o for o in __pytools__[sk] if isinstance(o, tuple))
    assert set(pol) == {'dialog_copy'} and pol['dialog_copy'].kw == 'out'   # a sandbox can check where the copy goes

@pytest.fixture(autouse=True)
def stores(tmp_path, monkeypatch):
    "Every test runs with HOME and the hosts' stores under its temp folder: a tool may write to a store, never to the real one"
    home = tmp_path/'home'
    for k,v in dict(HOME=home, CLAUDE_CONFIG_DIR=home/'.claude', CODEX_HOME=home/'.codex').items(): monkeypatch.setenv(k, str(v))
    return home

@pytest.fixture
def dlg(tmp_path):
    "A dialog notebook made from the bundled Claude Code example"
    p = tmp_path/'dialog.ipynb'
    chat2dlg(read_session(ex/'claude_short.jsonl', warn=False).msgs, 'dialog').save(p)
    return p

def raises(match, f, *a, **kw):
    "`f(*a, **kw)` raises a ValueError matching `match`, raised by the skill or the service it calls (not from deep inside)"
    with pytest.raises(ValueError, match=match) as e: f(*a, **kw)
    assert e.value.__cause__ is None and e.value.__suppress_context__ or e.value.__context__ is None
    assert Path(e.traceback[-1].path).name in ('skill.py', 'service.py', 'contextlib.py'), e.traceback[-1].path

BAD = [('missing', 'no such'), ('nowhere/x.jsonl', 'folder .* does not exist'), ('.', 'is a directory'),
       ('notes.txt', 'not a known session format'), ('empty.jsonl', 'the file is empty')]

@pytest.mark.parametrize('tool', [dialog_doc, session_doc, session_report, resume_session])
@pytest.mark.parametrize('bad,match', BAD)
def test_bad_paths(tool, bad, match, tmp_path):
    (tmp_path/'notes.txt').write_text('just notes\n')
    (tmp_path/'empty.jsonl').write_text('')
    raises(match, tool, tmp_path/bad)
    raises('no session given|no dialog notebook given', tool, '')

def test_wrong_kind(dlg):
    raises('is a claude session, not a dialog notebook: use session_doc', dialog_doc, ex/'claude_short.jsonl')
    raises('is a codex session, not a dialog notebook', dialog_copy, ex/'codex_short.jsonl', dlg.parent/'c.ipynb')
    raises('is a dialog notebook: use dialog_doc', session_doc, dlg)
    raises('a dialog notebook is compacted whole', session_report, dlg, since=dlg)
    raises('user_toks=-1', session_doc, ex/'claude_short.jsonl', user_toks=-1)
    raises('too small', session_doc, ex/'claude_short.jsonl', max_toks=5)

def test_dialog_doc(dlg):
    before = dlg.read_bytes()
    d = dialog_doc(dlg, notes='then run the tests')
    assert type(d) is str and d.startswith('This session is being continued') and f'`{dlg.resolve()}`' in d
    assert '§ ' in d and '» ' in d and d.endswith('.') and 'then run the tests' in d
    assert len_toks(dialog_doc(dlg, asst_toks=10, result_toks=10)) <= len_toks(d)
    assert dlg.read_bytes() == before

def test_dialog_copy(dlg, tmp_path):
    before = dlg.read_bytes()
    out = tmp_path/'copy.ipynb'
    assert dialog_copy(dlg, out, asst_toks=20) == str(out)
    assert dlg.read_bytes() == before and out.stat().st_size < len(before)
    assert len(read_session(out).dlg.messages) == len(read_session(dlg).dlg.messages)
    assert sorted(o.name for o in tmp_path.iterdir()) == ['copy.ipynb', 'dialog.ipynb']   # no temp file left behind
    raises('already exists', dialog_copy, dlg, out)
    assert dialog_copy(dlg, out, overwrite=True) == str(out)
    raises('is the file being compacted', dialog_copy, dlg, dlg, overwrite=True)
    raises('folder .* does not exist', dialog_copy, dlg, tmp_path/'nowhere'/'c.ipynb')
    raises('is a directory', dialog_copy, dlg, tmp_path)
    raises('no out path given', dialog_copy, dlg, '')
    assert not (tmp_path/'nowhere').exists() and dlg.read_bytes() == before

def sessions():
    "The bundled examples and the real Claude Code sessions"
    res = [ex/'claude_short.jsonl', ex/'codex_short.jsonl']
    return res + sorted(real.glob('*.jsonl'))

@pytest.mark.parametrize('session', sessions(), ids=lambda p: p.name)
def test_session_tools(session, tmp_path, stores):
    "session_doc within max_toks, naming its transcript; session_report agrees with it; since keeps the earlier body; the file is untouched"
    before = session.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter('error')   # the tools say nothing on the side
        d = session_doc(session, max_toks=4000, notes='next: the tests')
        r = session_report(session, max_toks=4000)
    assert len_toks(d) <= 4000 and f'`{session.resolve()}`' in d and 'next: the tests' in d
    line,*table = r.splitlines()
    counts = {k.strip(): int(v.replace(',', '').split('.')[0]) for k,v in (o.split(':') for o in table)}
    assert line.startswith(f"{counts['messages read']:,} messages")
    assert counts['tokens after'] == len_toks(session_doc(session, max_toks=4000))
    (tmp_path/'doc.md').write_text(d)
    assert session_report(session, since=tmp_path/'doc.md').startswith("kept the earlier document's body verbatim")
    cmd = resume_session(session, cwd=tmp_path, max_toks=4000, notes='next: the tests')
    new = (claude.project_dir(tmp_path)/f'{cmd.split()[-1]}.jsonl') if 'claude' in cmd else next(stores.glob('.codex/sessions/*/*/*/*.jsonl'))
    assert read_session(new).summary == d and new.is_relative_to(stores)   # the new session opens with the document, in the (temp) store
    assert session.read_bytes() == before

def test_real_data_present():
    "The real sessions are part of the end-to-end check, on every clone"
    assert len(list(real.glob('*.jsonl'))) >= 5 and real/'short.jsonl' in sessions()
    raises('is a directory', session_doc, next(p for p in real.iterdir() if p.is_dir()))

@pytest.fixture
def project(tmp_path, stores):
    "A project directory with one Claude Code session (older) and one Codex session (newer) in the temp stores"
    proj = tmp_path/'proj'
    proj.mkdir()
    cc = claude.project_dir(proj)/'3f0c7f6e-2a61-4c39-9d5e-1d3c0e2b7a10.jsonl'
    cc.parent.mkdir(parents=True)
    cc.write_bytes((ex/'claude_short.jsonl').read_bytes())
    cx = stores/'.codex/sessions/2025/09/15/rollout-2025-09-15T14-00-00-d95bafc8-f2a4-427b-9cf4-bb99f4bea973.jsonl'
    cx.parent.mkdir(parents=True)
    cx.write_text((ex/'codex_short.jsonl').read_text().replace('"/home/dev/csvtidy"', json.dumps(str(proj.resolve()))))
    os.utime(cc, (1e9, 1e9))
    return proj, cc, cx

def test_directory(project, tmp_path):
    "With no session, the tools take the newest of `cwd`; an id prefix names one; recent_sessions lists them, newest first"
    proj,cc,cx = project
    assert f'`{cx.resolve()}`' in session_doc(cwd=proj, max_toks=2000)
    assert f'`{cc.resolve()}`' in session_doc('3f0c7f6e', max_toks=2000)
    assert f'`{cc.resolve()}`' in session_doc(cwd=proj, host='claude')
    rows = recent_sessions(proj).splitlines()
    assert [r.split()[:2] for r in rows[1:]] == [['codex', 'd95bafc8-f2a4-427b-9cf4-bb99f4bea973'], ['claude', cc.stem]]
    assert rows[0].split()[0] == 'host' and len(recent_sessions(proj, n=1).splitlines()) == 2
    raises('no session of', recent_sessions, tmp_path)
    raises('no session of', session_doc, cwd=tmp_path)
    raises('is not a directory', recent_sessions, tmp_path/'nowhere')
    raises('is not a directory', session_doc, cwd=ex/'claude_short.jsonl')
    raises("pass cwd=", session_doc, proj)
    raises('unknown host', recent_sessions, proj, host='nohost')
    raises('no session id starts with', session_doc, 'abcdef12')

def test_resume(project):
    "resume_session writes the new session into the store and returns its command; the session continued is untouched"
    proj,cc,cx = project
    before,d = cx.read_bytes(),session_doc(cwd=proj, max_toks=1500)
    cmd = resume_session(cwd=proj, max_toks=1500)
    assert cmd.startswith(f'cd {proj.resolve()} && codex resume '), cmd
    new = [p for p in cx.parents[3].rglob('*.jsonl') if p!=cx]
    assert len(new) == 1 and cmd.endswith(new[0].stem[-36:]) and read_session(new[0]).summary == d
    assert cx.read_bytes() == before
    cmd = resume_session(cc.stem, cwd=proj)
    assert cmd.startswith(f'cd {proj.resolve()} && claude --resume ') and (cc.parent/f'{cmd.split()[-1]}.jsonl').is_file()
