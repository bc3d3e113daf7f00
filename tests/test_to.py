"""`llmsurgery-compact --to claude|codex` and the agent's own session, proven with the real clients (offline, against
loopback mocks that record what the model is sent):
- `--to codex` turns a Claude Code session the real `claude` wrote into a NEW Codex thread that `codex exec resume`
  opens with our document; `--to claude` turns a Codex thread the real `codex` wrote into a NEW Claude Code session that
  `claude -p --resume` opens with it. The source is byte-identical afterwards.
- Run by the agent in its own shell (Claude Code's Bash tool, Codex's exec tool), `llmsurgery-compact --resume` with no
  session compacts the session the agent runs in, which the host names (`CLAUDE_CODE_SESSION_ID`, `CODEX_THREAD_ID`),
  though another session of the directory is newer; run from outside, it takes the newest.
Every client runs with a timeout and its whole process group is killed when it overruns (`hostkit._run`)."""
import json, os, stat
from datetime import datetime, timedelta
from hostkit import (EXE, sha, compact_in, one_turn, codex_env, codex_home, AnthropicMock, ResponsesMock, run_claude,
                     run_codex, bash, exec_command, text, claude_sessions, codex_rollouts, read_jsonl, request_with,
                     claude_tool_results, codex_tool_outputs)
from llmsurgery.sessions import read_session
from llmsurgery.hosts.claude import project_dirname




def new_id(out, cmd):
    "The id at the end of the last line of `out` that holds the command `cmd`"
    lines = [l for l in out.splitlines() if cmd in l]
    assert lines, out
    return lines[-1].split()[-1]

def rollout(home, thread_id):
    "The rollout of thread `thread_id` in `home`'s Codex store"
    found, = [p for p in codex_rollouts(home) if p.stem.endswith(thread_id)]
    return found

def replies(run, mock, *prompts):
    "`(prompt, the first request the model got)` for each prompt, run by `run(prompt, server)`, that got its reply"
    for prompt in prompts:
        with mock([text('REPLY ' + prompt)]) as s: rc, o, e = run(prompt, s)
        assert rc == 0 and 'REPLY ' + prompt in o, e
        yield prompt, s.model_requests()[0]['body']

def claude_session(cl, home, cwd, prompt): return one_turn('claude', cl, home, cwd, prompt)
def codex_thread(cx, home, cwd, prompt): return one_turn('codex', cx, home, cwd, prompt)

def user_text(m):
    "The text of a Messages API message"
    return m['content'] if isinstance(m['content'], str) else ' '.join(b.get('text', '') for b in m['content'])

# ---------------------------------------------------------------- --to codex

def test_claude_session_continues_in_codex(hosts, tmp_path):
    cl, cx = hosts
    home, work = tmp_path/'home', tmp_path/'work'; work.mkdir()
    src = claude_session(cl, home, work, 'CLAUDE-TASK-4410: rename the parser')
    h = sha(src)
    rc, out, err = compact_in(home, work, '--to', 'codex')
    assert rc == 0, err
    tid = new_id(out, 'codex resume')
    assert out == f'codex resume {tid}\n'                                   # run here: no cd
    f = rollout(home, tid)
    assert f'wrote {f}' in err and stat.S_IMODE(f.stat().st_mode) == 0o600   # as main writes a Codex continuation
    meta = read_jsonl(f)[0]['payload']
    said = (meta['id'], meta['cwd'], meta['model_provider'], meta['originator'])
    assert said == (tid, str(work.resolve()), 'openai', 'codex-tui')
    assert 'forked_from_id' not in meta                                    # no Codex thread to fork from
    doc = read_session(f).summary
    assert 'CLAUDE-TASK-4410' in doc and f'transcript is `{src}`' in doc
    run = lambda prompt, s: run_codex(cx, home, work, prompt, s, 'resume', tid)
    for prompt, body in replies(run, ResponsesMock, 'PROMPT-IN-CODEX-1', 'PROMPT-IN-CODEX-2'):
        inp = body['input']
        first = {k: inp[0].get(k) for k in ('type', 'role', 'content')}
        assert first == {'type': 'message', 'role': 'user', 'content': [{'type': 'input_text', 'text': doc}]}
        assert prompt in json.dumps(inp[-1])
    assert 'REPLY PROMPT-IN-CODEX-2' in f.read_text()                     # Codex appended to the new thread
    rc, out, err = compact_in(home, tmp_path, src.stem[:8], '--to', 'codex')  # from elsewhere: cd there first
    assert rc == 0 and out.startswith(f'cd {work.resolve()} && codex resume '), err
    assert sha(src) == h and len(claude_sessions(home)) == 1

