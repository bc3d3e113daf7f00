"""llmsurgery's MCP server inside each host, with the real CLIs offline against the loopback mock model: after
`llmsurgery-compact --install-hooks HOST` the host's request lists the four tools under its own names; the mock model
asks for `show`, the host starts the server and calls it, and the next model request carries the tool's result: the
message whole, exactly as `--show` prints it. Uninstalling gives the host's MCP settings back byte for byte while
nothing else changed them, and otherwise takes out our server alone."""
import json, subprocess, sys
from pathlib import Path
import pytest
import hostkit
from hostkit import (AnthropicMock, ResponsesMock, GeminiMock, run_claude, run_codex, run_gemini, codex_env,
                     gemini_env, install_gemini, tool, text, sandbox_env, claude_tool_results)
from llmsurgery.recall import show_session

ROOT = Path(__file__).resolve().parent.parent
LONG = ROOT/'examples'/'claude_long.jsonl'
N = '229'   # a message of 8 KB: whole within every host's tool result
COMPACT = Path(sys.executable).parent/'llmsurgery-compact'
TOOLS = ('search', 'show', 'grep', 'compact')

HOMES = dict(GEMINI_CLI_HOME='', QWEN_HOME='.qwen', COPILOT_HOME='.copilot')   # each host's home, under the sandbox's

