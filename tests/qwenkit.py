"""Test harness for Qwen Code (`@qwen-code/qwen-code`), run offline against a loopback OpenAI-compatible model.

- `install_qwen()` installs the pinned npm package once into the hosts' cache (`hostkit.install_npm`).
- `ChatMock` is a scripted loopback chat-completions server (SSE) that records each request; it answers Qwen's
  compression requests with `snapshot`, using up no scripted reply.
- `qwen_settings` writes the sandbox's `~/.qwen/settings.json` with the offline switches (no usage statistics, no
  telemetry, no managed memory, no update check); `QwenRun` runs one `qwen` process in a sandbox (HOME, XDG_* and
  QWEN_HOME in a temporary folder), headless with one prompt or with several in turn (`--input-format stream-json`).
Facts verified with the real CLI: /work/shared/hosts/qwen.md (shared) and the module `llmsurgery.hosts.qwen`.
"""
import json, os, queue, signal, subprocess, threading, time
from pathlib import Path
from hostkit import MockServer, chat_sse, install_npm, merge_settings, sandbox_env, text, tool

QWEN_PKG, QWEN_VER = '@qwen-code/qwen-code', '0.24.4'
QWEN_BIN = 'node_modules/@qwen-code/qwen-code/cli-entry.js'
MODEL = 'mock-model'
DIRECTIVE = 'First, reason in your <analysis> block. Then, produce the <state_snapshot> XML.'   # every compression request ends so

def install_qwen(cache=None):
    "The path of Qwen Code's `cli-entry.js` (run it with node), installed on first use; RuntimeError if npm can't"
    return install_npm(QWEN_PKG, QWEN_VER, QWEN_BIN, cache)

def shell(command): return tool('run_shell_command', command=command)

# ---------------------------------------------------------------- the model

def request_text(body):
    "All a chat-completions request body says, as one string"
    return json.dumps(body, ensure_ascii=False)

def is_compression(body):
    "Is this request Qwen's summariser (cold: its own system prompt; shared: the history, then the directive)?"
    msgs = (body or {}).get('messages') or []
    last = msgs[-1] if msgs else {}
    c = last.get('content')
    said = c if isinstance(c, str) else ''.join(p.get('text', '') for p in c or [] if isinstance(p, dict))
    return DIRECTIVE in said

class ChatMock(MockServer):
    """OpenAI chat completions: POST /v1/chat/completions (stream) answers from the script. A scripted reply may carry
    `prompt_tokens` (default `prompt_tokens`): Qwen compresses before the next request once that nears its window.
    A compression request gets `snapshot` (`{n}`: which one it is), reporting the last prompt_tokens reported, so that
    Qwen finds the compression beneficial."""
    snapshot = '<analysis>mock</analysis><state_snapshot>MOCK-SNAPSHOT-{n}: the work so far</state_snapshot>'   # n: 1, 2, ...
    prompt_tokens = 1000
    def __init__(self, replies=(), max_seconds=300):
        super().__init__(replies, max_seconds)
        self.last_prompt = self.prompt_tokens
    def is_model(self, r): return r['method'] == 'POST' and r['path'].split('?')[0].endswith('/chat/completions')
    def compressions(self): return [r for r in self.model_requests() if is_compression(r['body'])]
    def turns(self): return [r for r in self.model_requests() if not is_compression(r['body'])]
    def post(self, h, body):
        if not h.path.split('?')[0].endswith('/chat/completions'): return h._send(404, {'error': {'message': 'mock'}})
        if is_compression(body): r, n = text(self.snapshot.format(n=len(self.compressions()))), self.last_prompt
        else:
            r = self.next_reply()
            if 'error' in r: return h._send(r['error'], {'error': {'message': r['message'], 'type': 'invalid_request_error'}})
            n = self.last_prompt = r.get('prompt_tokens', self.prompt_tokens)
        chat_sse(h, r, len(self.model_requests()), n, MODEL)

def api_error(message, status=400): return dict(error=status, message=message)

