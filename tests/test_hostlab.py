"""The hook and TUI harness works with the real clients, and the host facts issue 20 and 21 build on hold
(tests/HOSTFACTS.md, "Hooks, compaction and the TUIs"). Every hook here is a trivial recorder, not llmsurgery."""
import json, sys
import pytest
from hostkit import (one_turn, AnthropicMock, ResponsesMock, run_claude, run_codex, text, bash, exec_command,
                     summary, codex_home, read_jsonl, write_claude_resume,
                     write_codex_resume, write_recorder, hook_calls, hook_group, claude_hooks, codex_hooks, compact_claude, compact_codex,
                     codex_hooks_list, trust_codex_hooks, request_with, claude_tool_results, codex_tool_outputs)
from tui import claude_tui, codex_tui, joined

DOC = 'This session is being continued from a previous conversation. Summary: HOSTLAB-DOC-5521.'
CTX = 'HOSTLAB-STATE-FACTS: the task, the todo list, files changed'

@pytest.fixture
def claude_session(hosts, tmp_path):
    "A one-turn Claude Code session written by the host: (claude, home, cwd, session file)"
    cl, home, cwd = hosts[0], tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    return cl, home, cwd, one_turn('claude', cl, home, cwd, 'first question', 'first answer')

@pytest.fixture
def codex_thread(hosts, tmp_path):
    "A one-turn Codex thread written by the host: (codex, home, cwd, rollout, thread id)"
    cx, home, cwd = hosts[1], tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    src = one_turn('codex', cx, home, cwd, 'first question', 'first answer')
    return cx, home, cwd, src, read_jsonl(src)[0]['payload']['id']

def gen_cmd(folder, n):
    "A shell command printing `n` ASCII bytes that end in TAIL (through a script: the command line stays short)"
    script = folder/'gen.py'
    script.write_text("import sys\nn = int(sys.argv[1])\nsys.stdout.write(('x' * n)[:n - 4] + 'TAIL')\n")
    return f'{sys.executable} {script} {n}'

def test_claude_compact_then_session_start_context(claude_session, tmp_path):
    "After the host's `/compact` in -p mode the next request carries the SessionStart(compact) hook's text"
    cl, home, cwd, src = claude_session
    sid = src.stem
    claude_hooks(home, PreCompact=[hook_group(write_recorder(tmp_path, 'pre'))],
                 SessionStart=[hook_group(write_recorder(tmp_path, 'start', context=CTX), matcher='compact')])
    with AnthropicMock([summary('HOST-SUMMARY')]) as s: rc, out, err = compact_claude(cl, home, cwd, sid, s)
    assert rc == 0, err
    assert len(s.model_requests()) == 1                                   # `<summary>` tags: no second attempt
    pre, = hook_calls(tmp_path/'pre.jsonl')
    start, = hook_calls(tmp_path/'start.jsonl')
    assert pre['input']['trigger'] == 'manual' and pre['input']['custom_instructions'] is None
    assert start['input']['source'] == 'compact' and start['input']['session_id'] == sid
    assert start['input']['transcript_path'] == str(src)                  # the same file; the session id is kept
    assert start['env']['CLAUDE_CODE_SESSION_ID'] == sid and start['cwd'] == str(cwd)
    assert any(r.get('subtype') == 'compact_boundary' for r in read_jsonl(src))
    with AnthropicMock([text('after')]) as s: assert run_claude(cl, home, cwd, 'NEXT', s, '--resume', sid)[0] == 0
    msgs = s.model_requests()[0]['body']['messages']
    system = ' '.join(json.dumps(m['content']) for m in msgs if m['role'] == 'system')
    assert f'SessionStart hook additional context: {CTX}' in system
    assert 'HOST-SUMMARY' in json.dumps(msgs[0])                          # the host's summary opens the conversation

def test_claude_blocking_precompact_makes_no_request(claude_session, tmp_path):
    "`/compact llmsurgery` with a PreCompact hook that exits 2: the host prints its stderr and calls no model"
    cl, home, cwd, src = claude_session
    msg = 'Written 7d1e. Type /resume 7d1e to continue.'
    cmd = write_recorder(tmp_path, 'pre', block=msg)
    claude_hooks(home, PreCompact=[hook_group(cmd)])
    before = src.read_bytes()
    with AnthropicMock([summary('never')]) as s: rc, out, err = compact_claude(cl, home, cwd, src.stem, s, 'llmsurgery')
    assert rc == 0, err                                                   # exit status 0 although blocked
    assert out == f'Compaction blocked by PreCompact hook: [{cmd}]: {msg}\n'
    assert s.model_requests() == []
    call, = hook_calls(tmp_path/'pre.jsonl')
    assert call['input']['custom_instructions'] == 'llmsurgery' and call['input']['transcript_path'] == str(src)
    after = src.read_bytes()
    assert after.startswith(before) and b'compact_boundary' not in after  # the host only appended its bookkeeping

