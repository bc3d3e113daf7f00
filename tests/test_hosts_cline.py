"""Cline (npm `cline`), proven on the sessions the real CLI (3.0.65) wrote offline against a loopback model
(tests/data/genuine/cline, `tests/make_genuine_cline.py`) and with the real CLI itself, HOME in a temporary folder.

The three genuine sessions read right: prompts as typed, Cline's tools named as the other hosts', a failed command's
error, its hook contexts set aside; the compaction's sidecar is the boundary (`--all` reads past it), after an automatic
compaction and after `/compact`; the working directory is the manifest's. Put in a store, they are listed (`--list`,
`--host cline`), found by id, by its start and as the directory's newest, shown and grepped by number. `--resume` of
one and `--to cline` of a real Claude Code session write a session the real Cline resumes (`cline --id`) with the
document in its model's first request (and compacts in turn, read as a chain), and `--to claude` continues a Cline
session in the real Claude Code. With `--install-hooks cline`, the first tool call after a real automatic compaction,
and after `/compact` in the TUI, gives the model llmsurgery's state once; the hook fails open; the uninstall gives
the hooks folder back; the reader never fails on documents it cannot make sense of."""
import json, os, re, shutil, subprocess, time
from datetime import datetime
from pathlib import Path
import pytest
from hostkit import compact_in, sandbox_env, sha, text, AnthropicMock, run_claude, request_with, claude_sessions
from clinekit import install_cline, ChatMock, cline_auth, cline_tui, cline_data, cline_sessions, run_cline, run, reply
from llmsurgery.sessions import read_session, detect_format
from llmsurgery.discover import session_info
from llmsurgery.inject import summary_prefix
from aidialog.msg_parts import ToolUse
from hypothesis import given, strategies as st
from llmsurgery.hosts.base import host_named
from llmsurgery.hosts.cline import cl_read

DATA = Path(__file__).parent/'data'/'genuine'
GEN = DATA/'cline'
TASK = 'The add function in app.py subtracts: find out why and fix it'
SUMMARY = '## Goal\nMOCK-SUMMARY-1: the work so far'
def genuine(k): return next((GEN/k).glob('*.messages.json'))
IDS = {k: genuine(k).name.split('.')[0] for k in ('a-tools', 'b-auto', 'c-manual')}

@pytest.fixture(scope='session')
def cline():
    "The `cline` command, installed once into the cache (no npm registry fails the tests, never skips)"
    return install_cline()

def texts(s): return [p.text for m in s.msgs for p in m.content if getattr(p, 'text', None)]

# ---------------------------------------------------------------- the genuine sessions, read

@pytest.mark.parametrize('k', ['a-tools', 'b-auto', 'c-manual'])
def test_the_genuine_sessions_read(k):
    src = genuine(k)
    s, w = read_session(src), read_session(src, whole=True)
    assert detect_format(src) == 'cline' and s.fmt == 'cline' and not w.bad_lines and not s.bad_lines
    assert w.cwd == '/home/dev/work/c1' and w.task and '<user_input' not in w.task
    assert not [t for t in texts(w) if '<user_input' in t]
    for f in (src.with_name(src.name.replace('.messages.json', '.json')),
              src.with_name(src.name.replace('.messages', '.compaction'))):
        if f.exists(): assert detect_format(f) == 'cline' and len(read_session(f, whole=True).msgs) == len(w.msgs)

def test_tools_and_the_failed_command():
    s = read_session(genuine('a-tools'))
    assert s.task == TASK and s.summary is None and [m.role for m in s.msgs][:3] == ['user', 'assistant', 'tool']
    calls = [p for m in s.msgs for p in m.content if isinstance(p, ToolUse)]
    assert [c.name for c in calls] == ['Bash', 'Bash', 'Read', 'Edit']
    assert calls[0].arguments == {'command': 'cat app.py'}
    assert calls[3].arguments['file_path'] == '/home/dev/work/c1/app.py'
    res = [m.content[0].text for m in s.msgs if m.role == 'tool']
    assert res[1] == ("Error: [Command exited with code 2]\n\n[stderr]\n"
                      "ls: cannot access '/nonexistent-dir': No such file or directory\n")
    assert res[0] == 'def add(a, b):\n    return a - b\n' and res[3].startswith('Edited /home/dev/work/c1/app.py')
    assert [m.text for m in s.msgs][-1] == 'Fixed: add returned a - b; it adds now.'

@pytest.mark.parametrize('k, first', [('b-auto', 'Count the lines of app.py, twice'),
                                      ('c-manual', 'What does app.py hold?')])
