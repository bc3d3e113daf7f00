"""Qwen Code, proven with the real client (0.24.4) offline against a loopback OpenAI-compatible model (`ChatMock`), with
HOME and QWEN_HOME in a temporary folder (usage statistics, telemetry and managed memory off).

One `qwen --yolo` process, with llmsurgery's hooks installed, is asked seven prompts in turn (the module's fixture): shell
commands (one fails), a file read and edited, a commit, `llmsurgery-compact --resume` run by the agent in its shell; then
`/compress`; a prompt reported near the window, so that the next one triggers an automatic compression; a command
reported so too, so that its result triggers another mid-turn; `/llmsurgery`; and a prompt the model refuses. That
genuine session reads right (the triggering prompt and result included), is listed and found by id; the agent's shell
compacted its own session though another of the directory is newer; the requests after each real compression carried
llmsurgery's state, and each summariser's request its facts; `/llmsurgery` called no model. Then, each a `qwen` run of
its own: a `--resume` session and a `--to qwen` one (from a real Claude Code session) are resumed with the document, a
resumed compressed session gets the state, and `--to claude` continues the Qwen session in the real Claude Code.
Uninstalling gives the settings back byte for byte, though Qwen stamped them with `$version` meanwhile."""
import json, shutil, subprocess
from pathlib import Path
from types import SimpleNamespace
import pytest
from hostkit import compact_in, EXE, text, sha, AnthropicMock, run_claude, request_with, claude_sessions
from qwenkit import install_qwen, ChatMock, QwenRun, qwen_settings, qwen_home, qwen_sessions, qwen_env, shell, request_text
from make_genuine_qwen import PROMPTS, replies
from llmsurgery.sessions import read_session, detect_format
from llmsurgery.inject import summary_prefix
from llmsurgery.hosts.base import host_named
from llmsurgery.hosts.qwen import qw_project_key

STATE = "llmsurgery's state of the part of this session that was just compacted"
FACTS = "llmsurgery read these facts from this session's transcript"
TASK = PROMPTS[0]
DATA = Path(__file__).parent/'data'/'genuine'
DECOY = '0d0d0d0d-0000-4000-8000-00000000dec0'

@pytest.fixture(scope='session')
def qwen():
    "Qwen Code's `cli-entry.js`, installed once into the cache (no npm registry fails the tests, never skips)"
    return install_qwen()

def chats(home, cwd):
    "The folder of the sessions of directory `cwd` in the sandbox `home`'s Qwen store"
    return qwen_home(home)/'projects'/qw_project_key(cwd.resolve())/'chats'

def decoy(home, cwd):
    "Write a session of `cwd` that is newer than any the test makes (its records dated 2099), for the agent not to take"
    recs = [json.loads(l) for l in (DATA/'qwen'/'a-one-tool-call.jsonl').read_text().splitlines()]
    for r in recs: r.update(sessionId=DECOY, cwd=str(cwd), timestamp=r['timestamp'].replace('2026', '2099'))
    path = chats(home, cwd)/f'{DECOY}.jsonl'
    path.parent.mkdir(parents=True)
    path.write_text(''.join(json.dumps(r) + '\n' for r in recs))

@pytest.fixture(scope='module')
def work(qwen, tmp_path_factory):
    "The genuine session, made as the module's docstring says: its sandbox, file, id, the mock and each prompt's result"
    tmp = tmp_path_factory.mktemp('qw')
    home, cwd = tmp/'home', tmp/'work'
    cwd.mkdir()
    (cwd/'app.py').write_text('def add(a, b):\n    return a - b\n')
    before = qwen_settings(home).read_bytes()   # the offline settings, with no `$version`
    rc, out, err = compact_in(home, cwd, '--install-hooks', 'qwen')
    assert rc == 0 and 'PreCompact' in out and '/llmsurgery' in out, err
    decoy(home, cwd)
    rs = replies(cwd)
    rs.insert(5, shell(f'{EXE} --resume > resumed.txt 2>&1; cat resumed.txt'))   # the agent compacts its own session
    prompts = [*PROMPTS[:-1], '/llmsurgery', PROMPTS[-1]]
    with ChatMock(rs) as s, QwenRun(qwen, home, cwd, s, '--yolo') as q: res = [q.ask(p) for p in prompts]
    sid = res[0]['session_id']
    src, = [p for p in qwen_sessions(home) if p.stem == sid]
    return SimpleNamespace(js=qwen, home=home, cwd=cwd, src=src, sid=sid, mock=s, res=dict(zip(prompts, res)), before=before)

