"""GitHub Copilot CLI, proven with the real client (1.0.102) offline against a loopback chat-completions model
(`copilotkit.CopilotMock`). One genuine session, written by `copilot` itself with llmsurgery's hooks installed beside
a user's own, runs tools (a failing command, a tool failure, an edit), compacts on its own and by `/compact`, and is
then asked to `compact with llmsurgery`: it is read, listed, found by id and by name; the first request after each
compaction carries llmsurgery's state, added once by that prompt's hook and replayed after, and the blocked prompt makes no model call. In its shell the agent resumes
its own session, which the real CLI opens with the document; `--to copilot` continues a real Claude Code session and
`--to claude` this one. The hook, run as Copilot runs it, tells once, passes light and fails open; the genuine folders
in tests/data/genuine/copilot read too."""
import json, re, shlex, shutil, subprocess, sys, time
from pathlib import Path
from types import SimpleNamespace
import pytest
from hostkit import text, tool, compact_in, sha, AnthropicMock, run_claude, request_with, read_jsonl, EXE
from copilotkit import (install_copilot, CopilotMock, run_copilot, compact_copilot, cpbash, copilot_home,
                        copilot_sessions, session_id_of, sent_messages, sent_text, SMALL_LIMIT)
from llmsurgery.sessions import read_session, detect_format
from llmsurgery.inject import summary_prefix

DATA = Path(__file__).parent/'data'/'genuine'/'copilot'
CLAUDE_REAL = Path(__file__).parent/'data'/'claude-real'/'8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl'
TASK = 'TASK-ALPHA: the parser drops the last row; fix it'
STATE = "llmsurgery's state of the part of this session that was just compacted"

def genuine(name):
    "The events.jsonl of the genuine session folder `name` in tests/data"
    return next((DATA/name).glob('*/events.jsonl'))

@pytest.fixture(scope='session')
def copilot():
    "Copilot CLI's binary, installed once into the cache, its bundle unpacked (no npm registry: fails, never skips)"
    return install_copilot()

def turn(exe, home, cwd, prompt, replies, *args, limit=None, summary_delay=0, ok=(0,)):
    "One headless turn of the real `copilot` against a mock giving `replies`: the mock, after the turn (`out`: its output)"
    with CopilotMock(replies) as s:
        s.summary_delay = summary_delay
        rc, out, err = run_copilot(exe, home, cwd, prompt, s, *args, limit=limit)
        assert rc in ok, err[-3000:]
    s.out = out + err
    return s

def user_hooks(home, name, **hooks):
    "A hooks file of the user's own, `name`, with `hooks` (event: shell command); none: the file removed"
    f = copilot_home(home)/'hooks'/name
    f.parent.mkdir(parents=True, exist_ok=True)
    if not hooks: return f.unlink(missing_ok=True)
    f.write_text(json.dumps(dict(version=1, hooks={ev: [dict(type='command', bash=c, timeoutSec=10)] for ev,c in hooks.items()})))

def hook_failures(home):
    log = Path(home)/'.local'/'state'/'llmsurgery'/'hooks.log'
    return log.read_text() if log.exists() else ''

def new_id(said, how=r'copilot --resume='):
    "The session id of the last `copilot --resume=<id>` in `said`"
    return re.findall(how + r'([0-9a-f-]{36})', said)[-1]

CALLS = lambda cwd: [cpbash('echo ROWS-OUTPUT-17 && wc -l parser.py', 'Count'),
                     cpbash('echo FAIL-OUTPUT-3; exit 2', 'Run the tests'),
                     tool('view', path=str(cwd/'missing.py')),
                     tool('edit', path=str(cwd/'parser.py'), old_str='[1:-1]', new_str='[1:]'),
                     tool('create', path=str(cwd/'test_parser.py'), file_text='def test(): pass\n'),
                     cpbash('echo "[main 1a2b3c4] COMMIT-GAMMA fix rows"  # git commit -m x', 'Commit'),
                     text('Fixed the slice, and committed.')]