def test_the_sidecar_is_the_boundary(k, first):
    "What Cline's model sees now: its summary, what it kept, what came after; `--all`: the whole transcript"
    s, w = read_session(genuine(k)), read_session(genuine(k), whole=True)
    assert s.summary.startswith(SUMMARY) and s.msgs[0].text.startswith(summary_prefix) and SUMMARY in s.msgs[0].text
    assert first not in texts(s) and first in texts(w) and w.task == first
    assert [m.text for m in w.msgs][-1] == [m.text for m in s.msgs][-1]
    assert len(w.aside) == 1 and SUMMARY in w.aside[0][1].text and not any(SUMMARY in t for t in texts(w))
    if k == 'c-manual': assert 'Now say what you saw, in one line' in texts(s)
    rc, out, err = compact_in(GEN, GEN, str(genuine(k)), '--all', '--report')
    assert rc == 0 and first in out, err

def test_a_transcript_that_is_not_json_is_one_line(tmp_path):
    src = tmp_path/'1796_abcde'/'1796_abcde.messages.json'
    src.parent.mkdir()
    shutil.copy(genuine('a-tools'), src)
    src.write_text(src.read_text()[:-40])   # cut short
    rc, out, err = compact_in(tmp_path, tmp_path, str(src))
    assert rc != 0 and len(err.strip().splitlines()) == 1 and 'Traceback' not in err, err

# ---------------------------------------------------------------- a store: found, listed, shown

def put(home, cwd, k):
    "Genuine session `k` in the sandbox `home`'s store, as run in `cwd`: its folder, its paths made the sandbox's"
    src = genuine(k).parent
    dest = cline_data(home)/'sessions'/IDS[k]
    dest.mkdir(parents=True)
    for f in src.iterdir():
        (dest/f.name).write_text(f.read_text().replace('/home/dev/work/c1', str(cwd)).replace('/home/dev', str(home)))
    return dest/genuine(k).name

@pytest.fixture
def store(tmp_path):
    home, cwd, other = tmp_path/'home', tmp_path/'work', tmp_path/'other'
    cwd.mkdir(), other.mkdir()
    paths = {k: put(home, cwd if k != 'b-auto' else other, k) for k in IDS}
    return home, cwd, other, paths

def test_list_find_show_and_grep(store):
    home, cwd, other, paths = store
    rc, out, err = compact_in(home, cwd, '--list', '--host', 'cline')
    rows = [l for l in out.splitlines() if l.startswith('cline')]
    assert rc == 0 and len(rows) == 2 and IDS['a-tools'] in out, out + err
    assert IDS['b-auto'] not in out   # another directory's
    assert TASK[:40] in out
    sid = IDS['c-manual']
    for ref in (sid, sid[:16]):   # its id, and the start of it
        rc, out, err = compact_in(home, other, ref, '--report', '--all')
        assert rc == 0 and 'What does app.py hold?' in out, err
    paths['a-tools'].touch()   # its file the newest, but its transcript says it was active before the other's
    rc, out, err = compact_in(home, cwd, '--report')
    assert rc == 0 and 'Now say what you saw' in out and TASK not in out, err
    rc, out, err = compact_in(home, cwd, str(paths['a-tools']), '--grep', 'nonexistent-dir')
    assert rc == 0 and re.search(r'^#5: .*No such file or directory', out, re.M), out
    rc, out, err = compact_in(home, cwd, str(paths['a-tools']), '--show', '5')
    assert rc == 0 and out.startswith('#5\n') and 'Command exited with code 2' in out, out + err

def test_a_long_session_is_listed_by_the_time_its_transcript_opens_with(store):
    "A session's last activity is its transcript's `updated_at`: a listing reads a few bytes of it, not all of it"
    home, cwd, other, paths = store
    p = paths['a-tools']
    d = json.loads(p.read_text())
    d['messages'] *= 2000   # about 10 MB
    p.write_text(json.dumps(d, indent=2))
    t = time.monotonic()
    info = session_info(host_named('cline'), p)
    assert info.activity == datetime.fromisoformat(d['updated_at']).timestamp() and time.monotonic()-t < 1
    os.utime(p, (0, 0))   # whatever the file's own time
    rc, out, err = compact_in(home, cwd, '--list')
    listed = [l.split()[1] for l in out.splitlines() if l.startswith('cline')]
    assert rc == 0 and listed == [IDS['c-manual'], IDS['a-tools']], out

