"""llmsurgery inside Claude Code and Codex (issue 20), proven with the real clients offline: `--install-hooks` merges our
hooks into the host's settings (Codex trusts them through its own app-server); after the host's `/compact` the next
request holds our state facts; `/compact llmsurgery` makes no request and names a session that resumes from our
document, in print mode and in the TUIs; uninstalling gives the user's files back byte for byte."""
import json, os, re, subprocess, sys
from pathlib import Path
import pytest
from hostkit import (AnthropicMock, ResponsesMock, run_claude, run_codex, text, bash, tool, exec_command,
                     summary, claude_sessions, codex_rollouts, codex_home, read_jsonl, sandbox_env, compact_claude,
                     compact_codex, codex_hooks_list, request_with)
from tui import claude_tui, codex_tui, joined

COMPACT = Path(sys.executable).parent/'llmsurgery-compact'
STATE = "llmsurgery's state of the part of this session that was just compacted"

def cli(home, *args, path=None):
    "Run this installation's `llmsurgery-compact` in the sandbox `home` (its PATH: `path`, else the system's)"
    env = sandbox_env(home) | ({'PATH': path} if path is not None else {})
    p = subprocess.run([str(COMPACT), *args], env=env, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr

def codex_path(cx): return f"{Path(cx).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"

def hooks_log(home): return Path(home)/'.local'/'state'/'llmsurgery'/'hooks.log'

def no_failures(home):
    "Our hooks logged no failure"
    log = hooks_log(home)
    assert not log.exists(), log.read_text()

def resume_id(s):
    "The session id the hook's message tells the user to `/resume`"
    return re.search(r'type /resume (\S+) to continue', re.sub(r'\s+', ' ', s))[1]

def request_text(body): return json.dumps(body, ensure_ascii=False)

# ---------------------------------------------------------------- Claude Code

TODOS = [dict(content='TODO-BETA keep the last row', status='in_progress', activeForm='Keeping the last row')]
CLAUDE_TOOLS = ('--tools', 'Bash,TodoWrite', '--system-prompt', 'You are a test assistant.', '--disable-slash-commands',
                '--allowedTools', 'Bash')

@pytest.fixture
def claude_work(hosts, tmp_path):
    """A Claude Code session of two prompts written by the host, with a todo list, a commit and a failing command:
    (claude, home, cwd, session file)"""
    cl, home, cwd = hosts[0], tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    commit = bash('echo "[main 1a2b3c4] COMMIT-GAMMA keep the last row"  # git commit -m x')
    with AnthropicMock([tool('TodoWrite', todos=TODOS), commit, text('Working on it.')]) as s:
        assert run_claude(cl, home, cwd, 'TASK-ALPHA: the parser drops the last row', s, *CLAUDE_TOOLS, quick=False)[0] == 0
    src, = claude_sessions(home)
    with AnthropicMock([bash('echo FAILURE-ZETA >&2; exit 3'), text('Will do.')]) as s:   # an error since the last prompt
        rc, out, err = run_claude(cl, home, cwd, 'REQUEST-DELTA: and add a test', s, *CLAUDE_TOOLS, '--resume', src.stem,
                                  quick=False)
        assert rc == 0, err
    return cl, home, cwd, src

def test_claude_state_after_the_hosts_compact(claude_work):
    "After Claude Code's own `/compact` (print mode) the next request holds our state of what it compacted"
    cl, home, cwd, src = claude_work
    rc, out, err = cli(home, '--install-hooks', 'claude')
    assert rc == 0, err
    with AnthropicMock([summary('HOST-SUMMARY')]) as s: assert compact_claude(cl, home, cwd, src.stem, s)[0] == 0
    with AnthropicMock([text('after')]) as s: assert run_claude(cl, home, cwd, 'NEXT', s, '--resume', src.stem)[0] == 0
    system = ' '.join(json.dumps(m['content'], ensure_ascii=False) for m in s.model_requests()[0]['body']['messages']
                      if m['role'] == 'system')
    assert f'SessionStart hook additional context: {STATE}' in system
    for fact in ('TASK-ALPHA', 'TODO-BETA', '1a2b3c4 COMMIT-GAMMA', 'FAILURE-ZETA', 'REQUEST-DELTA', '--grep REGEX'):
        assert fact in system, fact
    no_failures(home)

def test_claude_state_covers_only_the_part_just_compacted(claude_work):
    "At a second compaction the state covers what followed the first one, and the task is still the session's first"
    cl, home, cwd, src = claude_work
    assert cli(home, '--install-hooks', 'claude')[0] == 0
    with AnthropicMock([summary('HOST-SUMMARY-1')]) as s: assert compact_claude(cl, home, cwd, src.stem, s)[0] == 0
    with AnthropicMock([text('Noted.')]) as s:
        assert run_claude(cl, home, cwd, 'REQUEST-EPSILON: now the writer', s, '--resume', src.stem)[0] == 0
    with AnthropicMock([summary('HOST-SUMMARY-2')]) as s: assert compact_claude(cl, home, cwd, src.stem, s)[0] == 0
    with AnthropicMock([text('after')]) as s: assert run_claude(cl, home, cwd, 'NEXT', s, '--resume', src.stem)[0] == 0
    added = [json.dumps(m['content'], ensure_ascii=False) for m in s.model_requests()[0]['body']['messages']
             if m['role'] == 'system' and STATE in json.dumps(m['content'])]
    assert added, 'no state added'
    last = added[-1].split(STATE)[-1]
    assert 'REQUEST-EPSILON' in last and 'TASK-ALPHA' in last, last
    assert 'TODO-BETA' not in last and 'COMMIT-GAMMA' not in last       # those were in the part compacted before
    no_failures(home)

def test_claude_compact_llmsurgery_then_resume(claude_work):
    "`/compact llmsurgery` (print mode) makes no model request; the session it names resumes from our document"
    cl, home, cwd, src = claude_work
    assert cli(home, '--install-hooks', 'claude')[0] == 0
    before = src.read_bytes()
    with AnthropicMock([summary('never')]) as s: rc, out, err = compact_claude(cl, home, cwd, src.stem, s, 'llmsurgery')
    assert (rc, s.model_requests()) == (0, []), err
    assert out.startswith('Compaction blocked by PreCompact hook: ') and 'tokens (ratio' in out
    new = resume_id(out)
    path = src.parent/f'{new}.jsonl'
    doc = read_jsonl(path)[1]['message']['content']
    assert doc.startswith('This session is being continued from an earlier conversation, compacted.')
    assert 'TASK-ALPHA' in doc and 'REQUEST-DELTA' in doc
    assert src.read_bytes().startswith(before)                          # the host appended its bookkeeping; we wrote nothing
    with AnthropicMock([text('after')]) as s: assert run_claude(cl, home, cwd, 'NEXT', s, '--resume', new)[0] == 0
    assert s.model_requests()[0]['body']['messages'][0] == {'role': 'user', 'content': doc}
    no_failures(home)

def test_claude_tui_compact_llmsurgery_then_resume(claude_work):
    "In Claude Code's TUI `/compact llmsurgery` makes no request, and `/resume <id>` continues from our document"
    cl, home, cwd, src = claude_work
    assert cli(home, '--install-hooks', 'claude')[0] == 0
    with AnthropicMock([text('ANSWER-AFTER-RESUME')]) as s:
        with claude_tui(cl, home, cwd, s, '--resume', src.stem) as t:
            t.type('/compact llmsurgery')
            scr = t.wait_for(joined('to continue from it'), 60)
            assert s.model_requests() == [], scr
            assert 'Compaction blocked by PreCompact hook' in re.sub(r'\s+', ' ', scr)
            new = resume_id(scr)
            t.type(f'/resume {new}')
            t.wait_for('Conversation compacted', 20)
            t.type('NEXT-TUI-PROMPT')
            t.wait_for('ANSWER-AFTER-RESUME', 20)
    doc = read_jsonl(src.parent/f'{new}.jsonl')[1]['message']['content']
    assert request_with(s, 'NEXT-TUI-PROMPT')['body']['messages'][0] == {'role': 'user', 'content': doc}
    no_failures(home)

# ---------------------------------------------------------------- Codex

@pytest.fixture
def codex_work(hosts, tmp_path):
    "A Codex thread written by the host, with a failing command: (codex, home, cwd, rollout, thread id)"
    cx, home, cwd = hosts[1], tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    replies = [exec_command('echo FAILURE-ZETA >&2; exit 3'), text('Working on it.')]
    with ResponsesMock(replies) as s:
        rc, out, err = run_codex(cx, home, cwd, 'TASK-ALPHA: the parser drops the last row', s,
                                 '--dangerously-bypass-approvals-and-sandbox')
        assert rc == 0, err
    src, = codex_rollouts(home)
    return cx, home, cwd, src, read_jsonl(src)[0]['payload']['id']

def install_codex(cx, home):
    rc, out, err = cli(home, '--install-hooks', 'codex', path=codex_path(cx))
    assert rc == 0 and 'trusted by' in out, out + err
    return out

def test_codex_state_after_the_hosts_compact(codex_work):
    """After Codex's own compaction the next turn's request holds our state; what Codex kept word for word (the user's
    messages) is left out of it"""
    cx, home, cwd, src, tid = codex_work
    install_codex(cx, home)
    with ResponsesMock([text('after')]) as s: compact_codex(cx, home, cwd, tid, s, then='NEXT-PROMPT')
    inp = request_with(s, 'NEXT-PROMPT')['body']['input']
    dev = [c['text'] for i in inp if i.get('role') == 'developer' for c in i.get('content') or []
           if isinstance(c, dict) and STATE in c.get('text', '')]
    assert len(dev) == 1, request_text(inp)
    assert 'FAILURE-ZETA' in dev[0] and '--grep REGEX' in dev[0]
    assert 'TASK-ALPHA' not in dev[0]                                   # Codex kept the user's message itself
    assert 'TASK-ALPHA' in request_text(inp)
    no_failures(home)

def test_codex_compact_llmsurgery_then_resume(codex_work):
    "The prompt `/compact llmsurgery` makes no request; the thread it names resumes from our document"
    cx, home, cwd, src, tid = codex_work
    install_codex(cx, home)
    with ResponsesMock([text('never')]) as s: rc, out, err = run_codex(cx, home, cwd, '/compact llmsurgery', s, 'resume', tid)
    assert (rc, s.model_requests()) == (0, []), err
    assert 'UserPromptSubmit Blocked' in out + err
    new, = [p for p in codex_rollouts(home) if p != src]
    nid = read_jsonl(new)[0]['payload']['id']
    doc = read_jsonl(new)[1]['payload']['message']
    assert doc.startswith('This session is being continued from an earlier conversation, compacted.') and 'TASK-ALPHA' in doc
    with ResponsesMock([text('after')]) as s: assert run_codex(cx, home, cwd, 'NEXT', s, 'resume', nid)[0] == 0
    assert request_with(s, 'NEXT')['body']['input'][0]['content'][0]['text'] == doc
    no_failures(home)

def test_codex_tui_compact_llmsurgery_then_resume(codex_work):
    "In Codex's TUI `/compact llmsurgery` is blocked with no request, and `/resume <id>` continues from our document"
    cx, home, cwd, src, tid = codex_work
    install_codex(cx, home)
    with ResponsesMock([text('ANSWER-AFTER-RESUME')]) as s:
        with codex_tui(cx, home, cwd, s, 'resume', tid) as t:
            t.wait_for('Ask Codex', 20)
            t.type('/compact llmsurgery')
            scr = t.wait_for(joined('to continue from it'), 60)
            assert s.model_requests() == [] and 'Blocked by hook' in scr, scr
            new = resume_id(scr)
            t.type(f'/resume {new}')
            t.wait_for(f'Thread forked from {tid}', 20)
            t.type('NEXT-TUI-PROMPT')
            t.wait_for('ANSWER-AFTER-RESUME', 20)
    rollout, = [p for p in codex_rollouts(home) if p.stem.endswith(new)]
    doc = read_jsonl(rollout)[1]['payload']['message']
    assert request_with(s, 'NEXT-TUI-PROMPT')['body']['input'][0]['content'][0]['text'] == doc
    no_failures(home)

# ---------------------------------------------------------------- installing and uninstalling

USER_HOOK = {'hooks': [{'type': 'command', 'command': 'notify-send compacted'}]}

def test_claude_install_uninstall_keeps_the_users_settings(tmp_path):
    "A merge into settings.json holding the user's hooks: kept; twice is once; undone byte for byte; malformed refused"
    home = tmp_path/'home'
    settings = home/'.claude'/'settings.json'
    settings.parent.mkdir(parents=True)
    original = json.dumps({'model': 'opus', 'hooks': {'SessionStart': [USER_HOOK], 'PreCompact': [USER_HOOK]}},
                          indent=4).encode() + b'\n'
    settings.write_bytes(original)
    settings.chmod(0o640)
    rc, out, err = cli(home, '--install-hooks', 'claude')
    assert rc == 0, err
    once, mtime = settings.read_bytes(), settings.stat().st_mtime_ns
    d = json.loads(once)
    assert d['model'] == 'opus' and d['hooks']['SessionStart'][0] == USER_HOOK and d['hooks']['PreCompact'][0] == USER_HOOK
    assert [g.get('matcher') for g in d['hooks']['SessionStart']] == [None, 'compact']
    assert cli(home, '--install-hooks', 'claude')[0] == 0
    assert (settings.read_bytes(), settings.stat().st_mtime_ns) == (once, mtime)   # twice: not even rewritten
    assert oct(settings.stat().st_mode & 0o777) == oct(0o640)
    assert cli(home, '--uninstall-hooks', 'claude')[0] == 0
    assert settings.read_bytes() == original
    settings.write_bytes(b'{"hooks": {"SessionStart": [')
    rc, out, err = cli(home, '--install-hooks', 'claude')
    assert rc == 2 and 'not valid JSON' in err and settings.read_bytes() == b'{"hooks": {"SessionStart": ['

def test_installing_again_after_the_users_change_keeps_it(tmp_path):
    """Installed again after the user changed settings.json, our hooks rewritten (another installation's, as before an
    upgrade): the uninstall takes out only ours, and the user's change stays"""
    home = tmp_path/'home'
    settings = home/'.claude'/'settings.json'
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({'model': 'opus'}, indent=2) + '\n')
    assert cli(home, '--install-hooks', 'claude')[0] == 0
    text = re.sub(r'"command": "\S+ -P -m llmsurgery', '"command": "/old/venv/bin/python -P -m llmsurgery', settings.read_text())
    assert text != settings.read_text()
    settings.write_text(text.replace('"opus"', '"sonnet"'))
    assert cli(home, '--install-hooks', 'claude')[0] == 0
    rc, out, err = cli(home, '--uninstall-hooks', 'claude')
    assert rc == 0 and out.startswith(f"{settings}: llmsurgery's hooks removed, the rest left as it is"), out + err
    assert json.loads(settings.read_text()) == {'model': 'sonnet'}