@pytest.fixture(scope='module')
def cp_work(copilot, tmp_path_factory):
    """A genuine Copilot session with llmsurgery's hooks installed beside a user's own: calls (a failing command, a tool
    failure, an edit, a new file), a resumed turn with a forced automatic compaction (a hook of the user's holds the
    turn's end 4 s, so that the compaction, run beside the turn, ends before the process), two turns, a `/compact`, two
    turns, and the prompt `compact with llmsurgery`. Each turn's mock is kept, with what it was sent."""
    tmp = tmp_path_factory.mktemp('cp')
    home, cwd = tmp/'home', tmp/'work'
    cwd.mkdir()
    (cwd/'parser.py').write_text('def rows(text):\n    return text.split("\\n")[1:-1]\n')
    user_hooks(home, 'user.json', sessionEnd='true')   # a hook of the user's: its records are the host's notes
    rc, out, err = compact_in(home, cwd, '--install-hooks', 'copilot')
    assert rc == 0 and 'llmsurgery.json' in out, err
    w = SimpleNamespace(exe=copilot, home=home, cwd=cwd, tmp=tmp)
    w.first = turn(copilot, home, cwd, TASK, CALLS(cwd))
    w.src, = copilot_sessions(home)
    w.sid = session_id_of(w.src)
    user_hooks(home, 'hold.json', agentStop='sleep 4')
    w.auto = turn(copilot, home, cwd, 'REQUEST-BETA: print the numbers', [cpbash('seq 1 2500', 'Print numbers'),
                  text('Printed them.')], f'--resume={w.sid}', limit=SMALL_LIMIT, summary_delay=1)
    user_hooks(home, 'hold.json')
    w.gamma = turn(copilot, home, cwd, 'REQUEST-GAMMA: what next?', [text('Next: a test.')], f'--resume={w.sid}')
    w.gamma2 = turn(copilot, home, cwd, 'REQUEST-GAMMA2: and then?', [text('Then a commit.')], f'--resume={w.sid}')
    with CopilotMock([]) as w.manual: compact_copilot(copilot, home, cwd, w.sid, w.manual, 'focus on the parser')
    w.delta = turn(copilot, home, cwd, 'REQUEST-DELTA: and now?', [text('Nothing is left.')], f'--resume={w.sid}')
    w.epsilon = turn(copilot, home, cwd, 'REQUEST-EPSILON: sure?', [text('Sure.')], f'--resume={w.sid}')
    w.block = turn(copilot, home, cwd, 'compact with llmsurgery', [text('must not be asked')], f'--resume={w.sid}',
                   ok=(0, 1))
    return w

# ---------------------------------------------------------------- reading

def calls_and_results(s):
    calls = [p for m in s.msgs if m.role == 'assistant' for p in m.content if type(p).__name__ == 'ToolUse']
    results = [p for m in s.msgs if m.role == 'tool' for p in m.content]
    return calls, results

def test_a_genuine_session_reads(cp_work):
    w = cp_work
    assert detect_format(w.src) == 'copilot'
    s = read_session(w.src, whole=True)
    assert s.fmt == 'copilot' and s.host == 'GitHub Copilot CLI' and not s.bad_lines
    assert s.task == TASK and s.cwd == str(w.cwd) and isinstance(s.host_toks, int) and s.host_toks > 1000
    users = [m.text for m in s.msgs if m.role == 'user']
    assert users == [TASK, 'REQUEST-BETA: print the numbers', 'REQUEST-GAMMA: what next?', 'REQUEST-GAMMA2: and then?',
                     'REQUEST-DELTA: and now?', 'REQUEST-EPSILON: sure?']
    calls, results = calls_and_results(s)
    assert [c.name for c in calls] == ['Bash', 'Bash', 'Read', 'Edit', 'Write', 'Bash', 'Bash']
    assert calls[3].arguments == dict(file_path=str(w.cwd/'parser.py'), old_str='[1:-1]', new_str='[1:]')
    assert [r.id for r in results] == [c.id for c in calls] and results[0].text.startswith('ROWS-OUTPUT-17')
    assert results[1].text == 'Exit code: 2\nFAIL-OUTPUT-3'                     # the exit code, without Copilot's line
    assert results[2].text == 'Error: Path does not exist'                       # success:false
    assert not any('<shellId' in r.text for r in results) and not any('<current_datetime>' in m.text for m in s.msgs)
    summaries = [m.text for n, m in s.aside if m.text.startswith(summary_prefix)]
    assert len(summaries) == 2 and all('MOCK-COPILOT-SUMMARY' in t for t in summaries)
    notes = [m.text for n, m in s.aside]
    assert any(t.startswith('[GitHub Copilot CLI hook sessionEnd]') for t in notes)      # hooks: the host's notes
    assert any(t.startswith('[GitHub Copilot CLI hook userPromptSubmitted]') and STATE in t for t in notes)   # ours too
    assert s.nums == sorted(s.nums) and len(set(s.nums)) == len(s.nums)