def test_codex_provider_is_the_configured_one(hosts, tmp_path):
    "Codex resumes no thread under another provider: the new thread takes the one config.toml names"
    cl, cx = hosts
    home, work = tmp_path/'home', tmp_path/'work'; work.mkdir()
    src = claude_session(cl, home, work, 'CLAUDE-TASK-7781')
    rc, out, err = compact_in(home, work, '--to', 'codex')                    # no config.toml yet: openai
    assert rc == 0, err
    under_openai = new_id(out, 'codex resume')
    assert read_jsonl(rollout(home, under_openai))[0]['payload']['model_provider'] == 'openai'
    with ResponsesMock([text('REPLY-FROM-MOCK-PROVIDER')]) as s:
        cfg = codex_home(home)/'config.toml'
        codex_env(home, s)
        cfg.write_text('model_provider = "mock"\n' + cfg.read_text() + '[model_providers.mock]\nname = "Mock"\n'
                       f'base_url = "{s.url}/v1"\nwire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n')
        rc, out, err = compact_in(home, work, src.stem, '--to', 'codex')
        assert rc == 0, err
        tid = new_id(out, 'codex resume')
        assert read_jsonl(rollout(home, tid))[0]['payload']['model_provider'] == 'mock'
        rc, o, e = run_codex(cx, home, work, 'PROMPT-UNDER-MOCK', s, 'resume', tid)
        assert rc == 0 and 'REPLY-FROM-MOCK-PROVIDER' in o, e
        rc, o2, e2 = run_codex(cx, home, work, 'PROMPT-UNDER-MOCK', s, 'resume', under_openai)
    assert rc != 0 and "Cannot change this thread's model provider from `openai` to `mock`" in e2   # why it must match
    assert 'CLAUDE-TASK-7781' in json.dumps(s.model_requests()[0]['body']['input'][0])

# ---------------------------------------------------------------- --to claude

def test_codex_thread_continues_in_claude(hosts, tmp_path):
    cl, cx = hosts
    home, work = tmp_path/'home', tmp_path/'work'; work.mkdir()
    src = codex_thread(cx, home, work, 'CODEX-TASK-5120: fix the date parsing')
    h, src_id = sha(src), read_jsonl(src)[0]['payload']['id']
    rc, out, err = compact_in(home, work, src_id[:13], '--to', 'claude')
    assert rc == 0, err
    sid = new_id(out, 'claude --resume')
    assert out == f'claude --resume {sid}\n'
    f = home/'.claude'/'projects'/project_dirname(os.path.realpath(work))/f'{sid}.jsonl'
    assert f.is_file() and f'wrote {f}' in err and stat.S_IMODE(f.stat().st_mode) == 0o600
    recs = read_jsonl(f)
    assert [r['type'] for r in recs] == ['system', 'user'] and recs[1]['isCompactSummary']
    assert {(r['cwd'], r['version'], r['sessionId']) for r in recs} == {(str(work.resolve()), '2.1.328', sid)}
    doc = read_session(f).summary
    assert 'CODEX-TASK-5120' in doc and f'transcript is `{src}`' in doc
    run = lambda prompt, s: run_claude(cl, home, work, prompt, s, '--resume', sid)
    for prompt, body in replies(run, AnthropicMock, 'PROMPT-IN-CLAUDE-1', 'PROMPT-IN-CLAUDE-2'):
        msgs = body['messages']
        assert msgs[0] == {'role': 'user', 'content': doc}
        assert prompt in user_text([m for m in msgs if m['role'] == 'user'][-1])
    assert 'REPLY PROMPT-IN-CLAUDE-2' in f.read_text()                    # Claude Code appended to the new session
    assert sha(src) == h and len(codex_rollouts(home)) == 1