def content(m):
    "The text of a chat-completions message"
    c = m.get('content')
    return c if isinstance(c, str) else ''.join(p.get('text', '') for p in c or [] if isinstance(p, dict))

def system(body): return content(body['messages'][0])
def rest(body): return request_text(body['messages'][1:])
def said(body): return content(body['messages'][-1])

def no_failures(home):
    log = Path(home)/'.local'/'state'/'llmsurgery'/'hooks.log'
    assert not log.exists(), log.read_text()

# ---------------------------------------------------------------- reading the genuine session

def test_a_genuine_session_reads(work):
    assert detect_format(work.src) == 'qwen'
    s = read_session(work.src, whole=True)
    assert (s.fmt, s.host, s.bad_lines, s.task, s.cwd) == ('qwen', 'Qwen Code', 0, TASK, str(work.cwd))
    results = [p.text for m in s.msgs if m.role == 'tool' for p in m.content]
    assert any(t.startswith('Error: Exit code 1\n') and t.endswith('AssertionError') for t in results)
    assert '[main 1a2b3c4] Fix add: it subtracted' in results and '5' in results
    calls = {p.name: p.arguments for m in s.msgs if m.role == 'assistant' for p in m.content if type(p).__name__ == 'ToolUse'}
    assert calls['Edit'] == dict(file_path=str(work.cwd/'app.py'), old_string='a - b', new_string='a + b')
    prompts = [m.text for m in s.msgs if m.role == 'user']
    assert prompts == [TASK, *PROMPTS[2:]]                                    # no command, no startup context, each once
    aside = [m.text for n, m in s.aside]
    assert [t.endswith(f'MOCK-SNAPSHOT-{i}: the work so far</state_snapshot>') for i, t in zip((1, 2, 3), aside)] == [True]*3
    assert aside[3].startswith('[Qwen Code api_error] 400 MOCK-BAD-REQUEST') and s.nums == sorted(s.nums)

def test_what_triggered_an_automatic_compression_stays(work):
    "Qwen's history after the compression leaves the prompt (or the result) that triggered it; our reading keeps it"
    lines = work.src.read_bytes().splitlines()
    comps = [(i, json.loads(l)) for i, l in enumerate(lines, 1) if b'"chat_compression"' in l]
    assert [r['systemPayload']['info']['triggerReason'] for i, r in comps] == ['manual', 'token_limit', 'token_limit']
    (first, c1), (mid, c2) = comps[1:]
    assert 'Run the tests' not in json.dumps(c1['systemPayload']['compressedHistory'])
    then = read_session(work.src)   # as it is now, after the last one, mid-turn
    texts = [m.text for m in then.msgs]
    assert then.msgs[0].text.startswith(summary_prefix) and then.msgs[0].text.endswith(then.summary)
    assert [m.role for m in then.msgs[:3]] == ['user', 'assistant', 'tool'] and then.msgs[2].content[0].text == '5' and then.nums[2] < mid
    tmp = work.src.with_name('before-mid.jsonl')   # the session as it was between the two: from the first on
    tmp.write_bytes(b'\n'.join(lines[:mid-1]) + b'\n')
    try: earlier = read_session(tmp)
    finally: tmp.unlink()
    assert [m.text for m in earlier.msgs][1] == 'Run the tests'

def test_the_compression_is_the_boundary(work):
    s = read_session(work.src)
    assert s.summary == '<state_snapshot>MOCK-SNAPSHOT-3: the work so far</state_snapshot>' and isinstance(s.host_toks, int)
    assert TASK not in [m.text for m in s.msgs]
    rc, out, err = compact_in(work.home, work.cwd, str(work.src), '--report')
    assert rc == 0 and "(Qwen Code's count)" in err and 'MOCK-SNAPSHOT-3' in out and 'Explain the fix in one line' in out