def test_the_compaction_is_the_boundary(cp_work):
    w = cp_work
    s = read_session(w.src)
    assert 'MOCK-COPILOT-SUMMARY' in s.summary and s.msgs[0].text.startswith(summary_prefix)
    assert [m.text for m in s.msgs[1:]] == ['REQUEST-DELTA: and now?', 'Nothing is left.', 'REQUEST-EPSILON: sure?', 'Sure.']
    assert isinstance(s.host_toks, int) and s.host_toks < read_session(w.src, whole=True).host_toks
    whole = read_session(w.src, whole=True)
    assert set(s.nums) <= set(whole.nums) | {n for n, _ in whole.aside}          # one numbering

def test_what_an_automatic_compaction_keeps_is_read_as_copilot_resumes_it(copilot, tmp_path):
    "Cut after its automatic compaction, a genuine session reads as the real CLI resumes it: summary, then what it kept"
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    src = genuine('fix-parser')
    lines = src.read_text().splitlines(keepends=True)
    cut = max(i for i, l in enumerate(lines) if '"session.compaction_complete"' in l and '"trigger":"threshold"' in l)
    dst = copilot_home(home)/'session-state'/src.parent.name/'events.jsonl'
    dst.parent.mkdir(parents=True)
    dst.write_text(''.join(lines[:cut+1]))
    s = read_session(dst)
    assert [m.role for m in s.msgs] == ['user', 'assistant'] and s.msgs[1].text == 'Printed 1 to 2500.'
    assert s.nums[1] < s.nums[0]                                               # logged before the compaction applied
    m = turn(copilot, home, cwd, 'NEXT-PROMPT', [text('ok')], f'--resume={src.parent.name}')
    sent = sent_messages(m.main_requests()[0]['body'])
    assert [r for r, _ in sent] == ['user', 'assistant', 'user'] and sent[1][1] == 'Printed 1 to 2500.'
    assert 'MOCK-COPILOT-SUMMARY' in sent[0][1] and sent[2][1].endswith('NEXT-PROMPT')

@pytest.mark.parametrize('name', [p.name for p in sorted(DATA.iterdir()) if p.is_dir()])
def test_the_genuine_folders_read(name):
    src = genuine(name)
    s, w = read_session(src), read_session(src, whole=True)
    assert s.fmt == 'copilot' and not w.bad_lines and w.task and w.cwd.startswith('/home/dev/work/')
    assert w.msgs[0].role == 'user' and '<current_datetime>' not in w.msgs[0].text
    if name.startswith('d-'):   # the failed model call stands where its reply would, as the model's turn
        last = w.msgs[-1]
        assert last.role == 'assistant' and last.text.startswith('[GitHub Copilot CLI: the model call failed: Could not')
    if name.startswith('c-'):
        assert s.summary.startswith('<overview>\nGENUINE-SUMMARY') and s.msgs[0].text.startswith(summary_prefix)
        assert any('HOOK-SESSIONSTART-CTX-5150' in m.text for _, m in w.aside)
        assert not any('HOOK-PROMPT-CTX' in m.text for m in w.msgs)   # what a hook added: not the user's words

def test_list_ids_and_names(cp_work):
    w = cp_work
    rc, out, err = compact_in(w.home, w.cwd, '--list', '--host', 'copilot')
    assert rc == 0, err
    rows = [l for l in out.splitlines() if l.startswith('copilot')]
    assert len(rows) == 2 and w.sid in out and 'TASK-ALPHA' in out, out       # and the session the hook wrote
    rc, out, err = compact_in(w.home, w.cwd, TASK.upper(), '--report')        # workspace.yaml's name, in any case
    assert rc == 0 and 'REQUEST-DELTA' in out and "(GitHub Copilot CLI's count)" in err, err
    rc, out, err = compact_in(w.home, w.cwd, 'no such session name')
    assert rc == 2 and 'no such session file' in err and 'Traceback' not in err