def cli(home, *args):
    "Run this installation's `llmsurgery-compact` in the sandbox `home`: (status, stdout, stderr)"
    env = sandbox_env(home) | {k: str(Path(home)/v) for k,v in HOMES.items()}
    p = subprocess.run([str(COMPACT), *args], env=env, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr

def shown(): return show_session(LONG, N).text

def installed(home, host, path, original):
    "Install into `home` with the user's MCP settings `original` at `path`; undone byte for byte, installed again"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(original)
    rc,out,err = cli(home, '--install-hooks', host)
    assert rc==0 and f"llmsurgery's MCP server for" in out and str(path) in out, out+err
    once = path.read_bytes()
    assert cli(home, '--install-hooks', host)[0]==0 and path.read_bytes()==once   # twice is once
    rc,out,err = cli(home, '--uninstall-hooks', host)
    assert rc==0 and path.read_bytes()==original, out+err
    rc,out,err = cli(home, '--install-hooks', host)
    assert rc==0, err
    return out

# ---------------------------------------------------------------- Claude Code

def test_claude_model_gets_a_message_whole_through_show(hosts, tmp_path):
    cl,home,cwd = hosts[0],tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    cj = home/'.claude'/'.claude.json'
    original = json.dumps({'hasCompletedOnboarding': True, 'mcpServers': {}}, indent=2).encode()
    out = installed(home, 'claude', cj, original)
    assert 'mcp__llmsurgery__show' in out
    replies = [tool('mcp__llmsurgery__show', session=str(LONG), n=N), tool('mcp__llmsurgery__compact', max_tokens=2000)]
    with AnthropicMock([*replies, text('done')]) as s:
        rc,o,err = run_claude(cl, home, cwd, 'PROMPT-OMEGA: show me message 229', s, '--allowedTools',
                              'mcp__llmsurgery__show,mcp__llmsurgery__compact')
        reqs = [r['body'] for r in s.model_requests()]
    assert rc==0, err
    doc = claude_tool_results(reqs[2])[-1]   # no session named: the one the agent runs in, its prompt in the document
    assert 'PROMPT-OMEGA: show me message 229' in doc and doc.startswith('This session is being continued'), doc[:300]
    # the host connects its MCP servers beside its first request: the one after the call lists the four tools
    assert {f'mcp__llmsurgery__{t}' for t in TOOLS} <= {t['name'] for t in reqs[-1]['tools']}
    assert claude_tool_results(reqs[1])==[shown()] and len(shown())>8000
    rc,o,err = cli(home, '--uninstall-hooks', 'claude')   # after the host wrote the file again: ours out, the rest kept
    d = json.loads(cj.read_text())
    assert rc==0 and d['hasCompletedOnboarding'] is True and 'llmsurgery' not in d.get('mcpServers', {}), o+err

# ---------------------------------------------------------------- Codex

class ItemsMock(ResponsesMock):
    """The Responses mock, answering a reply `{'item': ITEM}` with that output item as it is; a script that found its
    tool not there yet (Codex starts its MCP servers beside the turn) is sent again, at most 5 times"""
    again = 5
    def post(self, h, body):
        outs = [it for it in (body or {}).get('input', []) if it.get('type')=='custom_tool_call_output']
        late = 'is not a function' in json.dumps(outs[-1:])
        with self.lock:
            if late and self.again and self.sent: item,self.again = self.sent,self.again-1
            else: item = self.replies.pop(0)['item'] if self.replies and 'item' in self.replies[0] else None
            self.sent = item
        if item is None: return super().post(h, body)
        added = dict(type='response.output_item.added', output_index=0, item=item)
        h._sse(hostkit._responses_events(f'resp_mock{len(self.model_requests()):03d}', [added], item))

def exec_js(js): return dict(item=dict(type='custom_tool_call', id='ctc_mock', call_id='call_js', name='exec', input=js))

def outputs_of(body):
    "The texts of each `custom_tool_call_output` of a Responses request body"
    return [o['text'] for it in body['input'] if it.get('type')=='custom_tool_call_output' for o in it['output']]

def test_codex_model_gets_a_message_whole_through_show(hosts, tmp_path):
    """Codex names the tools' namespace `mcp__llmsurgery` to its model, which calls them from its `exec` tool's
    JavaScript, `tools.mcp__llmsurgery__show(...)`: the script's output is the message whole"""
    cx,home,cwd = hosts[1],tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    with ResponsesMock() as s: codex_env(home, s, quick=False)   # code mode, Codex's default, calls MCP tools
    cfg = home/'.codex'/'config.toml'
    original = b'# mine\n' + cfg.read_bytes()
    out = installed(home, 'codex', cfg, original)
    assert 'mcp__llmsurgery__show' in out and '[mcp_servers.llmsurgery]' in cfg.read_text()
    args = json.dumps(dict(session=str(LONG), n=N))
    js = ('await new Promise(r => setTimeout(r, 500));\n'
          'text(ALL_TOOLS.map(t => t.name).filter(n => n.startsWith("mcp__llmsurgery__")).sort().join(" "));\n'
          f'text((await tools.mcp__llmsurgery__show({args})).content[0].text);')
    with ItemsMock([exec_js(js), text('done')]) as s:
        rc,o,err = run_codex(cx, home, cwd, 'show me message 229', s, '--dangerously-bypass-approvals-and-sandbox', quick=False)
        reqs = [r['body'] for r in s.model_requests()]
    assert rc==0, err
    assert '- mcp__llmsurgery: llmsurgery reads the sessions' in json.dumps(reqs[-1]['input'])   # its deferred namespaces
    names,got = outputs_of(reqs[-1])[-2:]
    assert names==' '.join(sorted(f'mcp__llmsurgery__{t}' for t in TOOLS)) and got==shown(), outputs_of(reqs[-1])
    rc,o,err = cli(home, '--uninstall-hooks', 'codex')
    left = cfg.read_text()   # as the test's run left it (it moves `openai_base_url` first): our table out, the rest kept
    assert rc==0 and 'mcp_servers' not in left and '# mine\ncheck_for_update_on_startup = false\n' in left, o+err

# ---------------------------------------------------------------- Gemini CLI

def test_gemini_model_gets_a_message_whole_through_show(tmp_path):
    "One `settings.json` holds Gemini's hooks and servers: both installed, both undone byte for byte"
    js,home,cwd = install_gemini(),tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    with GeminiMock() as s: gemini_env(home, s)   # the offline settings, the user's file
    settings = home/'.gemini'/'settings.json'
    out = installed(home, 'gemini', settings, settings.read_bytes())
    assert 'mcp_llmsurgery_show' in out and '"BeforeAgent"' in settings.read_text()
    with GeminiMock([tool('mcp_llmsurgery_show', session=str(LONG), n=N), text('done')]) as s:
        rc,o,err = run_gemini(js, home, cwd, 'show me message 229', s)
        reqs = [r['body'] for r in s.model_requests()]
    assert rc==0, err
    assert {f'mcp_llmsurgery_{t}' for t in TOOLS} <= {f['name'] for t in reqs[0]['tools'] for f in t['functionDeclarations']}
    got, = [p['functionResponse']['response']['output'] for c in reqs[1]['contents'] for p in c['parts'] if 'functionResponse' in p]
    assert got==f'<untrusted_context>\n{shown()}\n</untrusted_context>'

# ---------------------------------------------------------------- Qwen Code

def test_qwen_model_gets_a_message_whole_through_show(tmp_path):
    """Qwen lists the tools in its system prompt and stamps `$version` into the settings it shares with the hooks:
    after a run the uninstall takes ours out and gives back the user's bytes all the same"""
    from qwenkit import ChatMock, install_qwen, qwen_env, run_qwen
    js,home,cwd = install_qwen(),tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    qwen_env(home)   # the offline settings, the user's file
    settings = home/'.qwen'/'settings.json'
    original = settings.read_bytes()
    out = installed(home, 'qwen', settings, original)
    assert 'mcp__llmsurgery__show' in out
    with ChatMock([tool('mcp__llmsurgery__show', session=str(LONG), n=N), text('done')]) as s:
        run_qwen(js, home, cwd, s, 'show me message 229', args=('--yolo',))
        reqs = [r['body'] for r in s.turns()]
    listed = json.dumps(reqs[0])   # its list of MCP servers' tools, beside its tool search
    assert '#### llmsurgery' in listed and all(f'mcp__llmsurgery__{t}' in listed for t in TOOLS)
    got, = [m['content'] for m in reqs[1]['messages'] if m['role']=='tool']
    assert got==[dict(type='text', text=shown())]
    assert '$version' in settings.read_text()   # Qwen wrote the file since
    rc,o,err = cli(home, '--uninstall-hooks', 'qwen')
    assert rc==0 and settings.read_bytes()==original, o+err

# ---------------------------------------------------------------- GitHub Copilot CLI

def test_copilot_model_gets_a_message_whole_through_show(tmp_path):
    from copilotkit import CopilotMock, install_copilot, run_copilot
    exe,home,cwd = install_copilot(),tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    cfg = home/'.copilot'/'mcp-config.json'
    mine = {'type': 'local', 'command': '/bin/false', 'args': [], 'tools': ['*']}
    original = json.dumps({'mcpServers': {'mine': mine}}, indent=2).encode() + b'\n'
    out = installed(home, 'copilot', cfg, original)
    assert 'llmsurgery-show' in out
    cfg.write_bytes(cfg.read_bytes().replace(b'"/bin/false"', b'"/bin/true"'))   # the user's own server, changed
    with CopilotMock([tool('llmsurgery-show', session=str(LONG), n=N), text('done')]) as s:
        rc,o,err = run_copilot(exe, home, cwd, 'show me message 229', s)
        reqs = [r['body'] for r in s.model_requests()]
    assert rc==0, err
    assert {f'llmsurgery-{t}' for t in TOOLS} <= {t['function']['name'] for t in reqs[0]['tools']}
    got, = [m['content'] for m in reqs[1]['messages'] if m['role']=='tool']
    assert got==shown()
    rc,o,err = cli(home, '--uninstall-hooks', 'copilot')   # changed since: ours out, the user's change kept
    assert rc==0 and json.loads(cfg.read_text())=={'mcpServers': {'mine': mine | {'command': '/bin/true'}}}, o+err

# ---------------------------------------------------------------- opencode

def test_opencode_model_gets_a_message_whole_through_show(tmp_path):
    import ockit
    oc,home,cwd = ockit.install_opencode(),tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    with ockit.ChatMock([tool('llmsurgery_show', session=str(LONG), n=N), text('done')]) as s:
        cfg = ockit.opencode_config(home, s)   # the user's file: the mock as its provider
        out = installed(home, 'opencode', cfg, cfg.read_bytes())
        assert 'llmsurgery_show' in out and json.loads(cfg.read_text())['mcp']['llmsurgery']['enabled'] is True
        rc,o,err = hostkit._run([oc, 'run', 'show', 'me', 'message', '229', '--format', 'json'], ockit.opencode_env(home, cwd),
                                cwd, 90)
        reqs = [r['body'] for r in s.model_requests() if r['body'].get('tools')]
    assert rc==0, err
    assert {f'llmsurgery_{t}' for t in TOOLS} <= {t['function']['name'] for t in reqs[0]['tools']}
    got, = [m['content'] for m in reqs[1]['messages'] if m['role']=='tool']
    assert got==shown()
    before = json.loads(cfg.read_text()); before.pop('mcp')
    rc,o,err = cli(home, '--uninstall-hooks', 'opencode')
    assert rc==0 and json.loads(cfg.read_text())==before, o+err

# ---------------------------------------------------------------- Pi

def test_pi_extension_gives_the_model_the_tools(tmp_path):
    """Pi takes no MCP server: its extension registers the four tools (`llmsurgery_show`, ...), each call one run of
    `python -m llmsurgery.mcp_server --call TOOL`; a refused pattern comes back as the tool's error"""
    import pikit
    js,home,cwd = pikit.install_pi(),tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    rc,out,err = cli(home, '--install-hooks', 'pi')
    assert rc==0 and (pikit.agent_dir(home)/'extensions'/'llmsurgery.ts').is_file(), out+err
    calls = [tool('llmsurgery_show', session=str(LONG), n=N), tool('llmsurgery_grep', session=str(LONG), pattern=r'(a)\1')]
    with pikit.PiMock([*calls, text('done')]) as s:
        rc,o,err = pikit.run_pi(js, home, cwd, 'show me message 229', s)
        reqs = [r['body'] for r in s.main_requests()]
    assert rc==0, err
    assert {f'llmsurgery_{t}' for t in TOOLS} <= {t['function']['name'] for t in reqs[0]['tools']}
    results = [m['content'] for m in reqs[-1]['messages'] if m['role']=='tool']
    text_of = lambda c: c if isinstance(c, str) else ''.join(p.get('text', '') for p in c)
    assert text_of(results[0])==shown()
    assert 'uses syntax only backtracking engines have' in text_of(results[1]), results[1]