def reply(r, prompt_tokens):
    "Scripted reply `r` reporting `prompt_tokens` (Qwen compresses before its next request when that is near its window)"
    return r | dict(prompt_tokens=prompt_tokens)

# ---------------------------------------------------------------- the sandbox

def qwen_home(home): return Path(home)/'.qwen'

OFFLINE = {'privacy': {'usageStatisticsEnabled': False}, 'telemetry': {'enabled': False},
           'general': {'enableAutoUpdate': False},
           'memory': {'enableManagedAutoMemory': False, 'enableManagedAutoDream': False, 'enableAutoSkill': False},
           'security': {'auth': {'selectedType': 'openai'}}, 'model': {'name': MODEL}}

def qwen_settings(home, **settings):
    "Merge top-level `settings` into the sandbox's `~/.qwen/settings.json`, made first with the offline settings: its path"
    return merge_settings(qwen_home(home)/'settings.json', OFFLINE, settings)

def qwen_env(home, server=None):
    "Environment for qwen with HOME and QWEN_HOME under `home`, pointed at `server`; writes the offline settings on first use"
    env = sandbox_env(home)
    if not (qwen_home(home)/'settings.json').exists(): qwen_settings(home)
    env.update(QWEN_HOME=str(qwen_home(home)), QWEN_USAGE_STATISTICS_ENABLED='false', QWEN_CODE_SUPPRESS_YOLO_WARNING='1',
               OPENAI_API_KEY='sk-test', OPENAI_MODEL=MODEL)
    if server: env['OPENAI_BASE_URL'] = f'{server.url}/v1'
    return env

def qwen_sessions(home):
    "Every session file of the sandbox's Qwen store"
    return sorted((qwen_home(home)/'projects').glob('*/chats/*.jsonl'))

def _user_line(prompt):
    return json.dumps({'type': 'user', 'message': {'role': 'user', 'content': prompt}}) + '\n'

class QwenRun:
    """One `qwen` process in the sandbox `home`, run in `cwd` against `server` with `args` (say `--yolo`, or
    `--resume ID`): `ask(prompt)` sends one prompt (stream-json) and waits for its result, every wait bounded. Use as a
    context manager: its process group is killed on exit, and `events`, `stderr` hold what it printed."""
    def __init__(self, js, home, cwd, server, *args, timeout=90):
        cmd = ['node', str(js), '--input-format', 'stream-json', '-o', 'stream-json', *map(str, args)]
        self.proc = subprocess.Popen(cmd, env=qwen_env(home, server), cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.events, self.errs, self.lines, self.timeout = [], [], queue.Queue(), timeout
        threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=lambda: self.errs.extend(self.proc.stderr), daemon=True).start()

    @staticmethod
    def _read(f, q):
        for line in f: q.put(line)
        q.put(None)

    @property
    def stderr(self): return ''.join(self.errs)

    def ask(self, prompt):
        "Send `prompt`, and give back the `result` event that ends its turn"
        self.proc.stdin.write(_user_line(prompt)); self.proc.stdin.flush()
        end = time.monotonic() + self.timeout
        while True:
            try: line = self.lines.get(timeout=max(0, end - time.monotonic()))
            except queue.Empty: raise TimeoutError(f'qwen: no result for {prompt!r} in {self.timeout}s\n{self.stderr[-3000:]}')
            if line is None: raise RuntimeError(f'qwen exited before its result for {prompt!r}\n{self.stderr[-3000:]}')
            try: ev = json.loads(line)
            except ValueError: continue
            self.events.append(ev)
            if ev.get('type') == 'result': return ev

    def __enter__(self): return self
    def __exit__(self, *a):
        try:
            self.proc.stdin.close()
            self.proc.wait(15)
        except (subprocess.TimeoutExpired, OSError): pass
        try: os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError: pass
        self.proc.wait(10)

def run_qwen(js, home, cwd, server, *prompts, args=(), timeout=90):
    "Run one `qwen` process that is asked `prompts` in turn: the `result` event of each"
    with QwenRun(js, home, cwd, server, *args, timeout=timeout) as q: return [q.ask(p) for p in prompts]