def test_show_and_grep_by_the_transcripts_lines(cp_work):
    w = cp_work
    lines = w.src.read_text().splitlines()
    n = 1 + next(i for i, l in enumerate(lines) if '"type":"user.message"' in l and 'REQUEST-BETA' in l)
    rc, out, err = compact_in(w.home, w.cwd, str(w.src), '--show', str(n))
    assert rc == 0 and out.startswith(f'#{n}\n') and 'REQUEST-BETA' in out, err
    rc, out, err = compact_in(w.home, w.cwd, str(w.src), '--grep', 'FAIL-OUTPUT|Exit code')
    assert rc == 0, err
    k = re.search(r'^#(\d+): > Exit code: 2$', out, re.M)[1]
    assert f'#{k}: FAIL-OUTPUT-3' in out                                      # the result's own line, under its number

# ---------------------------------------------------------------- inside Copilot: the hooks

def holding(s, words):
    "The messages of the first request mock `s` got that hold `words`"
    return [t for r, t in sent_messages(s.main_requests()[0]['body']) if words in t]

def test_state_reaches_the_model_after_each_real_compaction_once(cp_work):
    """The first request of the turn after the automatic compaction, and of the one after `/compact`, carries our state
    once; the turn after each carries the same copy, in the first prompt as it was sent, and nothing added again"""
    w = cp_work
    assert w.auto.compactions() and w.manual.compactions()
    assert not any(STATE in sent_text(w.auto, i) for i in range(len(w.auto.main_requests())))   # compacted after its prompt
    sent = sent_text(w.gamma)
    assert sent.count(STATE) == 1 and 'TASK-ALPHA' in sent and '1a2b3c4 COMMIT-GAMMA' in sent and '--show N' in sent
    assert 'FAIL-OUTPUT-3' in sent                                            # a shell result, in what a summary loses
    sent = sent_text(w.delta)
    assert sent.count(STATE) == 1 and 'REQUEST-GAMMA' in sent.split(STATE)[1]   # the state of the part /compact took
    for first, later, said in ((w.gamma, w.gamma2, 'REQUEST-GAMMA:'), (w.delta, w.epsilon, 'REQUEST-DELTA:')):
        copies = [holding(s, STATE) for s in (first, later)]
        assert all(len(c) == 1 and c[0].count(STATE) == 1 and said in c[0] for c in copies), copies   # the prompt's
        assert copies[1][0] == copies[0][0]                                   # replayed as it was sent
    added = [r['data']['hookType'] for r in read_jsonl(w.src) if r['type'] == 'hook.end' and STATE in json.dumps(r['data'])]
    assert added == ['userPromptSubmitted']*2                                 # once per compaction
    assert not hook_failures(w.home)

def test_compact_with_llmsurgery_is_blocked_with_no_model_call(cp_work):
    w = cp_work
    assert not w.block.model_requests()                                       # blocked: no model call
    said = re.sub(r'\s+', ' ', w.block.out)                                   # as Copilot wraps it
    new = re.search(r'llmsurgery compacted this session with no model call: type /resume (\S+) to continue', said)
    assert new and f'(from a shell: copilot --resume={new[1]})' in said, said
    s = read_session(copilot_home(w.home)/'session-state'/new[1]/'events.jsonl')
    assert [m.role for m in s.msgs] == ['user'] and 'REQUEST-DELTA' in s.summary
    assert not hook_failures(w.home)

# ---------------------------------------------------------------- resuming, and continuing across hosts

def test_the_agent_in_its_shell_resumes_its_own_session(cp_work, tmp_path):
    """`llmsurgery-compact --resume` in Copilot's bash tool continues the session `COPILOT_AGENT_SESSION_ID` names, not
    the newest; the real CLI, resumed from elsewhere, opens the new session with the document"""
    w = cp_work
    other, = set(copilot_sessions(w.home)) - {w.src}                         # the session the hook wrote
    run = cpbash(f'touch {other} && {EXE} --resume --all --report', 'Compact')    # the other one the newest then
    s = turn(w.exe, w.home, w.cwd, 'REQUEST-SHELL: resume yourself', [run, text('Done.')], f'--resume={w.sid}',
             '--allow-all-paths')
    res = [t for r, t in sent_messages(s.main_requests()[1]['body']) if r == 'tool'][0]
    new = new_id(res)
    folder = copilot_home(w.home)/'session-state'/new
    doc = read_session(folder/'events.jsonl').summary
    assert 'TASK-ALPHA' in doc and f'The complete, authoritative transcript is `{w.src}`' in doc, res[-2000:]
    assert sorted(p.name for p in folder.iterdir()) == ['events.jsonl', 'workspace.yaml']
    assert (folder.stat().st_mode & 0o777, (folder/'events.jsonl').stat().st_mode & 0o777) == (0o700, 0o600)
    s = turn(w.exe, w.home, tmp_path, 'REQUEST-OMEGA: go on', [text('Going on.')], f'--resume={new}')   # from elsewhere
    sent = sent_text(s)
    assert sent.startswith('Some of the conversation history has been summarized') and 'REQUEST-OMEGA' in sent
    assert 'TASK-ALPHA' in sent and 'FAIL-OUTPUT-3' in sent and '<shellId' not in sent
    assert read_session(folder/'events.jsonl').msgs[-1].text == 'Going on.'