def test_codex_install_trusts_only_ours_and_uninstall_restores(hosts, tmp_path):
    """hooks.json holding the user's own hook: ours merged and trusted by Codex itself, the user's left untrusted;
    installing twice changes nothing; uninstalling gives back hooks.json and config.toml byte for byte"""
    cx, home, cwd = hosts[1], tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    ch = codex_home(home)
    ch.mkdir(parents=True)
    hooks = ch/'hooks.json'
    hooks.write_text(json.dumps({'hooks': {'SessionStart': [USER_HOOK]}}, indent=2) + '\n')
    config = ch/'config.toml'
    config.write_text('# my settings\nmodel = "o5"\n\n[features]\ngoals = false\n')
    originals = {p: p.read_bytes() for p in (hooks, config)}
    install_codex(cx, home)
    listed = codex_hooks_list(cx, home, cwd)
    ours = [h for h in listed if ' -m llmsurgery.hooks codex' in h['command']]
    assert sorted(h['eventName'] for h in ours) == ['sessionStart', 'userPromptSubmit']
    assert {h['trustStatus'] for h in ours} == {'trusted'}
    assert [h['trustStatus'] for h in listed if h['command'] == 'notify-send compacted'] == ['untrusted']
    assert config.read_text().startswith('# my settings\nmodel = "o5"\n')   # Codex kept the user's file as it was
    installed = {p: p.read_bytes() for p in (hooks, config)}
    install_codex(cx, home)
    assert {p: p.read_bytes() for p in (hooks, config)} == installed
    assert cli(home, '--uninstall-hooks', 'codex')[0] == 0
    assert {p: p.read_bytes() for p in (hooks, config)} == originals