def test_list_ids_show_and_grep(work):
    rc, out, err = compact_in(work.home, work.cwd, '--list', '--host', 'qwen')
    rows = [l for l in out.splitlines() if l.startswith('qwen')]
    assert rc == 0 and any(work.sid in r and 'The add function' in r for r in rows) and DECOY in rows[0], out + err
    rc, out, err = compact_in(work.home, work.cwd, work.sid[:8], '--report')
    assert rc == 0 and 'Explain the fix' in out, err
    s = read_session(work.src, whole=True)
    n = next(n for n, m in zip(s.nums, s.msgs) if m.role == 'tool' and m.content[0].text.startswith('Error: Exit code 1'))
    rc, out, err = compact_in(work.home, work.cwd, work.sid, '--show', str(n))
    assert rc == 0 and out.startswith(f'#{n}\n> Error: Exit code 1') and 'AssertionError' in out, err
    rc, out, err = compact_in(work.home, work.cwd, work.sid, '--grep', 'MOCK-SNAPSHOT-2|api_error')
    assert rc == 0 and 'MOCK-SNAPSHOT-2' in out and '[Qwen Code api_error]' in out, err

def test_the_agents_shell_names_its_own_session(work):
    "`llmsurgery-compact --resume` run by the model compacted the session it runs in (QWEN_CODE_SESSION_ID), not the newer one"
    s = read_session(work.src, whole=True)
    out, = [p.text for m in s.msgs if m.role == 'tool' for p in m.content if 'continue with:' in p.text]
    new = Path(out.split('wrote ')[1].split(';')[0])
    assert out.splitlines()[-1].startswith('qwen --resume ') and new.parent == work.src.parent
    assert f'transcript is `{work.src}`' in read_session(new).summary

# ---------------------------------------------------------------- inside Qwen: the hooks

def test_the_state_reaches_the_model_after_each_real_compression(work):
    turns = work.mock.turns()
    first = next(i for i, r in enumerate(turns) if said(r['body']).endswith('Now add a test for add'))
    assert not any(STATE in system(r['body']) for r in turns[:first])          # none before the first compression
    assert all(system(r['body']).count(STATE) == 1 for r in turns[first:])     # each after, once, in the system prompt
    state = system(turns[first]['body'])
    assert '1a2b3c4 Fix add: it subtracted' in state and '--show N' in state and TASK[:30] in state
    assert 'Run the tests' in system(turns[-1]['body'])   # the state of the mid-turn compression, which took that prompt
    no_failures(work.home)

def test_the_summariser_keeps_llmsurgerys_facts(work):
    comps = work.mock.compressions()
    assert len(comps) == 3
    manual, auto, mid = (r['body'] for r in comps)
    assert FACTS in said(manual) and FACTS not in system(manual)              # Qwen's shared request: in its last message
    for b in (auto, mid):
        facts = system(b).split('Additional Instructions:\n')[1]
        assert facts.startswith(FACTS) and len(facts) <= host_named('qwen').facts_cap and 'Commits: 1a2b3c4 Fix add: it subtracted' in facts
    assert 'Latest request (the last prompt typed): Run the tests' in system(auto) and 'Run the tests' not in rest(auto)
    no_failures(work.home)

def test_llmsurgery_command_writes_the_session_with_no_model_call(work):
    r = work.res['/llmsurgery']
    msg = r['error']['message']
    assert r['is_error'] and msg.startswith('UserPromptExpansion blocked: llmsurgery compacted this session with no model '
                                             'call: type /resume ')
    new = msg.split('type /resume ')[1].split()[0]
    assert f'(from a shell: qwen --resume {new})' in msg
    assert f'transcript is `{work.src}`' in read_session(chats(work.home, work.cwd)/f'{new}.jsonl').summary
    assert not any('This command is llmsurgery' in request_text(q['body']) for q in work.mock.model_requests())

# ---------------------------------------------------------------- resumed by the real client

def resume_turn(js, home, cwd, sid, prompt):
    "`qwen --resume SID` asked `prompt` against a mock: the body of the first request it sends"
    with ChatMock([text('Going on.')]) as s, QwenRun(js, home, cwd, s, '--resume', sid) as q: q.ask(prompt)
    return s.turns()[0]['body']

def test_resume_is_resumed_by_qwen_with_the_document(work):
    h = sha(work.src)
    rc, out, err = compact_in(work.home, work.cwd, str(work.src), '--resume', '--all')
    assert rc == 0 and sha(work.src) == h and out.strip().splitlines()[-1].startswith('qwen --resume '), err
    new = out.split()[-1]
    body = resume_turn(work.js, work.home, work.cwd, new, 'REQUEST-OMEGA: go on')
    sent = rest(body)
    assert TASK in sent and 'REQUEST-OMEGA' in sent and 'Process Group PGID' not in sent   # the document, not the bulk
    assert STATE not in system(body)                                        # nothing compacted in the new session