def test_to_copilot_from_a_real_claude_session(copilot, tmp_path):
    "A real Claude Code session (tests/data/claude-real) continued in Copilot: the real CLI sends the document"
    home, cwd = tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    h = sha(CLAUDE_REAL)
    rc, out, err = compact_in(home, cwd, str(CLAUDE_REAL), '--to', 'copilot', '--max-tokens', '8000')
    assert rc == 0 and sha(CLAUDE_REAL) == h, err
    new = new_id(out)
    doc = read_session(copilot_home(home)/'session-state'/new/'events.jsonl').summary
    s = turn(copilot, home, cwd, 'REQUEST-COPILOT: next', [text('Continuing in Copilot.')], f'--resume={new}')
    sent = sent_text(s)
    assert doc in sent and read_session(CLAUDE_REAL).task.split('\n')[0] in sent and 'REQUEST-COPILOT' in sent

def test_to_claude_from_copilot(hosts, cp_work):
    w = cp_work
    rc, out, err = compact_in(w.home, w.cwd, str(w.src), '--to', 'claude', '--all')
    assert rc == 0, err
    new = [l for l in out.splitlines() if 'claude --resume' in l][-1].split()[-1]
    with AnthropicMock([text('Continuing in claude.')]) as s:
        rc, o, e = run_claude(hosts[0], w.home, w.cwd, 'REQUEST-CLAUDE: next', s, '--resume', new)
        assert rc == 0, e
    assert all(request_with(s, x) for x in ('TASK-ALPHA', 'FAIL-OUTPUT-3', 'REQUEST-CLAUDE'))

# ---------------------------------------------------------------- the hook, run as Copilot runs it

HEAVY = {'tiktoken', 'aidialog', 'llmsurgery.service', 'llmsurgery.sessions', 'llmsurgery.hosts.base',
         'llmsurgery.hosts.copilot', 'llmsurgery.jsonl', 'orjson', 'fastcore'}
HOOK_MODULES = """import json, runpy, sys
sys.argv = ['llmsurgery.hooks', *sys.argv[1:]]
try: runpy.run_module('llmsurgery.hooks', run_name='__main__', alter_sys=True)
except SystemExit as e: status = e.code
print(json.dumps(dict(status=status, modules=sorted(sys.modules))))"""

@pytest.fixture
def store(tmp_path):
    """A store holding a copy of the genuine session with two compactions, with llmsurgery's hooks installed:
    `(its id, its events.jsonl, {event: argv of the installed command}, env)`"""
    home = tmp_path/'home'
    src = genuine('fix-parser')
    d = copilot_home(home)/'session-state'/src.parent.name
    shutil.copytree(src.parent, d)
    return (src.parent.name, d/'events.jsonl', *_installed(home))

def _installed(home):
    "`({event: argv of the command}, env)` of llmsurgery's hooks installed in the store under `home`"
    Path(home).mkdir(parents=True, exist_ok=True)
    rc, out, err = compact_in(home, home, '--install-hooks', 'copilot')
    assert rc == 0, err
    hooks = json.loads((copilot_home(home)/'hooks'/'llmsurgery.json').read_text())['hooks']
    argv = {ev: shlex.split(hs[0]['bash']) for ev, hs in hooks.items()}
    return argv, dict(HOME=str(home), XDG_STATE_HOME=str(home/'state'), COPILOT_HOME=str(copilot_home(home)),
                      PATH='/usr/bin:/bin')

def run_hook(store, event, stdin):
    "Copilot's run of llmsurgery's installed hook on `event` with `stdin`: (status, modules imported, what it printed)"
    argv, env = store[2][event], store[3]
    args = argv[argv.index('llmsurgery.hooks')+1:]
    p = subprocess.run([sys.executable, '-P', '-c', HOOK_MODULES, *args], input=json.dumps(stdin).encode(),
                       capture_output=True, env=env, timeout=60)
    *said, last = p.stdout.decode().splitlines()
    r = json.loads(last)
    return r['status'], set(r['modules']), said