def test_claude_bash_result_limit(claude_session, tmp_path):
    "In a resumed session, a 28 KB Bash output reaches the model whole; above 30,000 bytes only a preview does"
    cl, home, cwd, src = claude_session
    results = []
    for n in (28 * 1024, 30_001):  # a fresh resumed session each: the mock's tool_use ids restart at 000
        new = write_claude_resume(read_jsonl(src), DOC, src.parent)
        with AnthropicMock([bash(gen_cmd(tmp_path, n)), text('done')]) as s:
            rc, out, err = run_claude(cl, home, cwd, 'show', s, '--resume', new, '--allowedTools', 'Bash')
        assert rc == 0, err
        results.append(claude_tool_results(s.model_requests()[-1]['body'])[-1])
    whole, cut = results
    assert len(whole) == 28 * 1024 and whole.endswith('TAIL')
    assert cut.startswith('<persisted-output>\nOutput too large (29.3KB). Full output saved to: ') and 'TAIL' not in cut

def test_claude_tui_compact_llmsurgery_then_resume(claude_session, tmp_path):
    "In the TUI: `/compact llmsurgery` is blocked with no request, then `/resume NEW` continues from the document"
    cl, home, cwd, src = claude_session
    new = write_claude_resume(read_jsonl(src), DOC, src.parent)
    cmd = write_recorder(tmp_path, 'pre', block=f'Type /resume {new}')
    claude_hooks(home, PreCompact=[hook_group(cmd)])
    with AnthropicMock([text('ANSWER-AFTER-RESUME')]) as s:
        with claude_tui(cl, home, cwd, s, '--resume', src.stem) as t:
            t.type('/compact llmsurgery')
            scr = t.wait_for(joined(f'Compaction blocked by PreCompact hook: [{cmd}]: Type /resume {new}'), 20)
            assert s.model_requests() == [], scr
            t.type(f'/resume {new}')
            t.wait_for('Conversation compacted', 20)
            t.type('NEXT-TUI-PROMPT')
            t.wait_for('ANSWER-AFTER-RESUME', 20)
    msgs = request_with(s, 'NEXT-TUI-PROMPT')['body']['messages']
    assert msgs[0] == {'role': 'user', 'content': DOC}
    assert hook_calls(tmp_path/'pre.jsonl')[0]['input']['custom_instructions'] == 'llmsurgery'

def test_codex_runs_a_trusted_session_start_hook(codex_thread, tmp_path):
    "Codex skips an untrusted hook silently; once trusted (config.toml hooks.state) its context reaches the model"
    cx, home, cwd, src, tid = codex_thread
    codex_hooks(home, SessionStart=[hook_group(write_recorder(tmp_path, 'start', context=CTX))])
    h, = codex_hooks_list(cx, home, cwd)
    assert h['trustStatus'] == 'untrusted' and h['key'] == f'{codex_home(home)/"hooks.json"}:session_start:0:0'
    with ResponsesMock([text('a')]) as s: assert run_codex(cx, home, cwd, 'untrusted', s)[0] == 0
    assert hook_calls(tmp_path/'start.jsonl') == [] and CTX not in json.dumps(s.model_requests()[0]['body'])
    trust_codex_hooks(cx, home, cwd)
    cfg = (codex_home(home)/'config.toml').read_text()
    assert f'[hooks.state."{h["key"]}"]\ntrusted_hash = "{h["currentHash"]}"' in cfg
    with ResponsesMock([text('b')]) as s: assert run_codex(cx, home, cwd, 'trusted', s, 'resume', tid)[0] == 0
    call, = hook_calls(tmp_path/'start.jsonl')
    assert call['input']['source'] == 'resume' and call['input']['session_id'] == tid
    assert call['input']['transcript_path'] == str(src) and 'CODEX_THREAD_ID' not in call['env']
    dev = [i for i in s.model_requests()[0]['body']['input'] if i['type'] == 'message' and i['role'] == 'developer']
    assert {'type': 'input_text', 'text': CTX} in [c for i in dev for c in i['content']]

