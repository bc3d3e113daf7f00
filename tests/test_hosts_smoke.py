"The host harness works: each real client (installed from npm, pinned) talks to its loopback mock and writes a real session"
import json, stat, subprocess
from hostkit import (sandbox_env, AnthropicMock, ResponsesMock, run_claude, run_codex, bash, exec_command, text,
                     claude_sessions, codex_rollouts, read_jsonl, CLAUDE_VER, CODEX_VER)

def test_installed_versions(hosts, tmp_path):
    cl, cx = hosts
    env = sandbox_env(tmp_path)  # even `codex --version` creates $CODEX_HOME/tmp: never let it see the real ~/.codex
    assert CLAUDE_VER in subprocess.run([cl, '--version'], capture_output=True, text=True, timeout=30, env=env).stdout
    assert CODEX_VER in subprocess.run([cx, '--version'], capture_output=True, text=True, timeout=30, env=env).stdout

def _texts(content):
    if isinstance(content, str): return content
    return ' '.join(json.dumps(c) for c in content)

def test_claude_roundtrip(hosts, tmp_path):
    cl, _ = hosts
    home, cwd = tmp_path/'home', tmp_path/'work'; cwd.mkdir()
    with AnthropicMock([bash('echo hostkit-ran-this'), text('All done.')]) as s:
        rc, out, err = run_claude(cl, home, cwd, 'Please run echo', s, '--allowedTools', 'Bash', timeout=60)
    assert rc == 0, err
    assert 'All done.' in out
    reqs = s.model_requests()
    assert len(reqs) == 2 and all(r['body']['stream'] for r in reqs)
    assert 'Please run echo' in _texts(reqs[0]['body']['messages'][0]['content'])
    assert 'hostkit-ran-this' in json.dumps(reqs[1]['body']['messages'])       # the real tool result went back to the model
    f, = claude_sessions(home)
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    recs = read_jsonl(f)
    assert {r['sessionId'] for r in recs if 'sessionId' in r} == {f.stem}
    blocks = [b for r in recs if r['type'] in ('user', 'assistant') and isinstance(r['message']['content'], list)
              for b in r['message']['content']]
    assert any(b['type'] == 'tool_use' and b['name'] == 'Bash' for b in blocks)
    assert any(b['type'] == 'tool_result' and 'hostkit-ran-this' in _texts(b['content']) for b in blocks)

def test_codex_roundtrip(hosts, tmp_path):
    _, cx = hosts
    home, cwd = tmp_path/'home', tmp_path/'work'; cwd.mkdir()
    with ResponsesMock([exec_command('echo hostkit-ran-this'), text('All done.')]) as s:
        rc, out, err = run_codex(cx, home, cwd, 'Please run echo', s, '--dangerously-bypass-approvals-and-sandbox', timeout=60)
    assert rc == 0, err
    assert 'All done.' in out
    reqs = s.model_requests()
    assert len(reqs) == 2 and all(r['body']['stream'] for r in reqs)
    assert 'Please run echo' in json.dumps(reqs[0]['body']['input'][-1])
    outs = [i for i in reqs[1]['body']['input'] if i.get('type') == 'function_call_output']
    assert outs and 'hostkit-ran-this' in json.dumps(outs)                      # the real command output went back
    f, = codex_rollouts(home)
    recs = read_jsonl(f)
    assert recs[0]['type'] == 'session_meta' and recs[0]['payload']['id'] in f.name
    kinds = [r['payload'].get('type') for r in recs if r['type'] == 'response_item']
    assert 'function_call' in kinds and 'function_call_output' in kinds