def test_codex_install_without_codex_says_how_to_trust(tmp_path):
    "With no codex on PATH the hooks are written untrusted, and the user is told to trust them once in the TUI"
    home = tmp_path/'home'
    rc, out, err = cli(home, '--install-hooks', 'codex', path='/nonexistent')
    assert rc == 0, err
    assert "'Hooks need review'" in out and (codex_home(home)/'hooks.json').exists()
    assert (codex_home(home)/'config.toml').read_text().startswith('[mcp_servers.llmsurgery]')   # the MCP server alone
    assert cli(home, '--uninstall-hooks', 'codex', path='/nonexistent')[0] == 0
    assert not (codex_home(home)/'hooks.json').exists() and not (codex_home(home)/'config.toml').exists()

def test_a_failing_hook_exits_0_and_logs_one_line(tmp_path):
    "The hook as the host runs it: on any error it exits 0, prints nothing, and writes one line to the log"
    home = tmp_path/'home'
    events = [b'not json', json.dumps(dict(hook_event_name='SessionStart', source='compact', session_id='s1',
                                          transcript_path=str(tmp_path/'gone.jsonl'))).encode(),
              json.dumps(dict(hook_event_name='PreCompact', custom_instructions='llmsurgery', session_id='s2',
                              transcript_path=str(tmp_path/'gone.jsonl'))).encode()]
    for ev in events:
        p = subprocess.run([sys.executable, '-P', '-m', 'llmsurgery.hooks', 'claude'], input=ev, capture_output=True,
                           env=sandbox_env(home), cwd=tmp_path, timeout=60)
        assert (p.returncode, p.stdout, p.stderr) == (0, b'', b'')
    lines = hooks_log(home).read_text().splitlines()
    assert len(lines) == 3 and ' PreCompact s2: ' in lines[2] and 'no such session file' in lines[2]

