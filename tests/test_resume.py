"""`llmsurgery-compact --resume`, proven with the real clients (installed from npm, pinned; offline against loopback mocks):
the host resumes the NEW session it writes with the document as the model's first user message and none of the bulk it
replaced; the host appends to that session; compacting it again keeps the earlier document verbatim; the original
session is byte-identical throughout. Where npm cannot install the clients the tests fail (`install_hosts` raises)."""
import json, stat
from pathlib import Path
from hostkit import (sha, compact_in, AnthropicMock, ResponsesMock, run_claude, run_codex, bash, exec_command,
                     text, claude_sessions, codex_rollouts, read_jsonl)
from llmsurgery.sessions import read_session
from llmsurgery.document import compact_body

DATA = Path(__file__).parent/'data'
MARK = 'MID-MARK-7093'   # printed in the middle of a 16 KB tool result; the command that prints it does not hold it whole
BULK = "python3 -c \"print('a ' * 4000 + 'MID' + '-MARK-7093 ' + 'b ' * 4000)\""
ECHOES = ['echo two', 'echo three', 'echo four']   # later calls, so the bulk result is not among the last messages kept whole



def resumed(home, cwd, *args, cmd):
    "Compact with `--resume`: the new session's id (from stdout's last line, `cmd ID`) and its document"
    rc, out, err = compact_in(home, cwd, '--resume', *args)
    assert rc == 0, err
    assert out.splitlines()[-1].startswith(cmd + ' '), out
    new = out.split()[-1]
    return new, err

def user_text(m): return m['content'] if isinstance(m['content'], str) else ' '.join(b.get('text', '') for b in m['content'])

def test_claude_resume(hosts, tmp_path):
    cl, _ = hosts
    home, work = tmp_path/'home', tmp_path/'work'; work.mkdir()
    with AnthropicMock([bash(BULK, 'bulk'), *map(bash, ECHOES), text('All four ran.')]) as s:
        rc, _, err = run_claude(cl, home, work, 'Run the bulk command, then three echoes.', s, '--allowedTools', 'Bash')
    assert rc == 0, err
    src, = claude_sessions(home)
    assert MARK in src.read_text()
    h = sha(src)
    new, err = resumed(home, work, cmd='claude --resume')
    f = src.parent/f'{new}.jsonl'
    assert f'wrote {f}' in err and stat.S_IMODE(f.stat().st_mode) == 0o600
    doc = read_session(f).summary
    assert doc and MARK not in doc and 'echo four' in doc
    recs = read_jsonl(f)
    assert [r['type'] for r in recs] == ['system', 'user'] and recs[0]['subtype'] == 'compact_boundary'
    assert recs[1]['isCompactSummary'] and recs[0]['compactMetadata']['preTokens'] > 0
    assert recs[1]['cwd'] == str(work.resolve()) and recs[1]['version'] == '2.1.328' and 'gitBranch' in recs[1]
    # the host resumes it: the document is the first user message, the bulk is gone, the prompt arrives, the reply is appended
    with AnthropicMock([text('REPLY-AFTER-RESUME')]) as s:
        rc, out, err = run_claude(cl, home, work, 'PROMPT-AFTER-RESUME', s, '--resume', new)
    assert rc == 0 and 'REPLY-AFTER-RESUME' in out, err
    body = s.model_requests()[0]['body']
    assert body['messages'][0] == {'role': 'user', 'content': doc}
    assert MARK not in json.dumps(body) and 'Run the bulk command' not in json.dumps(body['messages'][1:])
    assert 'PROMPT-AFTER-RESUME' in user_text([m for m in body['messages'] if m['role'] == 'user'][-1])
    assert 'REPLY-AFTER-RESUME' in f.read_text()
    # compacting the continuation again keeps its document's body verbatim and adds what followed
    h_new = sha(f)
    new2, err = resumed(home, work, new[:8], cmd='claude --resume')
    assert "kept the earlier document's body verbatim" in err
    doc2 = read_session(src.parent/f'{new2}.jsonl').summary
    assert compact_body(doc) in doc2 and doc2.count('## Conversation') == 1
    assert 'PROMPT-AFTER-RESUME' in doc2 and 'REPLY-AFTER-RESUME' in doc2
    with AnthropicMock([text('SECOND-REPLY')]) as s:
        rc, out, err = run_claude(cl, home, work, 'SECOND-PROMPT', s, '--resume', new2)
    assert rc == 0 and s.model_requests()[0]['body']['messages'][0] == {'role': 'user', 'content': doc2}, err
    assert sha(src) == h and sha(f) == h_new                                  # both sources only read
    # the measure of what was saved: the host resuming the original (forked, so it stays untouched) sends the bulk
    with AnthropicMock([text('ok')]) as s:
        rc, _, err = run_claude(cl, home, work, 'PROMPT-AFTER-RESUME', s, '--resume', src.stem, '--fork-session')
    assert rc == 0 and MARK in json.dumps(s.model_requests()[0]['body']), err
    assert sha(src) == h