def test_search_finds_it_and_show_prints_the_hit(store):
    home, cwd, other, paths = store
    rc, out, err = compact_in(home, cwd, '--search', 'cannot access')
    hit = next((l for l in out.splitlines() if l.startswith('cline')), None)
    assert rc == 0 and hit, out + err
    n = re.search(r'#(\d+)', hit)[1]
    rc, out, err = compact_in(home, cwd, '--show', n, str(paths['a-tools']))
    assert rc == 0 and 'No such file or directory' in out, out + err

# ---------------------------------------------------------------- continued in the real Cline, and elsewhere

def resumed(exe, home, cwd, sid, prompt, replies=(text('RESUMED-IN-CLINE.'),), window=None):
    "`(first request, mock)`: the real Cline given `prompt` in session `sid`, resumed (`cline --id`)"
    with ChatMock(list(replies)) as s:
        cline_auth(home, s, context_window=window)
        with cline_tui(exe, home, cwd, '--id', sid) as t:
            t.type(prompt)
            t.wait_for(replies[-1]['text'].rstrip('.'), timeout=60)
            time.sleep(1)
    return json.dumps(s.turns()[0]['body']['messages'], ensure_ascii=False),s

def test_resume_is_resumed_by_cline_with_the_document(cline, store):
    home, cwd, other, paths = store
    h = sha(paths['a-tools'])
    rc, out, err = compact_in(home, cwd, str(paths['a-tools']), '--resume')
    assert rc == 0 and sha(paths['a-tools']) == h and out.strip().splitlines()[-1].startswith('cline --id '), out + err
    new = out.split()[-1]
    folder = cline_data(home)/'sessions'/new
    assert sorted(p.name for p in folder.iterdir()) == [f'{new}.json', f'{new}.messages.json']
    s = read_session(folder/f'{new}.messages.json')
    assert TASK in s.summary and [m.role for m in s.msgs] == ['user'], s.msgs
    # resumed, its first reply said to be near the window: Cline compacts the continuation in turn
    sent,mock = resumed(cline, home, cwd, new, 'REQUEST-OMEGA: go on', [reply(run('wc -l app.py'), 19500),
                        text('RESUMED-IN-CLINE.')], window=20000)
    assert TASK in sent and 'No such file or directory' in sent and 'REQUEST-OMEGA' in sent, sent[:3000]
    assert len(mock.compactions()) == 1 and TASK in json.dumps(mock.compactions()[0]['body'])
    s, w = read_session(folder/f'{new}.messages.json'), read_session(folder/f'{new}.messages.json', whole=True)
    assert s.summary.startswith(SUMMARY) and s.msgs[-1].text == 'RESUMED-IN-CLINE.'
    assert w.chain == [(str(paths['a-tools']), 10)] and TASK in w.aside[0][1].text and SUMMARY in w.aside[1][1].text
    assert [m.text for m in w.msgs][0] == 'REQUEST-OMEGA: go on' and w.nums[0] > 10   # numbered after the transcript's

def test_to_cline_from_a_real_claude_session(cline, tmp_path):
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    rc, out, err = compact_in(home, cwd, str(DATA/'claude_bash.jsonl'), '--to', 'cline')
    assert rc == 0 and out.strip().startswith('cline --id '), out + err
    sent,_ = resumed(cline, home, cwd, out.split()[-1], 'REQUEST-CLINE: next')
    assert 'What files are here?' in sent and 'What is notes.txt?' in sent and 'REQUEST-CLINE' in sent

def test_to_claude_from_cline(hosts, tmp_path):
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    rc, out, err = compact_in(home, cwd, str(genuine('b-auto')), '--to', 'claude', '--all')
    assert rc == 0 and len(claude_sessions(home)) == 1, err
    with AnthropicMock([text('Continuing in Claude.')]) as s:
        rc, o, e = run_claude(hosts[0], home, cwd, 'REQUEST-CLAUDE: next', s, '--resume', out.split()[-1])
        assert rc == 0, e
    assert request_with(s, 'Count the lines of app.py, twice') and request_with(s, 'REQUEST-CLAUDE')

# ---------------------------------------------------------------- inside Cline: the hook file

STATE = "llmsurgery's state of the part of this session that was just compacted"

def hook_failures(home):
    log = Path(home)/'.local'/'state'/'llmsurgery'/'hooks.log'
    return log.read_text() if log.exists() else ''