# ---------------------------------------------------------------- issue 27: the whole addition reaches the model

from llmsurgery.hookstate import compacted_state
from llmsurgery.hosts.base import host_named
from llmsurgery.hooks import compact_command
codex_host = host_named("codex")

RECALL_END = 'finds messages in every session of every host.'   # the recall line's end (hookstate.recall_line)

def long_run(n=14):
    "Shell commands with long outputs (every fourth one failing), each first line naming itself"
    return [f'echo ERR-{i} >&2; ls /nonexistent-{i}; exit 2' if i % 4 == 3 else f'echo RUN-{i}; seq 1 {600+i*40}'
            for i in range(n)]

def addition_in(s):
    "The hook's whole addition as `s` holds it: from our state's first words to the recall line's end"
    i = s.find(STATE)
    j = s.find(RECALL_END, i)
    assert i >= 0 and j > i, s[-2000:]
    return s[i:j+len(RECALL_END)]

def content_text(c): return c if isinstance(c, str) else '\n'.join(b.get('text', '') for b in c if isinstance(b, dict))

def test_claude_whole_addition_reaches_the_model(hosts, tmp_path):
    """After Claude Code's own `/compact` of a session of many commands, the next request holds our whole addition: the
    state and the document of what the summary loses, near the 10,000-character cap, not replaced by a preview"""
    cl, home, cwd = hosts[0], tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    cmds = long_run()
    with AnthropicMock([bash(c) for c in cmds] + [text('LAST-WORD-OMEGA')]) as s:
        assert run_claude(cl, home, cwd, 'TASK-BIG: run them all', s, *CLAUDE_TOOLS, quick=False, timeout=180)[0] == 0
    src, = claude_sessions(home)
    assert cli(home, '--install-hooks', 'claude')[0] == 0
    with AnthropicMock([summary('HOST-SUMMARY')]) as s: assert compact_claude(cl, home, cwd, src.stem, s)[0] == 0
    with AnthropicMock([text('after')]) as s: assert run_claude(cl, home, cwd, 'NEXT', s, '--resume', src.stem)[0] == 0
    system = '\n'.join(content_text(m['content']) for m in s.model_requests()[0]['body']['messages'] if m['role'] == 'system')
    assert 'persisted-output' not in system and 'Output too large' not in system
    add = addition_in(system)
    printed = [c for r in read_jsonl(src) if r.get('type') == 'attachment'
               and (r.get('attachment') or {}).get('type') == 'hook_additional_context' for c in r['attachment']['content']]
    assert printed[-1] == add                                 # what our hook printed is what the model got, all of it
    n = len(add.encode('utf-16-le')) // 2
    assert 8_000 <= n <= 10_000, n                           # it fills the room, and the host kept all of it
    assert '*** #' in add and 'LAST-WORD-OMEGA' in add and 'ERR-3' in add
    assert sum(c.splitlines()[0] in add for c in cmds) >= len(cmds) - 2
    no_failures(home)

