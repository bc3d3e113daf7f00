"""Gemini CLI (issue 31), proven with the real client (0.61.0) offline against a loopback Gemini API (`GeminiMock`):
genuine sessions, written by `gemini` itself from a scripted model that runs `run_shell_command` and answers, with a
forced compression, are read, listed and found by id; `--resume` writes a session `gemini --resume` opens with our
document; `--to gemini` continues a real Claude Code session in Gemini and `--to claude` a Gemini session in Claude
Code; with our hooks installed, the first request after a real compression carries llmsurgery's state."""
import json, re, shutil
from pathlib import Path
import pytest
from hostkit import (GeminiMock, install_gemini, run_gemini, gemini_sessions, gemini_home, force_compression, shell,
                     text, compact_in, sha, one_turn, run_claude, AnthropicMock, request_with, read_jsonl, claude_sessions)
from llmsurgery.sessions import read_session, detect_format

@pytest.fixture(scope='session')
def gemini():
    "Gemini CLI's `gemini.js`, installed once into the cache (no npm registry fails the tests, never skips)"
    return install_gemini()

def turn(js, home, cwd, prompt, replies, *args, compress=False):
    "One headless turn of the real `gemini` against a mock giving `replies`: the mock, after the turn"
    force_compression(home, compress)
    with GeminiMock(replies) as s:
        rc, out, err = run_gemini(js, home, cwd, prompt, s, *args)
        assert rc == 0, err[-3000:]
    return s

def contents_text(body): return json.dumps(body.get('contents'), ensure_ascii=False)

@pytest.fixture(scope='module')
def gemini_work(gemini, tmp_path_factory):
    """A genuine Gemini session: a prompt that runs a shell command (with a thought before the answer), then a resumed
    turn with a forced compression, then one more turn: (js, home, cwd, session file)"""
    tmp = tmp_path_factory.mktemp('gm')
    home, cwd = tmp/'home', tmp/'work'
    cwd.mkdir()
    turn(gemini, home, cwd, 'TASK-ALPHA: count the rows', [shell('echo ROWS-OUTPUT-17'),
                                                          dict(text='There are 17 rows.', thought='Count them.')])
    src, = gemini_sessions(home)
    sid = read_jsonl(src)[0]['sessionId']
    s = turn(gemini, home, cwd, 'REQUEST-BETA: and the columns?', [shell('echo COLS-OUTPUT-4'), text('Four columns.')],
             '--resume', sid, compress=True)
    assert s.compressions(), 'the forced compression made no summary call'
    turn(gemini, home, cwd, 'REQUEST-GAMMA: thanks', [text('You are welcome.')], '--resume', sid)
    return gemini, home, cwd, src

def test_a_genuine_session_reads(gemini_work):
    js, home, cwd, src = gemini_work
    assert detect_format(src) == 'gemini'
    s = read_session(src, whole=True)
    said = json.dumps([m.content for m in s.msgs], default=str)
    assert s.fmt == 'gemini' and s.host == 'Gemini CLI' and not s.bad_lines
    assert s.task == 'TASK-ALPHA: count the rows' and s.cwd == str(cwd)
    results = [p.text for m in s.msgs if m.role == 'tool' for p in m.content]
    assert results.count('ROWS-OUTPUT-17') == 1 and results.count('COLS-OUTPUT-4') == 1   # unwrapped, each once
    assert said.count('Count them.') == 1 and 'Bash' in said and '<session_context>' not in said
    calls = [p.id for m in s.msgs for p in m.content if type(p).__name__ == 'ToolUse']
    assert len(calls) == len(set(calls)) == 2                                        # a restated reply: once
    snaps = [m.text for n, m in s.aside]
    assert snaps and all(t.endswith('\n\n' + GeminiMock.snapshot) for t in snaps)           # Gemini may compress again after the call
    said_once = [m.text for m in s.msgs if m.role == 'user']
    assert said_once.count('REQUEST-BETA: and the columns?') == 1   # a compression's kept turns: read once
    assert s.nums == sorted(s.nums) and isinstance(s.host_toks, int)

def test_the_compression_is_the_boundary(gemini_work):
    js, home, cwd, src = gemini_work
    s = read_session(src)
    assert s.summary == GeminiMock.snapshot
    texts = [m.text for m in s.msgs]
    assert texts[0].endswith(GeminiMock.snapshot) and 'TASK-ALPHA: count the rows' not in texts
    assert 'REQUEST-GAMMA: thanks' in texts and 'You are welcome.' in texts
    whole = read_session(src, whole=True)
    assert set(s.nums) - {None} <= set(whole.nums) | {n for n, _ in whole.aside}     # one numbering

