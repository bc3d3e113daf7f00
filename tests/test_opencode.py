"opencode, proven with the real client offline: sessions it writes into its SQLite store, read while it runs"
import json, os, subprocess, sys, threading, time
import pytest
from pathlib import Path
from hostkit import text, sha, sandbox_env, EXE, one_turn, AnthropicMock, run_claude, claude_sessions
from ockit import (install_opencode, ChatMock, ocbash, full, slow, run_opencode, opencode_env, opencode_db, oc_sessions,
                   oc_rows, OPENCODE_VER)

@pytest.fixture(scope='module')
def oc(tmp_path_factory):
    "A genuine opencode session: a bash call that ran, a forced compaction, then one more turn: `(home, cwd, id)`"
    b = install_opencode()
    d = tmp_path_factory.mktemp('oc')
    home,cwd = d/'home',d/'work'
    cwd.mkdir()
    (cwd/'notes.txt').write_text('milk\neggs\n')
    with ChatMock([ocbash('cat notes.txt', 'Show the notes'), text('The notes list milk and eggs.')]) as s:
        rc,out,err = run_opencode(b, home, cwd, 'What is in notes.txt?', s, context=8000)
    assert rc==0, err
    (sid,_,_), = oc_sessions(home)
    with ChatMock([full(text('Bread is not on it.')), text('Nothing more to do.')]) as s:
        rc,out,err = run_opencode(b, home, cwd, 'Is bread on the list?', s, '-s', sid, context=8000)
        assert rc==0, err
        assert any('context summarization agent' in json.dumps(r['body']) for r in s.model_requests())
    with ChatMock([text('Add bread then.')]) as s:
        assert run_opencode(b, home, cwd, 'What should I add?', s, '-s', sid, context=8000)[0]==0
    return home,cwd,sid