def test_a_resumed_compressed_session_gets_the_state(work, tmp_path):
    home = tmp_path/'home'
    shutil.copytree(work.home, home, symlinks=True)   # qwen appends to the session: the others read the fixture's
    body = resume_turn(work.js, home, work.cwd, work.sid, 'REQUEST-AGAIN: and now?')
    assert system(body).count(STATE) == 1 and 'Run the tests' in system(body)
    assert 'Output: 5' not in rest(body)   # Qwen's own replay lost the result the compression left live
    no_failures(home)

def test_to_qwen_from_a_real_claude_session_is_resumed_by_qwen(qwen, tmp_path):
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    qwen_settings(home)
    rc, out, err = compact_in(home, cwd, str(DATA/'claude_bash.jsonl'), '--to', 'qwen')
    assert rc == 0 and out.startswith('qwen --resume '), err
    body = resume_turn(qwen, home, cwd, out.split()[-1], 'REQUEST-QWEN: next')
    assert 'What files are here?' in rest(body) and 'What is notes.txt?' in rest(body) and 'REQUEST-QWEN' in rest(body)

def test_to_claude_from_qwen_is_resumed_by_claude(hosts, work, tmp_path):
    home = tmp_path/'home'
    rc, out, err = compact_in(home, work.cwd, str(work.src), '--to', 'claude', '--all')
    assert rc == 0 and len(claude_sessions(home)) == 1, err
    with AnthropicMock([text('Continuing in Claude.')]) as s:
        rc, o, e = run_claude(hosts[0], home, work.cwd, 'REQUEST-CLAUDE: next', s, '--resume', out.split()[-1])
        assert rc == 0, e
    assert request_with(s, TASK) and request_with(s, 'REQUEST-CLAUDE')

# ---------------------------------------------------------------- the settings, after Qwen rewrote them

def test_uninstall_gives_the_settings_back_though_qwen_stamped_them(work):
    "The module's last test: it takes the hooks out of the fixture's sandbox (the install's record is kept by its path)"
    home = work.home
    settings, command = qwen_home(home)/'settings.json', qwen_home(home)/'commands'/'llmsurgery.md'
    assert '"$version": 4' in settings.read_text() and b'$version' not in work.before   # Qwen rewrote the file
    rc, out, err = compact_in(home, work.cwd, '--uninstall-hooks', 'qwen')
    assert rc == 0 and out.startswith(f'{settings}: restored as it was before the install'), out + err
    assert settings.read_bytes() == work.before and not command.exists()
    rc, out, err = compact_in(home, work.cwd, '--uninstall-hooks', 'qwen')
    assert rc == 0 and out.splitlines() == [f'{settings}: no llmsurgery hooks to remove', f'{command}: no llmsurgery plugin to remove',
                                            f'{settings}: no llmsurgery MCP server to remove']

def test_llmsurgery_run_headless_writes_the_session_and_exits_1(qwen, tmp_path):
    """`qwen --yolo --continue /llmsurgery` headless: the session is written and named, with no model call, and the CLI
    exits 1, since Qwen (0.24.4) reports every UserPromptExpansion stop as an error; a UserPromptSubmit stop exits 0
    but shows nothing headless, not even the new session's id"""
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    rc, out, err = compact_in(home, cwd, '--install-hooks', 'qwen')
    assert rc == 0, err
    with ChatMock([text('Hello.')]) as s:
        p = subprocess.run(['node', str(qwen), '--yolo', 'TASK-HEADLESS: say hello'], env=qwen_env(home, s), cwd=cwd,
                           capture_output=True, text=True, timeout=90)
        assert p.returncode == 0, p.stderr[-2000:]
    before = set(qwen_sessions(home))
    with ChatMock([text('must not be asked')]) as s:
        p = subprocess.run(['node', str(qwen), '--yolo', '--continue', '/llmsurgery'], env=qwen_env(home, s), cwd=cwd,
                           capture_output=True, text=True, timeout=90)
        assert not s.model_requests()
    said = ' '.join((p.stdout + p.stderr).split())
    assert p.returncode == 1 and 'UserPromptExpansion blocked: llmsurgery compacted this session with no model call' in said
    new, = set(qwen_sessions(home)) - before
    assert f'type /resume {new.stem}' in said and 'TASK-HEADLESS' in read_session(new).summary