def test_list_and_ids(gemini_work):
    js, home, cwd, src = gemini_work
    sid = read_jsonl(src)[0]['sessionId']
    rc, out, err = compact_in(home, cwd, '--list', '--host', 'gemini')
    assert rc == 0, err
    rows = [l for l in out.splitlines() if l.startswith('gemini')]
    assert len(rows) == 1 and sid in rows[0] and 'TASK-ALPHA' in rows[0]            # the strays --resume left: not listed
    rc, out, err = compact_in(home, cwd, sid[:8], '--report')
    assert rc == 0 and 'REQUEST-GAMMA' in out, err

def test_show_and_grep_by_the_documents_numbers(gemini_work):
    js, home, cwd, src = gemini_work
    n = next(n for n, m in zip(*(lambda s: (s.nums, s.msgs))(read_session(src, whole=True))) if m.text == 'There are 17 rows.')
    rc, out, err = compact_in(home, cwd, str(src), '--show', str(n))
    assert rc == 0 and 'There are 17 rows.' in out, err
    rc, out, err = compact_in(home, cwd, str(src), '--grep', 'COLS-OUTPUT')
    assert rc == 0 and 'COLS-OUTPUT-4' in out, err

def new_id(out, cmd):
    "The id at the end of the last line of `out` that holds the command `cmd`"
    lines = [l for l in out.splitlines() if cmd in l]
    assert lines, out
    return lines[-1].split()[-1]

def copy_of(work, tmp_path):
    """The sandbox of `work` copied, for a test that runs `gemini` again: at its start Gemini deletes the files a
    `--resume` in another minute left with no conversation, and with each one every file of the same short id, the
    resumed session's own included (`general.sessionRetention`, on by default in 0.61.0)"""
    js, home, cwd, src = work
    shutil.copytree(home, tmp_path/'home', symlinks=True)
    return js, tmp_path/'home', cwd, tmp_path/'home'/src.relative_to(home)

def test_resume_is_resumed_by_gemini_with_the_document(gemini_work, tmp_path):
    js, home, cwd, src = copy_of(gemini_work, tmp_path)
    h = sha(src)
    rc, out, err = compact_in(home, cwd, str(src), '--resume', '--all')
    assert rc == 0 and sha(src) == h, err
    assert out.strip().splitlines()[-1].startswith('gemini --resume ')               # the command last
    new = new_id(out, 'gemini --resume')
    s = turn(js, home, cwd, 'REQUEST-OMEGA: go on', [text('Going on.')], '--resume', new)
    sent = contents_text(s.model_requests()[0]['body'])
    assert 'TASK-ALPHA' in sent and 'REQUEST-OMEGA' in sent and 'Process Group PGID' not in sent   # the document, not the bulk

def test_to_claude_from_gemini_resumed_by_claude(hosts, gemini_work):
    js, home, cwd, src = gemini_work
    rc, out, err = compact_in(home, cwd, str(src), '--to', 'claude', '--all')
    assert rc == 0, err
    new = new_id(out, 'claude --resume')
    with AnthropicMock([text('Continuing in Claude.')]) as s:
        rc, o, e = run_claude(hosts[0], home, cwd, 'REQUEST-CLAUDE: next', s, '--resume', new)
        assert rc == 0, e
    assert request_with(s, 'TASK-ALPHA') and request_with(s, 'REQUEST-CLAUDE')

def test_to_gemini_from_claude_resumed_by_gemini(hosts, gemini, tmp_path):
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    one_turn('claude', hosts[0], home, cwd, 'CLAUDE-TASK-7: rename the parser')
    rc, out, err = compact_in(home, cwd, '--host', 'claude', '--to', 'gemini')
    assert rc == 0, err
    new = new_id(out, 'gemini --resume')
    s = turn(gemini, home, cwd, 'REQUEST-GEM: next', [text('Continuing in Gemini.')], '--resume', new)
    sent = contents_text(s.model_requests()[0]['body'])
    assert 'CLAUDE-TASK-7' in sent and 'REQUEST-GEM' in sent

def test_to_codex_from_gemini_resumed_by_codex(hosts, gemini_work):
    js, home, cwd, src = gemini_work
    rc, out, err = compact_in(home, cwd, str(src), '--to', 'codex', '--all')
    assert rc == 0, err
    new = new_id(out, 'codex resume')
    from hostkit import ResponsesMock, run_codex
    with ResponsesMock([text('Continuing in Codex.')]) as s:
        rc, o, e = run_codex(hosts[1], home, cwd, 'REQUEST-CODEX: next', s, 'resume', new)
        assert rc == 0, e
    assert request_with(s, 'TASK-ALPHA') and request_with(s, 'REQUEST-CODEX')

