"""The prototype writers in hostkit make a NEW compacted session that the real host resumes, leaving the source alone:
the document is the model's first message, the new prompt comes after it, and the host appends to the new file"""
import hashlib, json, stat
from hostkit import (AnthropicMock, ResponsesMock, run_claude, run_codex, text, claude_sessions,
                     codex_rollouts, codex_home, read_jsonl, write_claude_resume, write_codex_resume)

DOC = 'This session is being continued from a previous conversation. Summary: DOC-MARK-7731, the user likes tea.'

def sha(p): return hashlib.sha256(p.read_bytes()).hexdigest()
def flat(content): return content if isinstance(content, str) else json.dumps(content)

def test_claude_resume(hosts, tmp_path):
    cl, _ = hosts
    home, cwd = tmp_path/'home', tmp_path/'work'; cwd.mkdir()
    with AnthropicMock([text('first answer')]) as s: assert run_claude(cl, home, cwd, 'first question', s)[0] == 0
    src, = claude_sessions(home); h = sha(src)
    new = write_claude_resume(read_jsonl(src), DOC, src.parent)
    f = src.parent/f'{new}.jsonl'
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    for prompt in ('NEXT-PROMPT-1', 'NEXT-PROMPT-2'):
        with AnthropicMock([text('ok ' + prompt)]) as s:
            rc, out, err = run_claude(cl, home, cwd, prompt, s, '--resume', new)
        assert rc == 0, err
        msgs = s.model_requests()[0]['body']['messages']
        assert msgs[0] == {'role': 'user', 'content': DOC}                     # the document opens the conversation
        users = [i for i, m in enumerate(msgs) if m['role'] == 'user' and prompt in flat(m['content'])]
        assert users and users[-1] > 0                                        # the new prompt comes after it
        assert 'first question' not in json.dumps(msgs)                        # nothing of the source leaks in
    recs = read_jsonl(f)
    assert recs[0]['subtype'] == 'compact_boundary' and recs[1]['isCompactSummary']
    assert {r['sessionId'] for r in recs if 'sessionId' in r} == {new}         # the host appended to the new file
    assert sum(r['type'] == 'assistant' for r in recs) >= 2
    assert sha(src) == h and len(claude_sessions(home)) == 2                   # source untouched, no other file

def test_codex_resume(hosts, tmp_path):
    _, cx = hosts
    home, cwd = tmp_path/'home', tmp_path/'work'; cwd.mkdir()
    with ResponsesMock([text('first answer')]) as s: assert run_codex(cx, home, cwd, 'first question', s)[0] == 0
    src, = codex_rollouts(home); h = sha(src)
    new = write_codex_resume(read_jsonl(src), DOC, codex_home(home))
    f, = [p for p in codex_rollouts(home) if p.name.endswith(f'-{new}.jsonl')]
    for prompt in ('NEXT-PROMPT-1', 'NEXT-PROMPT-2'):
        with ResponsesMock([text('ok ' + prompt)]) as s:
            rc, out, err = run_codex(cx, home, cwd, prompt, s, 'resume', new)
        assert rc == 0, err
        inp = s.model_requests()[0]['body']['input']
        assert inp[0]['role'] == 'user' and inp[0]['content'] == [{'type': 'input_text', 'text': DOC}]
        last_user = [i for i, it in enumerate(inp) if it.get('role') == 'user' and prompt in json.dumps(it)]
        assert last_user and last_user[-1] > 0
        assert 'first question' not in json.dumps(inp)
    recs = read_jsonl(f)
    assert recs[0]['type'] == 'session_meta' and recs[0]['payload']['forked_from_id'] == read_jsonl(src)[0]['payload']['id']
    assert recs[1]['type'] == 'compacted' and len(recs) > 2                    # the host appended to the new file
    assert sha(src) == h and len(codex_rollouts(home)) == 2