def test_the_state_reaches_the_model_after_an_automatic_compaction_once(cline, tmp_path):
    """With the hook installed, a turn whose first reply says the context is near the window: Cline compacts, and the
    first tool call after that gives the model llmsurgery's state (the prompt the summary took), once. Cline runs no
    `PreCompact` hook, no `UserPromptSubmit` hook for the prompt, and gives the model nothing a `TaskStart` hook says"""
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    (cwd/'app.py').write_text('def add(a, b):\n    return a - b\n')
    rc, out, err = compact_in(home, cwd, '--install-hooks', 'cline')
    hook = cline_data(home).parent/'hooks'/'PostToolUse'
    assert rc == 0 and str(hook) in out and hook.stat().st_mode & 0o777 == 0o755, out + err
    for ev in ('PreCompact', 'UserPromptSubmit', 'TaskStart'):   # what Cline does not allow: each says if it ran
        (hook.parent/ev).write_text(f'#!/bin/sh\ncat > {tmp_path}/ran-{ev}\necho \'{{"context": "CTX-{ev}"}}\'\n')
        (hook.parent/ev).chmod(0o755)
    with ChatMock([reply(run('wc -l app.py'), 19500), run('cat app.py'), run('echo third'), text('All counted.')]) as s:
        cline_auth(home, s, context_window=20000)
        rc, o, e = run_cline(cline, home, cwd, 'PROMPT-ALPHA: count the lines of app.py')
        assert rc == 0 and len(s.compactions()) == 1, e[-2000:]
    time.sleep(1)   # TaskStart runs detached
    assert sorted(p.name for p in tmp_path.glob('ran-*')) == ['ran-TaskStart']   # no PreCompact, no UserPromptSubmit
    assert 'CTX-' not in json.dumps([r['body'] for r in s.model_requests()])   # and what TaskStart says goes nowhere
    sent = [json.dumps(r['body']['messages'], ensure_ascii=False) for r in s.turns()]
    assert [t.count(STATE) for t in sent] == [0, 0, 1, 1]   # from the request after the first call past the compaction
    assert 'PROMPT-ALPHA' in sent[2].split(STATE)[1] and '--show N' in sent[2]
    src, = cline_sessions(home)
    w = read_session(src, whole=True)
    assert not [t for t in texts(w) if STATE in t] and sum(STATE in m.text for _, m in w.aside) == 1   # set aside
    assert not hook_failures(home)

def test_the_state_reaches_the_model_after_compact_with_the_next_tool_call(cline, tmp_path):
    "In the TUI: a prompt, `/compact`, a prompt whose call's result comes back with the state of what `/compact` took"
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    (cwd/'app.py').write_text('def add(a, b):\n    return a - b\n')
    assert compact_in(home, cwd, '--install-hooks', 'cline')[0] == 0
    replies = [run('cat app.py'), text('app.py defines add(a, b).'), run('wc -l app.py'), text('TWO-LINES-DONE.')]
    with ChatMock(replies) as s:
        cline_auth(home, s)
        with cline_tui(cline, home, cwd) as t:
            for p in ('PROMPT-ONE: what does app.py hold?', '/compact', 'PROMPT-TWO: count its lines'):
                time.sleep(1.5)
                t.type(p)
                t.wait_for('compacted' if p == '/compact' else re.compile(r'defines add|TWO-LINES-DONE'), timeout=60)
            time.sleep(1.5)
    assert len(s.compactions()) == 1
    sent = [json.dumps(r['body']['messages'], ensure_ascii=False) for r in s.turns()]
    assert [t.count(STATE) for t in sent] == [0, 0, 0, 1] and 'PROMPT-ONE' in sent[3].split(STATE)[1]
    assert not hook_failures(home)

