"""Test harness for the Cline CLI (npm `cline`), run offline against a loopback OpenAI-compatible model.

- `install_cline()` installs the pinned npm package once into the hosts' cache (`hostkit.install_npm`).
- `ChatMock` is a scripted loopback chat-completions server (SSE) that records each request; it answers Cline's
  compaction requests (its summariser's own system prompt, no tools) with `summary`, using up no scripted reply.
- `cline_env` is a sandbox (HOME, XDG_* in a temporary folder) with the offline switches: no telemetry, no feature
  flags, no update, sessions run in the CLI's own process (no hub daemon); `cline_auth` points it at a mock;
  `run_cline` runs one headless turn (`--json`); `cline_tui` the interactive TUI (`cline --id ID` resumes).
Facts verified with the real CLI: /work/shared/hosts/cline.md (shared) and the module `llmsurgery.hosts.cline`.
"""
import json, subprocess, time
from pathlib import Path
from hostkit import MockServer, chat_sse, install_npm, sandbox_env, text, tool

CLINE_PKG, CLINE_VER = 'cline', '3.0.65'
CLINE_BIN = 'node_modules/.bin/cline'
MODEL = 'mock-model'
SUMMARISER = 'Summarize the provided coding session'   # how the system prompt of each compaction request opens

def install_cline(cache=None):
    "The path of the `cline` command, installed on first use; RuntimeError if npm can't"
    return install_npm(CLINE_PKG, CLINE_VER, CLINE_BIN, cache)

def run(command): return tool('run_commands', commands=[command])

def is_compaction(body): return SUMMARISER in json.dumps((body or {}).get('messages', [{}])[:1])

class ChatMock(MockServer):
    """OpenAI chat completions: POST /v1/chat/completions (stream) answers from the script. A scripted reply may carry
    `prompt_tokens` (default 1000): Cline compacts before its next request once that nears its context window. A
    compaction request gets `summary` (`{n}`: which one it is)."""
    summary = '## Goal\nMOCK-SUMMARY-{n}: the work so far'
    def is_model(self, r): return r['method'] == 'POST' and r['path'].split('?')[0].endswith('/chat/completions')
    def compactions(self): return [r for r in self.model_requests() if is_compaction(r['body'])]
    def turns(self): return [r for r in self.model_requests() if not is_compaction(r['body'])]
    def post(self, h, body):
        if not h.path.split('?')[0].endswith('/chat/completions'): return h._send(404, {'error': {'message': 'mock'}})
        r = text(self.summary.format(n=len(self.compactions()))) if is_compaction(body) else self.next_reply()
        chat_sse(h, r, len(self.model_requests()), r.get('prompt_tokens', 1000), MODEL)

def reply(r, prompt_tokens): return r | dict(prompt_tokens=prompt_tokens)

def cline_data(home): return Path(home)/'.cline'/'data'

def _write(p, d, mode=0o600):
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(d, indent=2)); p.chmod(mode)

def cline_auth(home, server, context_window=None):
    "Point the sandbox's Cline at `server` (providers.json), with `context_window` tokens if given"
    s = dict(provider='openai-compatible', apiKey='dummy', model=MODEL, baseUrl=f'{server.url}/v1')
    if context_window: s['contextWindow'] = context_window
    _write(cline_data(home)/'settings'/'providers.json', dict(version=1, lastUsedProvider='openai-compatible', modes={},
           providers={'openai-compatible': dict(settings=s, updatedAt='2026-12-05T00:00:00.000Z', tokenSource='manual')}))

def cline_env(home):
    "Environment for cline with HOME under `home`, offline: no telemetry, feature flags, update or hub daemon"
    env = sandbox_env(home)
    g = cline_data(home)/'settings'/'global-settings.json'
    if not g.exists(): _write(g, dict(telemetryOptOut=True, autoUpdateEnabled=False))
    env.update(CLINE_NO_AUTO_UPDATE='1', CLINE_SESSION_BACKEND_MODE='local', E2E_TEST='true', IS_TEST='true')
    env.pop('CLINE_DIR', None); env.pop('CLINE_DATA_DIR', None)
    return env

def cline_sessions(home):
    "The transcripts (`<id>.messages.json`) of every session of the sandbox's Cline store"
    return sorted((cline_data(home)/'sessions').glob('*/*.messages.json'))

def run_cline(exe, home, cwd, prompt, *args, timeout=90):
    "One headless `cline --json PROMPT` turn: (returncode, stdout, stderr)"
    p = subprocess.run([str(exe), '--json', *map(str, args), prompt], env=cline_env(home), cwd=cwd, capture_output=True,
                       text=True, timeout=timeout, stdin=subprocess.DEVNULL, start_new_session=True)
    return p.returncode, p.stdout, p.stderr

def cline_tui(exe, home, cwd, *args):
    """The interactive TUI in the sandbox `home` (its own data dir given, so that no hub daemon starts), started and past
    its first screens; a `tui.Tui` to use as a context manager"""
    from tui import Tui, KEYS
    t = Tui([exe, '--data-dir', cline_data(home), *map(str, args)], cline_env(home), cwd).start()
    try:
        t.wait_for('Auto-approve', timeout=60)
        time.sleep(3)   # a notice of Cline's paid plan may show over the prompt at first: any key closes it
        if 'ClinePass' in t.screen():
            t.send(KEYS['esc'])
            t.wait_for('ClinePass', gone=True, timeout=20)
    except BaseException:
        t.stop()
        raise
    return t