def test_codex_resume(hosts, tmp_path):
    _, cx = hosts
    home, work = tmp_path/'home', tmp_path/'work'; work.mkdir()
    script = [exec_command(BULK), *map(exec_command, ECHOES), text('All four ran.')]
    with ResponsesMock(script) as s:
        rc, _, err = run_codex(cx, home, work, 'Run the bulk command, then three echoes.', s, '--dangerously-bypass-approvals-and-sandbox')
    assert rc == 0, err
    src, = codex_rollouts(home)
    assert MARK in src.read_text()
    h, src_id = sha(src), read_jsonl(src)[0]['payload']['id']
    new, err = resumed(home, work, src_id[:13], cmd='codex resume')       # given by a prefix of its thread id
    f, = [p for p in codex_rollouts(home) if p.name.endswith(f'-{new}.jsonl')]
    assert f'wrote {f}' in err and stat.S_IMODE(f.stat().st_mode) == 0o600   # Codex writes 0644; ours holds a session
    doc = read_session(f).summary
    assert doc and MARK not in doc and 'echo four' in doc
    meta = read_jsonl(f)[0]['payload']
    assert (meta['id'], meta['forked_from_id'], meta['cwd'], meta['model_provider']) == (new, src_id, str(work.resolve()), 'openai')
    with ResponsesMock([text('REPLY-AFTER-RESUME')]) as s:
        rc, out, err = run_codex(cx, home, work, 'PROMPT-AFTER-RESUME', s, 'resume', new)
    assert rc == 0 and 'REPLY-AFTER-RESUME' in out, err
    inp = s.model_requests()[0]['body']['input']
    first = {k: inp[0].get(k) for k in ('type', 'role', 'content')}   # codex adds a metadata key of its own
    assert first == {'type': 'message', 'role': 'user', 'content': [{'type': 'input_text', 'text': doc}]}
    assert not [i for i in inp if i.get('type') in ('function_call', 'function_call_output')]   # none of the replaced items
    assert MARK not in json.dumps(inp) and 'PROMPT-AFTER-RESUME' in json.dumps(inp[-1])
    assert 'REPLY-AFTER-RESUME' in f.read_text()
    h_new = sha(f)
    new2, err = resumed(home, work, '--host', 'codex', cmd='codex resume')   # the newest Codex thread of this directory
    assert "kept the earlier document's body verbatim" in err
    f2, = [p for p in codex_rollouts(home) if p.name.endswith(f'-{new2}.jsonl')]
    doc2 = read_session(f2).summary
    assert compact_body(doc) in doc2 and doc2.count('## Conversation') == 1
    assert 'PROMPT-AFTER-RESUME' in doc2 and 'REPLY-AFTER-RESUME' in doc2
    assert read_jsonl(f2)[0]['payload']['forked_from_id'] == new
    with ResponsesMock([text('SECOND-REPLY')]) as s:
        rc, out, err = run_codex(cx, home, work, 'SECOND-PROMPT', s, 'resume', new2)
    assert rc == 0 and s.model_requests()[0]['body']['input'][0]['content'][0]['text'] == doc2, err
    assert sha(src) == h and sha(f) == h_new

def test_nothing_to_continue_from_writes_nothing(tmp_path):
    "A session with no message (a Pi header alone): --resume is refused in one line, and no session is written"
    home, work = tmp_path/'home', tmp_path/'work'; work.mkdir()
    (f := tmp_path/'header.jsonl').write_text(open(DATA/'genuine'/'pi'/'pi_work.jsonl').readline())
    rc, out, err = compact_in(home, work, f, '--resume', '--to', 'claude')
    assert (rc, out) == (2, '') and err.strip().endswith('no message to continue from; no session written'), err
    assert not (home/'.claude').exists()

def test_a_continuation_moved_here_says_so(tmp_path):
    "A session that ran in a folder this machine lacks continues here, and one line says where"
    home, work = tmp_path/'home', tmp_path/'work'; work.mkdir()
    rc, out, err = compact_in(home, work, DATA/'claude-real'/'short.jsonl', '--to', 'codex')
    ran = read_session(DATA/'claude-real'/'short.jsonl').cwd
    assert rc == 0 and f'note: {ran}, where the session ran, is no folder here: the continuation runs in {work.resolve()}' in err
    (there := tmp_path/'there.jsonl').write_text((DATA/'claude-real'/'short.jsonl').read_text().replace(ran, str(work)))
    rc, out, err = compact_in(home, work, there, '--to', 'codex')   # where it ran is here: nothing to say
    assert rc == 0 and 'note:' not in err, err