def compact(home, cwd, *args):
    "`llmsurgery-compact ARGS` run in `cwd` with the sandbox's HOME and XDG folders, opencode on PATH: (rc, stdout, stderr)"
    env = opencode_env(home, cwd) | {k:v for k,v in os.environ.items() if k=='PYTHONPATH'}
    env['PATH'] = f"{install_opencode().parent}:{env['PATH']}"
    p = subprocess.run([str(EXE), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return p.returncode,p.stdout,p.stderr

def test_version(tmp_path):
    b = install_opencode()
    out = subprocess.run([b, '--version'], env=opencode_env(tmp_path, tmp_path), capture_output=True, text=True, timeout=60)
    assert OPENCODE_VER in out.stdout

def test_newest_of_the_folder_after_the_compaction(oc):
    home,cwd,sid = oc
    before = sha(opencode_db(home))
    rc,out,err = compact(home, cwd, '--host', 'opencode')
    assert rc==0, err
    state,conv = out.split('## Conversation')
    assert "Earlier conversation (the host's summary): § MOCK-OPENCODE-SUMMARY" in state
    assert 'MOCK-OPENCODE-SUMMARY' not in conv and out.count('MOCK-OPENCODE-SUMMARY')==1   # said once, in the state
    assert 'Task (the first prompt typed): § What is in notes.txt? §' in state
    assert '§ What should I add? §' in conv and 'Add bread then.' in conv
    assert 'milk' not in conv and 'Bread is not on it' not in conv   # before the boundary
    assert f'The complete, authoritative transcript is `{sid}`' in out
    assert "opencode's count" in err
    assert sha(opencode_db(home))==before   # only ever read

def test_all_one_numbering_and_recall(oc):
    home,cwd,sid = oc
    rc,out,err = compact(home, cwd, sid[:10], '--all')
    assert rc==0, err
    assert '! cat notes.txt' in out and '> milk' in out and 'Bread is not on it' in out and 'Add bread then.' in out
    assert 'step-' not in out and 'Continue if you have next steps' not in out
    turns = [int(l.split('#')[1]) for l in out.splitlines() if l.startswith('*** #')]
    assert turns==sorted(turns) and turns[0]==1
    rc,got,err = compact(home, cwd, sid, '--grep', 'milk')
    assert rc==0, err
    n = int(got.splitlines()[0].split(':')[0].lstrip('#'))
    rc,shown,err = compact(home, cwd, sid, '--show', n)
    assert rc==0 and 'milk' in shown and shown.startswith(f'#{n}\n')
    rc,shown,err = compact(home, cwd, sid, '--show', turns[-1])
    assert rc==0 and '§ What should I add? §' in shown   # the document's numbers are the recall's

def test_list_prefix_and_errors(oc, tmp_path):
    home,cwd,sid = oc
    rc,out,err = compact(home, cwd, '--list')
    assert rc==0 and sid in out and 'opencode' in out and 'What is in notes.txt?' in out
    rc,out,err = compact(home, cwd, '--list', '--host', 'claude')
    assert rc==0 and sid not in out and 'no session' in out+err   # none of claude's: said, not an error
    rc,out,err = compact(home, cwd, 'ses_nothinglikethis')
    assert rc==2 and 'no session id starts with' in err and str(opencode_db(home)) in err and 'Traceback' not in err
    other = tmp_path/'elsewhere'; other.mkdir()
    rc,out,err = compact(home, other, '--host', 'opencode')
    assert rc==2 and 'no session of' in err and 'Traceback' not in err

def test_xdg_data_home(oc, tmp_path):
    home,cwd,sid = oc
    moved = tmp_path/'data'
    moved.mkdir()
    os.symlink(home/'.local'/'share'/'opencode', moved/'opencode')
    env = sandbox_env(tmp_path/'h') | dict(XDG_DATA_HOME=str(moved))
    p = subprocess.run([str(EXE), sid, '--show', '1'], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode==0 and 'What is in notes.txt?' in p.stdout

def test_read_while_opencode_writes(tmp_path):
    "opencode holds its store (WAL) while it waits for its model: a read then sees the prompt, and opencode finishes"
    b = install_opencode()
    home,cwd = tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    with ChatMock([slow(text('first answer'), 0)]) as s: assert run_opencode(b, home, cwd, 'first prompt', s)[0]==0
    (sid,_,_), = oc_sessions(home)
    db = opencode_db(home)
    got = {}
    with ChatMock([slow(text('late answer'), 6)]) as s:
        t = threading.Thread(target=lambda: got.update(r=run_opencode(b, home, cwd, 'second prompt', s, '-s', sid)))
        t.start()
        end = time.monotonic()+30
        while time.monotonic()<end and not s.main_requests(): time.sleep(0.2)
        assert s.main_requests() and t.is_alive()
        assert Path(f'{db}-wal').exists()   # opencode writes in WAL mode
        rc,out,err = compact(home, cwd, sid, '--grep', 'prompt')
        t.join(60)
    assert rc==0 and '§ second prompt §' in out and 'late answer' not in out, err
    assert got['r'][0]==0, got['r'][2][-2000:]
    rc,out,err = compact(home, cwd, sid, '--grep', 'late')
    assert rc==0 and 'late answer' in out

def _rows(home, sid):
    "Every message and part row of session `sid`, for comparing before and after"
    return oc_rows(opencode_db(home), 'select m.id, m.data, p.id, p.data from message m left join part p '
                   'on p.message_id=m.id where m.session_id=? order by m.id, p.id', sid)

def _said(server):
    "The model-visible messages of the last main request, as JSON text"
    return json.dumps(server.main_requests()[-1]['body']['messages'], ensure_ascii=False)

def test_resume_in_opencode(oc):
    "`--resume` adds a session `opencode run -s` resumes: its model gets the document; the original's rows are as they were"
    home,cwd,sid = oc
    before = _rows(home, sid)
    rc,out,err = compact(home, cwd, sid, '--resume')
    assert rc==0, err
    cmd = out.splitlines()[-1]
    new = cmd.split()[-1]
    assert cmd==f'opencode -s {new}' and new.startswith('ses_') and new!=sid
    assert _rows(home, sid)==before
    with ChatMock([text('Continuing from the document.')]) as s:
        rc,_,e = run_opencode(install_opencode(), home, cwd, 'Go on', s, '-s', new)
        assert rc==0, e
        said = _said(s)
    assert 'This session is being continued from an earlier conversation, compacted' in said
    assert 'What should I add?' in said and 'MOCK-OPENCODE-SUMMARY' in said and 'Go on' in said
    rc,out,err = compact(home, cwd, new, '--show', '2')
    assert rc==0 and 'continued from an earlier conversation' in out

def test_to_claude_from_opencode(oc, hosts, tmp_path):
    "`--to claude` from opencode: the real Claude Code resumes it and its model gets the document"
    home,cwd,sid = oc
    rc,out,err = compact(home, cwd, sid, '--to', 'claude')
    assert rc==0, err
    new = out.splitlines()[-1].split()[-1]
    with AnthropicMock([text('Going on in Claude Code.')]) as s:
        rc,o,e = run_claude(hosts[0], home, cwd, 'Go on', s, '--resume', new)
        assert rc==0, e
        said = json.dumps(s.model_requests()[-1]['body']['messages'])
    assert 'continued from an earlier conversation, compacted' in said and 'What should I add?' in said

def test_to_opencode_from_claude(hosts, tmp_path):
    "`--to opencode` from a real Claude Code session: opencode resumes it and its model gets the document"
    home,cwd = tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    src = one_turn('claude', hosts[0], home, cwd, 'Plan the garden beds', 'Three beds: beans, kale, leeks.')
    with ChatMock([text('hello')]) as s: assert run_opencode(install_opencode(), home, cwd, 'hi', s)[0]==0   # a model in the store
    rc,out,err = compact(home, cwd, src, '--to', 'opencode')
    assert rc==0, err
    new = out.splitlines()[-1].split()[-1]
    with ChatMock([text('Going on in opencode.')]) as s:
        rc,_,e = run_opencode(install_opencode(), home, cwd, 'Go on', s, '-s', new)
        assert rc==0, e
        said = _said(s)
    assert 'Plan the garden beds' in said and 'beans, kale, leeks' in said

def test_failed_import_leaves_the_store(oc, monkeypatch):
    "An import opencode refuses half way (a message with no model) takes out the session it began: the store is as it was"
    import llmsurgery.hosts.opencode as o
    from llmsurgery.sessions import read_session, write_resume
    from llmsurgery.hosts.base import host_named
    home,cwd,sid = oc
    for k,v in opencode_env(home, cwd).items(): monkeypatch.setenv(k, v)
    monkeypatch.setenv('PATH', f"{install_opencode().parent}:{os.environ['PATH']}")
    monkeypatch.chdir(cwd)
    made = o.oc_resume_export
    def broken(doc, sid, cwd, model):
        e = made(doc, sid, cwd, model)
        del e['messages'][0]['info']['model']
        return e
    monkeypatch.setattr(o, 'oc_resume_export', broken)
    before = oc_sessions(home)
    with pytest.raises(RuntimeError, match='opencode import failed'): write_resume(read_session(host_named('opencode').session_files()[0]), 'DOC')
    assert oc_sessions(home)==before

def test_plugin_adds_the_state_after_a_real_compaction(tmp_path):
    "With the plugin installed, the request after opencode's own compaction carries llmsurgery's state beside its summary"
    b = install_opencode()
    home,cwd = tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    (cwd/'notes.txt').write_text('milk\n')
    rc,out,err = compact(home, cwd, '--install-hooks', 'opencode')
    plugin = home/'.config'/'opencode'/'plugins'/'llmsurgery.js'
    assert rc==0 and str(plugin) in out and plugin.is_file(), err
    with ChatMock([ocbash('cat notes.txt'), text('It says milk.')]) as s:
        assert run_opencode(b, home, cwd, 'Read notes.txt', s, context=8000)[0]==0
    (sid,_,_), = oc_sessions(home)
    with ChatMock([full(text('Buy milk.')), text('Nothing more.')]) as s:
        rc,_,e = run_opencode(b, home, cwd, 'What to buy?', s, '-s', sid, context=8000)
        assert rc==0, e
        after = [r for r in s.main_requests() if 'What did we do so far?' in json.dumps(r['body'])]
    assert after, 'no request after the compaction'
    said = json.dumps(after[0]['body']['messages'], ensure_ascii=False)
    assert "llmsurgery's state of the part of this session that was just compacted" in said
    assert 'MOCK-OPENCODE-SUMMARY' in said and 'Read notes.txt' in said and f'llmsurgery-compact {sid}' in said
    stored = json.dumps(oc_rows(opencode_db(home), 'select data from part where session_id=?', sid))
    assert "llmsurgery's state" not in stored   # the store keeps opencode's summary as it was
    rc,out,err = compact(home, cwd, '--uninstall-hooks', 'opencode')
    assert rc==0 and not plugin.exists() and not plugin.parent.exists(), err

def test_plugin_failure_leaves_opencode_as_it_was(tmp_path):
    "A plugin whose hook command fails adds nothing: opencode compacts and goes on as without it"
    b = install_opencode()
    home,cwd = tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    from llmsurgery.hosts.base import host_named
    plugin = home/'.config'/'opencode'/'plugins'/'llmsurgery.js'
    plugin.parent.mkdir(parents=True)
    plugin.write_text(host_named('opencode').plugin_text('exit 3'))
    with ChatMock([full(text('Hi.')), text('Nothing more.')]) as s:
        rc,_,e = run_opencode(b, home, cwd, 'Hello', s, context=8000)
        assert rc==0, e
        after = [r for r in s.main_requests() if 'What did we do so far?' in json.dumps(r['body'])]
    assert after and "llmsurgery's state" not in json.dumps(after[0]['body'])

GENUINE = Path(__file__).resolve().parent/'data'/'genuine'/'opencode.db'

def test_genuine_store_read_from_a_read_only_file(tmp_path, monkeypatch):
    "The bundled store, read-only on disk: read whole and after its compaction, numbered alike, and left byte for byte"
    from llmsurgery.hosts.opencode import store_sessions
    from llmsurgery.hosts.base import host_named
    db = tmp_path/'opencode'/'opencode.db'
    db.parent.mkdir()
    db.write_bytes(GENUINE.read_bytes())
    db.chmod(0o444)
    ref, = store_sessions(db)
    oc = host_named('opencode')
    whole,after = oc.read(ref, whole=True),oc.read(ref)
    assert whole.summary==after.summary and whole.summary.startswith('## Objective')
    assert [n for n,_ in whole.aside]==[after.nums[0]] and set(after.nums[1:])<=set(whole.nums)
    assert [m.text for n,m in zip(whole.nums, whole) if n in after.nums[1:]]==[m.text for m in after[1:]]
    assert (whole.host_toks, after.host_toks)==(7900, 100)
    assert db.read_bytes()==GENUINE.read_bytes()

def test_plugin_install_is_once_and_leaves_what_is_not_ours(tmp_path, monkeypatch):
    from llmsurgery.install import install_hooks, uninstall_hooks
    monkeypatch.setenv('XDG_CONFIG_HOME', str(tmp_path/'cfg'))
    monkeypatch.setenv('XDG_STATE_HOME', str(tmp_path/'state'))
    plugins = tmp_path/'cfg'/'opencode'/'plugins'
    plugins.mkdir(parents=True)
    (plugins/'mine.js').write_text('export const Mine = async () => ({})\n')
    install_hooks('opencode'); first = (plugins/'llmsurgery.js').read_bytes()
    install_hooks('opencode')
    assert (plugins/'llmsurgery.js').read_bytes()==first and 'llmsurgery.hooks opencode' in first.decode()
    uninstall_hooks('opencode')
    assert sorted(p.name for p in plugins.iterdir())==['mine.js']   # its folder was there before: kept
    (plugins/'llmsurgery.js').write_text('// somebody else\n')
    with pytest.raises(ValueError, match="not llmsurgery's"): install_hooks('opencode')
    assert uninstall_hooks('opencode')==[f'{plugins/"llmsurgery.js"}: no llmsurgery plugin to remove',
                                         f'{plugins.parent/"opencode.json"}: no llmsurgery MCP server to remove']
    assert (plugins/'llmsurgery.js').read_text()=='// somebody else\n'