def test_codex_compaction_hooks(codex_thread, tmp_path):
    "Codex's PreCompact cannot block; after its compaction SessionStart(compact) adds context before the next turn"
    cx, home, cwd, src, tid = codex_thread
    codex_hooks(home, PreCompact=[hook_group(write_recorder(tmp_path, 'pre', block='no'))],
                SessionStart=[hook_group(write_recorder(tmp_path, 'start', context=CTX), matcher='compact')])
    trust_codex_hooks(cx, home, cwd)
    with ResponsesMock([text('after')]) as s: notes = compact_codex(cx, home, cwd, tid, s, then='NEXT-PROMPT')
    pre, = hook_calls(tmp_path/'pre.jsonl')
    start, = hook_calls(tmp_path/'start.jsonl')
    assert pre['input']['trigger'] == 'manual' and start['input']['source'] == 'compact'
    assert any(r['type'] == 'compacted' for r in read_jsonl(src))         # exit 2 did not stop it
    done = [n['params']['item']['type'] for n in notes if n.get('method') == 'item/completed']
    assert 'contextCompaction' in done
    inp = request_with(s, 'NEXT-PROMPT')['body']['input']
    at = [i.get('type') for i in inp].index('compaction')
    assert inp[at]['encrypted_content'] == ResponsesMock.compaction_text
    assert CTX in json.dumps(inp[at + 1:-1]) and 'NEXT-PROMPT' in json.dumps(inp[-1])  # summary, our context, prompt

def test_codex_exec_output_limit_and_thread_id(codex_thread, tmp_path):
    "In a resumed thread, a 28 KB exec output reaches the model whole, and the shell sees CODEX_THREAD_ID"
    cx, home, cwd, src, tid = codex_thread
    new = write_codex_resume(read_jsonl(src), DOC, codex_home(home))
    cmd = f'echo "TID=$CODEX_THREAD_ID"; {gen_cmd(tmp_path, 28 * 1024)}'
    with ResponsesMock([exec_command(cmd), text('done')]) as s:
        rc, out, err = run_codex(cx, home, cwd, 'show', s, 'resume', new, '--dangerously-bypass-approvals-and-sandbox')
    assert rc == 0, err
    result = codex_tool_outputs(s.model_requests()[-1]['body'])[-1]
    head, body = result.split('\nOutput:\n', 1)
    assert head.startswith('Chunk ID: ') and 'Process exited with code 0' in head
    assert body == f'TID={new}\n' + 'x' * (28 * 1024 - 4) + 'TAIL'

def test_codex_tui_compact_llmsurgery_then_resume(codex_thread, tmp_path):
    """In Codex's TUI `/compact llmsurgery` is a prompt (not `/compact`): a UserPromptSubmit hook stops it with no
    request and no compaction; `/resume NEW` then continues from the document"""
    cx, home, cwd, src, tid = codex_thread
    new = write_codex_resume(read_jsonl(src), DOC, codex_home(home))
    stop = write_recorder(tmp_path, 'ups', block=f'Type /resume {new}', when='"prompt":"/compact llmsurgery"')
    codex_hooks(home, UserPromptSubmit=[hook_group(stop)], PreCompact=[hook_group(write_recorder(tmp_path, 'pre'))])
    trust_codex_hooks(cx, home, cwd)
    with ResponsesMock([text('ANSWER-AFTER-RESUME')]) as s:
        with codex_tui(cx, home, cwd, s) as t:
            t.type('/compact llmsurgery')
            scr = t.wait_for(joined(f'Blocked by hook └ Type /resume {new}'), 20)
            assert s.model_requests() == [], scr
            t.type(f'/resume {new}')
            t.wait_for(f'Thread forked from {tid}', 20)
            t.type('NEXT-TUI-PROMPT')
            t.wait_for('ANSWER-AFTER-RESUME', 20)
    assert hook_calls(tmp_path/'ups.jsonl')[0]['input']['prompt'] == '/compact llmsurgery'
    assert hook_calls(tmp_path/'pre.jsonl') == []                         # no compaction started
    inp = request_with(s, 'NEXT-TUI-PROMPT')['body']['input']
    assert inp[0]['role'] == 'user' and inp[0]['content'][0]['text'] == DOC