def prompt(store, words='fix the parser'):
    return run_hook(store, 'userPromptSubmitted', dict(sessionId=store[0], timestamp=1, cwd='/w', prompt=words))

def told(run):
    status, mods, said = run
    assert status == 0 and len(said) <= 1
    return STATE in json.loads(said[0])['additionalContext'] if said else False

def compacted_again(events):
    "The transcript's last compaction logged once more, as a new one (a new record id)"
    r = json.loads([l for l in events.read_text().splitlines() if '"session.compaction_complete"' in l][-1])
    with open(events, 'a') as f: f.write(json.dumps(r | dict(id='0'+r['id'][1:]), separators=(',', ':')) + '\n')

def no_log(store): return not (Path(store[3]['XDG_STATE_HOME'])/'llmsurgery'/'hooks.log').exists()

def test_the_prompt_hook_tells_once_and_passes_light(store):
    runs = [prompt(store) for _ in range(3)]
    assert [told(r) for r in runs] == [True, False, False]
    assert 'llmsurgery.service' in runs[0][1] and not HEAVY & runs[2][1], HEAVY & runs[2][1]
    events = store[1]
    with open(events, 'a') as f: f.write(events.read_text().splitlines(keepends=True)[-3])   # more, no compaction
    status, mods, said = prompt(store)
    assert (status, said) == (0, []) and not HEAVY & mods
    compacted_again(events)
    assert [told(prompt(store)) for _ in range(2)] == [True, False]
    assert no_log(store)

def test_the_hook_fails_open(store):
    "Whatever it is given, the hook exits 0 and prints nothing; a failure is one line in the log"
    for ev in ('not json', dict(sessionId='../../x', prompt='hi'), dict(sessionId='nope', prompt='compact with llmsurgery')):
        argv, env = store[2]['userPromptSubmitted'], store[3]
        p = subprocess.run(argv, input=ev if isinstance(ev, str) else json.dumps(ev), capture_output=True, text=True,
                           env=env, timeout=60)
        assert (p.returncode, p.stdout) == (0, '')
    lines = (Path(store[3]['XDG_STATE_HOME'])/'llmsurgery'/'hooks.log').read_text().splitlines()
    assert len(lines) == 2 and 'copilot userPromptSubmitted nope' in lines[1]

def test_a_2gb_transcript_ends_the_hook_by_its_own_bound(tmp_path):
    "2 GB of one line as the transcript: a prompt's hook looks back only as far as a hook reads, and tells nothing"
    store = ('s2g', None, *_installed(tmp_path/'home'))
    f = copilot_home(tmp_path/'home')/'session-state'/'s2g'/'events.jsonl'
    f.parent.mkdir(parents=True)
    with open(f, 'wb') as o: o.truncate(2<<30)   # sparse: no disk taken
    t = time.monotonic()
    assert told(prompt(store)) is False
    assert time.monotonic()-t < 10 and no_log(store)

def test_uninstall_removes_exactly_the_hooks_file(tmp_path):
    home = tmp_path/'home'
    user_hooks(home, 'user.json', sessionEnd='true')
    d = copilot_home(home)/'hooks'
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    for _ in range(2):                                                        # twice is once
        rc, out, err = compact_in(home, tmp_path, '--install-hooks', 'copilot')
        assert rc == 0 and sorted(p.name for p in d.iterdir()) == sorted([*before, 'llmsurgery.json']), err
    ours = json.loads((d/'llmsurgery.json').read_text())
    assert set(ours['hooks']) == {'userPromptSubmitted'} and "llmsurgery's plugin" in ours['//']
    rc, out, err = compact_in(home, tmp_path, '--uninstall-hooks', 'copilot')
    assert rc == 0 and {p.name: p.read_bytes() for p in d.iterdir()} == before, err
    (d/'llmsurgery.json').write_text('{"version": 1, "hooks": {}}')             # the user's own, by that name: left
    rc, out, err = compact_in(home, tmp_path, '--install-hooks', 'copilot')
    assert rc == 2 and "not llmsurgery's" in err and (d/'llmsurgery.json').read_text() == '{"version": 1, "hooks": {}}'