def test_to_gemini_from_codex_resumed_by_gemini(hosts, gemini, tmp_path):
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    one_turn('codex', hosts[1], home, cwd, 'CODEX-TASK-9: split the module')
    rc, out, err = compact_in(home, cwd, '--host', 'codex', '--to', 'gemini')
    assert rc == 0, err
    new = new_id(out, 'gemini --resume')
    s = turn(gemini, home, cwd, 'REQUEST-GEM2: next', [text('Continuing in Gemini.')], '--resume', new)
    sent = contents_text(s.model_requests()[0]['body'])
    assert 'CODEX-TASK-9' in sent and 'REQUEST-GEM2' in sent

# ---------------------------------------------------------------- inside Gemini: the hooks

STATE = "llmsurgery's state of the part of this session that was just compacted"

def hook_failures(home):
    log = Path(home)/'.local'/'state'/'llmsurgery'/'hooks.log'
    return log.read_text() if log.exists() else ''

@pytest.fixture
def hooked(gemini, tmp_path):
    "A sandbox with Gemini's offline settings and llmsurgery's hooks installed: (js, home, cwd, settings bytes before)"
    from hostkit import gemini_settings
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    before = gemini_settings(home).read_bytes()
    rc, out, err = compact_in(home, cwd, '--install-hooks', 'gemini')
    assert rc == 0 and 'BeforeAgent' in out, err
    return gemini, home, cwd, before

def test_state_reaches_the_model_after_a_real_compression(hooked):
    js, home, cwd, before = hooked
    commit = shell('echo "[main 1a2b3c4] COMMIT-GAMMA fix rows"  # git commit -m x')
    turn(js, home, cwd, 'TASK-ALPHA: count the rows', [commit, text('Done, committed.')])
    src, = gemini_sessions(home)
    sid = read_jsonl(src)[0]['sessionId']
    s = turn(js, home, cwd, 'REQUEST-BETA: more', [text('More.')], '--resume', sid, compress=True)
    assert s.compressions() and not request_with(s, STATE)        # compressed in this turn, after its BeforeAgent
    s = turn(js, home, cwd, 'REQUEST-GAMMA: next', [text('ok')], '--resume', sid)
    sent = contents_text(s.model_requests()[0]['body'])
    assert STATE in sent and 'TASK-ALPHA' in sent and '1a2b3c4 COMMIT-GAMMA' in sent and '--show N' in sent
    s = turn(js, home, cwd, 'REQUEST-DELTA: again', [text('ok')], '--resume', sid)
    assert contents_text(s.model_requests()[0]['body']).count(STATE) == 1   # told once, kept in the history
    assert not hook_failures(home)

def test_compact_with_llmsurgery_is_blocked_and_resumes(hooked):
    from llmsurgery.hosts.gemini import gm_compact_prompt
    js, home, cwd, before = hooked
    turn(js, home, cwd, 'TASK-ALPHA: count the rows', [shell('echo ROWS-17'), text('17 rows.')])
    src, = gemini_sessions(home)
    sid = read_jsonl(src)[0]['sessionId']
    force_compression(home, False)
    with GeminiMock([text('must not be asked')]) as s:
        rc, out, err = run_gemini(js, home, cwd, gm_compact_prompt, s, '--resume', sid)
    assert not s.model_requests()                                      # blocked: no model call
    new = re.search(r'run gemini --resume (\S+) in a shell to continue', out + err)[1]   # its TUI's /resume takes no id
    s = turn(js, home, cwd, 'REQUEST-OMEGA: go on', [text('Going on.')], '--resume', new)
    sent = contents_text(s.model_requests()[0]['body'])
    assert 'TASK-ALPHA' in sent and 'Process Group PGID' not in sent
    assert not hook_failures(home)

def test_uninstall_gives_the_settings_back(hooked):
    js, home, cwd, before = hooked
    rc, out, err = compact_in(home, cwd, '--install-hooks', 'gemini')      # twice is once
    d = json.loads((gemini_home(home)/'settings.json').read_text())
    assert rc == 0 and len(d['hooks']['BeforeAgent']) == 1 and d['hooks']['BeforeAgent'][0]['hooks'][0]['timeout'] == 120_000
    rc, out, err = compact_in(home, cwd, '--uninstall-hooks', 'gemini')
    assert rc == 0 and (gemini_home(home)/'settings.json').read_bytes() == before, err