def test_codex_whole_addition_reaches_the_model(hosts, tmp_path):
    "After Codex's own compaction of a thread of many commands, the next turn's request holds our whole addition"
    cx, home, cwd = hosts[1], tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    cmds = long_run()
    with ResponsesMock([exec_command(c) for c in cmds] + [text('LAST-WORD-OMEGA')]) as s:
        rc, out, err = run_codex(cx, home, cwd, 'TASK-BIG: run them all', s, '--dangerously-bypass-approvals-and-sandbox',
                                 timeout=180)
        assert rc == 0, err
    src, = codex_rollouts(home)
    tid = read_jsonl(src)[0]['payload']['id']
    install_codex(cx, home)
    with ResponsesMock([text('after')]) as s: compact_codex(cx, home, cwd, tid, s, then='NEXT-PROMPT')
    inp = request_with(s, 'NEXT-PROMPT')['body']['input']
    dev = [c['text'] for i in inp if i.get('role') == 'developer' for c in i.get('content') or []
           if isinstance(c, dict) and STATE in c.get('text', '')]
    assert len(dev) == 1, request_text(inp)
    assert 'Warning: truncated output' not in dev[0]
    add = addition_in(dev[0])
    assert add == dev[0]                                      # the item is our addition, all of it
    assert add == compacted_state(src, codex_host, str(cwd), compact_command())   # just as our hook made it then
    assert 8_000 <= len(add.encode()) <= 10_000, len(add.encode())
    assert 'ERR-3' in add and 'TASK-BIG' not in add           # Codex kept the user's message itself
    no_failures(home)

# ---------------------------------------------------------------- the message, every host

@pytest.mark.parametrize('name', ['claude', 'codex', 'gemini'])
def test_hook_resume_names_the_hosts_own_way_to_continue(name, tmp_path, monkeypatch):
    "`/compact llmsurgery`'s message: `/resume ID` where the host's TUI takes an id, else the host's own shell command"
    from llmsurgery.hookstate import hook_resume
    for k, v in (sandbox_env(tmp_path) | dict(GEMINI_CLI_HOME=str(tmp_path))).items(): monkeypatch.setenv(k, v)
    work = tmp_path/'work'; work.mkdir()
    src = dict(claude='examples/claude_short.jsonl', codex='examples/codex_short.jsonl',
               gemini='tests/data/gemini/gemini_compressed.jsonl')[name]
    host = host_named(name)
    c, msg = hook_resume(Path(__file__).resolve().parent.parent/src, host, cwd=work)
    sid, cmd = host.session_id(c.new[0]), c.new[1]
    first = msg.splitlines()[0]
    assert cmd.argv[0] == name and sid in cmd.argv, cmd
    if name == 'gemini': assert first.endswith(f'run {cmd} in a shell to continue from it') and '/resume' not in first
    else: assert resume_id(first) == sid