def fire(home, cwd, sid):
    "Run the hook file the install wrote as Cline runs it on a `PostToolUse` of session `sid`: (status, stdout)"
    event = dict(clineVersion='', hookName='tool_result', taskId='conv_1', sessionContext=dict(rootSessionId=sid),
                 workspaceRoots=[str(cwd)], postToolUse=dict(toolName='run_commands'))
    p = subprocess.run([str(cline_data(home).parent/'hooks'/'PostToolUse')], input=json.dumps(event), cwd=cwd,
                       env=sandbox_env(home), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout

def test_the_hook_tells_each_compaction_once_and_fails_open(store, monkeypatch):
    home, cwd, other, paths = store
    assert compact_in(home, cwd, '--install-hooks', 'cline')[0] == 0
    sid = IDS['c-manual']
    rc, out = fire(home, cwd, sid)
    assert rc == 0 and out, hook_failures(home)
    assert STATE in json.loads(out)['context'] and 'What does app.py hold?' in json.loads(out)['context']
    assert fire(home, cwd, sid) == (0, '') and fire(home, cwd, IDS['a-tools']) == (0, '')   # told; no compaction
    side = paths['c-manual'].with_name(f'{sid}.compaction.json')
    side.write_text(side.read_text().replace('MOCK-SUMMARY-1', 'MOCK-SUMMARY-TWO'))   # Cline compacted again
    rc, out = fire(home, cwd, sid)
    assert rc == 0 and STATE in json.loads(out)['context']
    side.write_text('{"messages": [')   # torn
    assert fire(home, cwd, sid) == (0, '') and fire(home, cwd, 'no_such') == (0, '')
    monkeypatch.setattr(host_named('cline'), 'hook_bytes', 100)   # a transcript longer than a hook reads
    with pytest.raises(ValueError, match='more than a hook reads'):
        host_named('cline').compacted_part(GEN/'c-manual'/f'{sid}.messages.json')

def test_uninstall_gives_the_hooks_folder_back(tmp_path):
    "A hook of the user's stays as it was; ours goes, and the folder the install made goes with it"
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    hooks = cline_data(home).parent/'hooks'
    rc, out, err = compact_in(home, cwd, '--install-hooks', 'cline')
    assert rc == 0 and (hooks/'PostToolUse').exists(), err
    rc, out, err = compact_in(home, cwd, '--uninstall-hooks', 'cline')
    assert rc == 0 and not hooks.exists(), out + err
    hooks.mkdir(parents=True)
    (hooks/'PreToolUse').write_bytes(b'#!/bin/sh\necho mine\n')
    before = {p.name: (p.read_bytes(), p.stat().st_mode) for p in hooks.iterdir()}
    for _ in range(2): assert compact_in(home, cwd, '--install-hooks', 'cline')[0] == 0   # twice is once
    rc, out, err = compact_in(home, cwd, '--uninstall-hooks', 'cline')
    assert rc == 0 and {p.name: (p.read_bytes(), p.stat().st_mode) for p in hooks.iterdir()} == before, out + err
    (hooks/'PostToolUse').write_bytes(b'#!/bin/sh\necho theirs\n')   # a hook of the user's on the same event
    rc, out, err = compact_in(home, cwd, '--install-hooks', 'cline')
    assert rc != 0 and 'left as it is' in err and (hooks/'PostToolUse').read_bytes() == b'#!/bin/sh\necho theirs\n'

# ---------------------------------------------------------------- whatever the documents hold

_atom = st.one_of(st.none(), st.booleans(), st.integers(-3, 9), st.text(max_size=12),
                  st.sampled_from(['user', 'assistant', 'text', 'tool_use', 'tool_result', 'thinking', 'image',
                                   'compaction_summary', 'run_commands', 'editor',
                                   '<user_input mode="act">x</user_input>',
                                   '<hook_context source="x">y</hook_context>', 'id:a']))
_key = st.sampled_from(['role', 'content', 'type', 'text', 'id', 'name', 'input', 'tool_use_id', 'metadata', 'kind',
                        'summary', 'query', 'result', 'error', 'success', 'commands', 'files', 'path', 'metrics',
                        'inputTokens', 'is_error', 'thinking', 'source'])
_json = st.recursive(_atom, lambda c: st.lists(c, max_size=4) | st.dictionaries(_key, c, max_size=5), max_leaves=25)

@given(st.lists(_json, max_size=6), st.one_of(st.none(), st.dictionaries(st.sampled_from(
       ['source_message_count', 'source_last_message_key', 'messages']), _json, max_size=3)), st.booleans())
def test_the_reader_never_fails_on_documents_it_cannot_make_sense_of(ms, side, whole):
    cline = host_named('cline')
    if side and isinstance(side.get('messages'), list) and side['messages'] and isinstance(side['messages'][0], dict):
        side['messages'][0]['metadata'] = dict(kind='compaction_summary', summary='S')   # as `read` takes one
    res = cl_read(cline.log(whole), dict(version=1, sessionId='x', messages=ms), side, {})
    assert len(res.nums) == len(res) and all(m.role in ('user', 'assistant', 'tool') for m in res)

def test_a_kept_message_that_is_malformed_is_counted_not_raised():
    side = dict(source_message_count=1, messages=[dict(metadata=dict(kind='compaction_summary', summary='S')),
                                                  dict(role='user', content=5)])
    d = dict(version=1, sessionId='x', messages=[dict(role='user', content='a')])
    res = cl_read(host_named('cline').log(), d, side, {})
    assert res.summary == 'S' and res.bad_lines == 1 and [m.role for m in res] == ['user']