# ---------------------------------------------------------------- the session the agent runs in

def later(path, days=1):
    "Move every record time of the session file at `path` `days` ahead (the test's own file: it becomes the newest)"
    def shift(o):
        if isinstance(o, dict): return {k: (_ahead(v, days) if k == 'timestamp' else shift(v)) for k, v in o.items()}
        return [shift(v) for v in o] if isinstance(o, list) else o
    path.write_text(''.join(json.dumps(shift(r)) + '\n' for r in read_jsonl(path)))

def _ahead(ts, days):
    if not isinstance(ts, str): return ts
    t = datetime.fromisoformat(ts) + timedelta(days=days)
    return t.isoformat(timespec='milliseconds').replace('+00:00', 'Z')

def test_claude_bash_tool_compacts_its_own_session(hosts, tmp_path):
    cl, _ = hosts
    home, work = tmp_path/'home', tmp_path/'work'; work.mkdir()
    mine = claude_session(cl, home, work, 'MY-SESSION-3301')
    other = claude_session(cl, home, work, 'OTHER-SESSION-9902')
    later(other)                                                           # another session of the directory, newer
    script = [bash(f'{EXE} --resume', 'compact this session'), text('compacted')]
    with AnthropicMock(script) as s:
        rc, out, err = run_claude(cl, home, work, 'Compact this session.', s, '--resume', mine.stem,
                                  '--allowedTools', 'Bash')
    assert rc == 0, err
    result, = claude_tool_results(request_with(s, 'tool_result')['body'])
    sid = new_id(result, 'claude --resume')
    doc = read_session(mine.parent/f'{sid}.jsonl').summary
    assert 'MY-SESSION-3301' in doc and 'OTHER-SESSION-9902' not in doc and f'transcript is `{mine}`' in doc
    rc, out, err = compact_in(home, work, '--resume')                          # from outside the agent: the newest
    assert rc == 0, err
    assert 'OTHER-SESSION-9902' in read_session(mine.parent/f'{new_id(out, "claude --resume")}.jsonl').summary
    with AnthropicMock([text('ok')]) as s: assert run_claude(cl, home, work, 'NEXT', s, '--resume', sid)[0] == 0
    assert s.model_requests()[0]['body']['messages'][0] == {'role': 'user', 'content': doc}

def test_codex_exec_tool_compacts_its_own_thread(hosts, tmp_path):
    _, cx = hosts
    home, work = tmp_path/'home', tmp_path/'work'; work.mkdir()
    mine = codex_thread(cx, home, work, 'MY-THREAD-4403')
    other = codex_thread(cx, home, work, 'OTHER-THREAD-8804')
    later(other)
    mine_id = read_jsonl(mine)[0]['payload']['id']
    with ResponsesMock([exec_command(f'{EXE} --resume'), text('compacted')]) as s:
        rc, out, err = run_codex(cx, home, work, 'Compact this thread.', s, 'resume', mine_id,
                                 '--dangerously-bypass-approvals-and-sandbox')
    assert rc == 0, err
    output, = codex_tool_outputs(request_with(s, 'function_call_output')['body'])
    tid = new_id(output.rstrip(), 'codex resume')
    doc = read_session(rollout(home, tid)).summary
    assert 'MY-THREAD-4403' in doc and 'OTHER-THREAD-8804' not in doc and f'transcript is `{mine}`' in doc
    assert read_jsonl(rollout(home, tid))[0]['payload']['forked_from_id'] == mine_id
    rc, out, err = compact_in(home, work, '--resume', '--host', 'codex')        # from outside the agent: the newest
    assert rc == 0, err
    assert 'OTHER-THREAD-8804' in read_session(rollout(home, new_id(out, 'codex resume'))).summary
    with ResponsesMock([text('ok')]) as s: assert run_codex(cx, home, work, 'NEXT', s, 'resume', tid)[0] == 0
    assert s.model_requests()[0]['body']['input'][0]['content'] == [{'type': 'input_text', 'text': doc}]
