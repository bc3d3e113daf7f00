"""Test harness for the real host CLIs (Claude Code, Codex), run offline against loopback model servers.

- `install_hosts()` installs the pinned npm packages once into a cache folder outside the repository.
- `AnthropicMock` / `ResponsesMock` are scripted loopback model servers (SSE), recording each request body.
- `run_claude` / `run_codex` run one non-interactive turn with a sandboxed HOME / CLAUDE_CONFIG_DIR / CODEX_HOME.
- `write_claude_resume` / `write_codex_resume` are prototype writers of a compacted session the host resumes
  (see tests/HOSTFACTS.md for the verified record formats).
- Hooks: `write_recorder` (a trivial hook script that records what it gets), `hook_group`, `claude_hooks`,
  `codex_hooks`, `hook_calls`; the hosts' own compaction: `compact_claude` (`claude -p --resume ID "/compact ..."`),
  `compact_codex` (app-server `thread/compact/start`); Codex's hook trust: `codex_hooks_list`, `trust_codex_hooks`.
- `compact_in` runs `llmsurgery-compact` with both stores under a sandboxed home; `one_turn` has a real client write a
  one-turn session; `sha` of a file.
- The TUIs under a pseudo-terminal live in tests/tui.py (`claude_tui` / `codex_tui`).
"""
import hashlib, json, os, queue, shlex, shutil, signal, subprocess, sys, tempfile, threading, time, uuid
from datetime import datetime, timezone
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
from pathlib import Path

CLAUDE_PKG, CLAUDE_VER = '@anthropic-ai/claude-code', '2.1.328'
CODEX_PKG, CODEX_VER = '@openai/codex', '0.169.0'
CLAUDE_BIN = 'node_modules/@anthropic-ai/claude-code/bin/claude.exe'
CODEX_BIN = 'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex'

# ---------------------------------------------------------------- install

def hosts_cache():
    "Folder holding one npm install per `<pkg>@<version>` (outside the repository)"
    if d := os.environ.get('LLMSURGERY_HOSTS_CACHE'): return Path(d)
    return Path(os.environ.get('XDG_CACHE_HOME') or Path.home()/'.cache')/'llmsurgery'/'hosts'

def _npm_install(folder, pkg, ver, timeout):
    "Run `npm install pkg@ver` in `folder`; RuntimeError (never a skip) when npm is missing or the registry unreachable"
    if not shutil.which('npm'): raise RuntimeError(f'npm not found on PATH: needed to install {pkg}@{ver}')
    cmd = ['npm', 'install', '--no-audit', '--no-fund', '--no-save', '--fetch-retries=2',
           '--fetch-retry-mintimeout=2000', '--fetch-retry-maxtimeout=10000', f'{pkg}@{ver}']
    xdg = Path(folder)/'.xdg'   # a package's install script (opencode's) makes its folders here, not in the real HOME's
    env = dict(os.environ, **{f'XDG_{k}_HOME': str(xdg/k.lower()) for k in ('CONFIG', 'DATA', 'STATE', 'CACHE')})
    try: r = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env)
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f'npm install {pkg}@{ver} timed out after {timeout}s (is the npm registry reachable?)') from e
    if r.returncode:
        raise RuntimeError(f'npm install {pkg}@{ver} failed (rc={r.returncode}): cannot install the host CLI these tests '
                           f'need; is the npm registry reachable? (install once with network, or set '
                           f'LLMSURGERY_HOSTS_CACHE to a folder holding the installs)\n{r.stderr[-3000:]}')

def install_npm(pkg, ver, rel_bin, cache=None, timeout=600):
    "Path of `rel_bin` in an npm install of `pkg@ver`, installed once (atomically: temp dir then rename)"
    cache = Path(cache or hosts_cache())
    dest = cache/f'{pkg.replace("/", "+")}@{ver}'
    if (dest/rel_bin).is_file(): return dest/rel_bin
    cache.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix='.tmp-install-', dir=cache))
    try:
        (tmp/'package.json').write_text('{"private": true}\n')
        _npm_install(tmp, pkg, ver, timeout)
        if not (tmp/rel_bin).is_file(): raise RuntimeError(f'npm installed {pkg}@{ver} but {rel_bin} is missing')
        tmp.chmod(0o755)
        try: tmp.rename(dest)
        except OSError:  # another process won the race
            if not (dest/rel_bin).is_file(): raise
    finally:
        if tmp.exists(): shutil.rmtree(tmp, ignore_errors=True)
    return dest/rel_bin

def install_hosts(cache=None):
    "(claude binary, codex binary), installing the pinned versions on first use; RuntimeError if npm can't"
    return (install_npm(CLAUDE_PKG, CLAUDE_VER, CLAUDE_BIN, cache), install_npm(CODEX_PKG, CODEX_VER, CODEX_BIN, cache))

# ---------------------------------------------------------------- scripted replies

def text(s): return {'text': s}
def tool(name, **args): return {'tool': name, 'args': args}
def bash(command, description='Run a command'): return tool('Bash', command=command, description=description)
def exec_command(cmd, **args): return tool('exec_command', cmd=cmd, **args)
def summary(s):
    "A reply to Claude Code's compaction request: with `<summary>` tags it makes one request (else it asks again)"
    return text(f'<analysis>mock analysis</analysis>\n<summary>{s}</summary>')

# ---------------------------------------------------------------- mock servers

class _Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *a): pass
    def _body(self):
        n = int(self.headers.get('content-length') or 0)
        raw = self.rfile.read(n) if n else b''
        try: body = json.loads(raw) if raw else None
        except ValueError: body = raw.decode('utf-8', 'replace')
        self.server.mock._log(self.command, self.path, dict(self.headers), body)
        return body
    def _send(self, code, body=b'', ctype='application/json'):
        if isinstance(body, (dict, list)): body = json.dumps(body).encode()
        self.send_response(code)
        self.send_header('content-type', ctype); self.send_header('content-length', str(len(body))); self.end_headers()
        if self.command != 'HEAD': self.wfile.write(body)
    def _sse(self, events):
        self.close_connection = True
        self.send_response(200)
        self.send_header('content-type', 'text/event-stream'); self.send_header('cache-control', 'no-cache')
        self.send_header('connection', 'close'); self.end_headers()
        for ev in events:
            self.wfile.write(f'event: {ev["type"]}\ndata: {json.dumps(ev)}\n\n'.encode())
            self.wfile.flush()
    def do_HEAD(self): self._body(); self._send(200)
    def do_GET(self): self.server.mock.get(self, self._body())
    def do_POST(self): self.server.mock.post(self, self._body())

class _Server(ThreadingHTTPServer):
    daemon_threads = True
    def handle_error(self, request, client_address): pass  # a client dropping its connection is not our business

class MockServer:
    "Loopback model server on a thread (127.0.0.1, port 0) answering model calls with scripted `replies` in order"
    default = 'ok'
    def __init__(self, replies=(), max_seconds=300):
        self.replies, self.requests, self.max_seconds = list(replies), [], max_seconds
        self.lock = threading.Lock()
    def _log(self, method, path, headers, body):
        with self.lock: self.requests.append(dict(method=method, path=path, headers=headers, body=body, t=time.time()))
    def next_reply(self):
        with self.lock: return self.replies.pop(0) if self.replies else text(self.default)
    def model_requests(self): return [r for r in self.requests if self.is_model(r)]
    def get(self, h, body): h._send(404, {'error': {'type': 'not_found', 'message': 'mock'}})
    def __enter__(self):
        self.httpd = _Server(('127.0.0.1', 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.mock = self
        self.port = self.httpd.server_address[1]
        self.url = f'http://127.0.0.1:{self.port}'
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs=dict(poll_interval=0.05), daemon=True)
        self.thread.start()
        self.timer = threading.Timer(self.max_seconds, self.httpd.shutdown)  # bounded lifetime
        self.timer.daemon = True; self.timer.start()
        return self
    def __exit__(self, *a):
        self.timer.cancel(); self.httpd.shutdown(); self.httpd.server_close(); self.thread.join(5)

class AnthropicMock(MockServer):
    "Anthropic Messages API: POST /v1/messages (stream) answers from the script; count_tokens and probes harmlessly"
    def is_model(self, r): return r['method'] == 'POST' and r['path'].split('?')[0] == '/v1/messages'
    def post(self, h, body):
        p = h.path.split('?')[0]
        if p == '/v1/messages/count_tokens': return h._send(200, {'input_tokens': 100})
        if p != '/v1/messages': return h._send(404, {'type': 'error', 'error': {'type': 'not_found_error', 'message': p}})
        r = self.next_reply()
        n = len(self.model_requests())
        msg = {'id': f'msg_mock{n:03d}', 'type': 'message', 'role': 'assistant', 'model': (body or {}).get('model', 'mock'),
               'content': [], 'stop_reason': None, 'stop_sequence': None, 'usage': {'input_tokens': 100, 'output_tokens': 1}}
        evs = [dict(type='message_start', message=msg)]
        if 'tool' in r:
            blk = {'type': 'tool_use', 'id': f'toolu_mock{n:03d}', 'name': r['tool'], 'input': {}}
            delta = {'type': 'input_json_delta', 'partial_json': json.dumps(r['args'])}
            stop = 'tool_use'
        else:
            blk, delta, stop = {'type': 'text', 'text': ''}, {'type': 'text_delta', 'text': r['text']}, 'end_turn'
        evs += [dict(type='content_block_start', index=0, content_block=blk),
                dict(type='content_block_delta', index=0, delta=delta),
                dict(type='content_block_stop', index=0),
                dict(type='message_delta', delta={'stop_reason': stop, 'stop_sequence': None}, usage={'output_tokens': 10}),
                dict(type='message_stop')]
        if 'stream' in (body or {}) and not body['stream']:  # non-streaming call: one JSON message
            return h._send(200, {**msg, 'content': [{**blk, 'input': r['args']} if 'tool' in r else {'type': 'text', 'text': r['text']}],
                                 'stop_reason': stop})
        h._sse(evs)

def _usage(): return {'input_tokens': 100, 'input_tokens_details': {'cached_tokens': 0}, 'output_tokens': 10,
                     'output_tokens_details': {'reasoning_tokens': 0}, 'total_tokens': 110}

def _responses_events(rid, evs, item):
    "The SSE events of one Responses API reply whose single output is `item` (`evs`: the events that build it)"
    created = {'id': rid, 'object': 'response', 'status': 'in_progress', 'output': []}
    completed = {'id': rid, 'object': 'response', 'status': 'completed', 'output': [item], 'usage': _usage()}
    return [dict(type='response.created', response=created), *evs,
            dict(type='response.output_item.done', output_index=0, item=item),
            dict(type='response.completed', response=completed)]

def is_compaction(body):
    "Is this Responses request Codex's remote compaction (its `input` ends with a `compaction_trigger` item)?"
    inp = (body or {}).get('input') or [{}]
    return isinstance(inp[-1], dict) and inp[-1].get('type') == 'compaction_trigger'

class ResponsesMock(MockServer):
    """OpenAI Responses API: POST /v1/responses (stream) answers from the script; websocket upgrades are refused at
    once. A remote compaction request (`is_compaction`) is answered with one `compaction` item carrying
    `compaction_text` (it does not use up a scripted reply)."""
    compaction_text = 'MOCK-COMPACTION-SUMMARY'
    def is_model(self, r): return r['method'] == 'POST' and r['path'].split('?')[0].endswith('/responses')
    def get(self, h, body):
        if h.headers.get('upgrade', '').lower() == 'websocket':
            # 426 makes codex 0.169 fall back to HTTP at once (404/401/403/5xx/a reset: 5 retries, ~6 s; 400: fails the turn)
            return h._send(426, {'error': {'type': 'upgrade_required', 'message': 'no websocket in this mock'}})
        h._send(404, {'error': {'type': 'not_found', 'message': 'mock'}})
    def post(self, h, body):
        if not h.path.split('?')[0].endswith('/responses'): return h._send(404, {'error': {'message': 'mock'}})
        n = len(self.model_requests())
        rid = f'resp_mock{n:03d}'
        if is_compaction(body):
            item = {'type': 'compaction', 'id': f'cmp_mock{n:03d}', 'encrypted_content': self.compaction_text}
            added = dict(type='response.output_item.added', output_index=0, item=item)
            return h._sse(_responses_events(rid, [added], item))
        r = self.next_reply()
        if 'tool' in r:
            item = {'type': 'function_call', 'id': f'fc_mock{n:03d}', 'call_id': f'call_mock{n:03d}', 'name': r['tool'],
                    'arguments': json.dumps(r['args'])}
            evs = [dict(type='response.output_item.added', output_index=0, item=item)]
        else:
            iid = f'msg_mock{n:03d}'
            item = {'type': 'message', 'id': iid, 'role': 'assistant', 'status': 'completed',
                    'content': [{'type': 'output_text', 'text': r['text'], 'annotations': []}]}
            evs = [dict(type='response.output_item.added', output_index=0, item={**item, 'content': [], 'status': 'in_progress'}),
                   dict(type='response.output_text.delta', item_id=iid, output_index=0, content_index=0, delta=r['text'])]
        h._sse(_responses_events(rid, evs, item))

# ---------------------------------------------------------------- running the hosts

def sandbox_env(home):
    "A minimal environment whose HOME, CLAUDE_CONFIG_DIR and CODEX_HOME all sit under `home` (never the real ones)"
    home = Path(home)
    env = {k: v for k, v in os.environ.items()
           if k in ('PATH', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'USER', 'LOGNAME', 'SHELL')}
    env.setdefault('PATH', '/usr/local/bin:/usr/bin:/bin')
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home/'.config'), XDG_CACHE_HOME=str(home/'.cache'),
               XDG_DATA_HOME=str(home/'.local/share'), XDG_STATE_HOME=str(home/'.local/state'),
               NO_COLOR='1', NO_PROXY='127.0.0.1,localhost', no_proxy='127.0.0.1,localhost',
               CLAUDE_CONFIG_DIR=str(home/'.claude'), CODEX_HOME=str(home/'.codex'))
    return env

def claude_env(home, server):
    env = sandbox_env(home)
    env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY='sk-ant-test',
               CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC='1', DISABLE_AUTOUPDATER='1', DISABLE_TELEMETRY='1',
               DISABLE_ERROR_REPORTING='1', CLAUDE_CODE_ENABLE_TELEMETRY='0')
    return env

def codex_home(home): return Path(home)/'.codex'

# A short system prompt and fewer optional features keep rollouts small (~50 KB instead of ~100 KB for one turn)
CODEX_QUICK = '''model_instructions_file = "{instr}"
[features]
code_mode_host = false
apps = false
plugins = false
image_generation = false
browser_use = false
computer_use = false
goals = false
[agents]
enabled = false
[skills]
include_instructions = false
'''

def codex_env(home, server, quick=True):
    "Environment for codex with CODEX_HOME under `home`; writes its config.toml on first use"
    env = sandbox_env(home)
    ch = codex_home(home); ch.mkdir(parents=True, exist_ok=True)
    cfg = ch/'config.toml'
    if not cfg.exists():
        txt = f'openai_base_url = "{server.url}/v1"\ncheck_for_update_on_startup = false\n'
        if quick:
            (ch/'instructions.md').write_text('You are a test assistant.\n')
            txt += CODEX_QUICK.format(instr=ch/'instructions.md')
        cfg.write_text(txt + '[analytics]\nenabled = false\n[feedback]\nenabled = false\n')
    env.update(OPENAI_API_KEY='sk-test', CODEX_API_KEY='sk-test', RUST_LOG='error')
    return env

def set_codex_server(home, server):
    "Point an existing CODEX_HOME's config.toml at a (new) mock server"
    cfg = codex_home(home)/'config.toml'
    if cfg.exists():
        lines = [l for l in cfg.read_text().splitlines() if not l.startswith('openai_base_url')]
        cfg.write_text(f'openai_base_url = "{server.url}/v1"\n' + '\n'.join(lines) + '\n')

def _run(cmd, env, cwd, timeout):
    "Run `cmd` in its own process group; on timeout kill the whole group (tools the host started included)"
    p = subprocess.Popen([str(c) for c in cmd], env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate(timeout=10)
        return -9, out, err + f'\n[hostkit] timed out after {timeout}s'

# Small system prompt and only the Bash tool keep the session files small (and the requests readable)
CLAUDE_QUICK = ('--tools', 'Bash', '--system-prompt', 'You are a test assistant.', '--disable-slash-commands')

def run_claude(bin, home, cwd, prompt, server, *extra_args, timeout=60, quick=True):
    "Run `claude -p PROMPT [extra_args]` offline in `cwd` against `server`: (returncode, stdout, stderr)"
    cmd = [bin, '-p', prompt, *(CLAUDE_QUICK if quick else ()), *extra_args]
    return _run(cmd, claude_env(home, server), cwd, timeout)

def run_codex(bin, home, cwd, prompt, server, *extra_args, timeout=60, quick=True):
    """Run `codex exec --skip-git-repo-check [extra_args] PROMPT` offline in `cwd` against `server`.
    For a resume pass `'resume', ID` as extra_args (they go before the prompt); to run tools without asking,
    `'--dangerously-bypass-approvals-and-sandbox'`."""
    env = codex_env(home, server, quick); set_codex_server(home, server)
    cmd = [bin, 'exec', '--skip-git-repo-check', *extra_args, prompt]
    return _run(cmd, env, cwd, timeout)

# ---------------------------------------------------------------- stores

def claude_sessions(home):
    "All session files under `home`'s Claude store"
    return sorted((Path(home)/'.claude'/'projects').glob('*/*.jsonl'))

def codex_rollouts(home):
    return sorted((codex_home(home)/'sessions').glob('*/*/*/rollout-*.jsonl'))

def read_jsonl(p): return [json.loads(l) for l in Path(p).read_text().splitlines() if l.strip()]

# ---------------------------------------------------------------- prototype writers of a compacted copy that the host resumes
# Verified against claude 2.1.328 and codex 0.169.0 (tests/HOSTFACTS.md). The source transcript is only read.

def _now_iso(): return datetime.now(timezone.utc).isoformat(timespec='milliseconds').replace('+00:00', 'Z')

def _write_new(path, records, mode):
    "Create `path` holding `records` as JSON lines; never overwrites (temp file, then a hard link that fails if it exists)"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f'.{path.name}.{uuid.uuid4().hex}.tmp')
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, 'w', encoding='utf-8') as f:
            f.write(''.join(json.dumps(r, ensure_ascii=False) + '\n' for r in records))
            f.flush(); os.fsync(f.fileno())
        os.link(tmp, path)
    finally: os.unlink(tmp)
    return path

def claude_src_meta(records):
    "What a compacted copy takes from a Claude Code session's records: cwd, version, gitBranch, slug and the leaf uuid"
    m = {}
    for r in records:
        if r.get('isSidechain'): continue
        for k in ('cwd', 'version', 'gitBranch', 'slug', 'sessionId'):
            if r.get(k) is not None: m[k] = r[k]
        if r.get('uuid') and r.get('type') in ('user', 'assistant', 'system', 'attachment', 'progress'): m['leafUuid'] = r['uuid']
    return m

def write_claude_resume(src_records_meta, doc, project_dir, pre_tokens=0, trigger='manual'):
    """Write `<project_dir>/<new-id>.jsonl` = a `compact_boundary` + an `isCompactSummary` user record carrying `doc`;
    returns the new session id. `project_dir` must be the project folder of the cwd `claude --resume` runs in
    (the source file's folder). `src_records_meta`: the source's records, or `claude_src_meta(records)`."""
    m = claude_src_meta(src_records_meta) if isinstance(src_records_meta, list) else dict(src_records_meta)
    new, ub, us = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    common = dict(isSidechain=False, userType='external', cwd=m.get('cwd', ''), sessionId=new,
                  version=m.get('version', CLAUDE_VER), gitBranch=m.get('gitBranch', ''))
    if m.get('slug'): common['slug'] = m['slug']
    boundary = dict(parentUuid=None, logicalParentUuid=m.get('leafUuid'), **common, type='system', subtype='compact_boundary',
                    content='Conversation compacted', isMeta=False, timestamp=_now_iso(), uuid=ub, level='info',
                    compactMetadata=dict(trigger=trigger, preTokens=pre_tokens))
    summary = dict(parentUuid=ub, **common, type='user', message=dict(role='user', content=doc), isVisibleInTranscriptOnly=True,
                   isCompactSummary=True, uuid=us, timestamp=_now_iso())
    _write_new(Path(project_dir)/f'{new}.jsonl', [boundary, summary], 0o600)
    return new

def uuid7():
    "A time-ordered UUID (version 7), the kind codex uses for thread ids"
    ms = time.time_ns() // 1_000_000
    b = bytearray(ms.to_bytes(6, 'big') + os.urandom(10))
    b[6] = 0x70 | (b[6] & 0x0F); b[8] = 0x80 | (b[8] & 0x3F)
    return str(uuid.UUID(bytes=bytes(b)))

# session_meta fields copied from the source thread; `timestamp`, `cwd`, `originator`, `cli_version` (and `id`) are required
CODEX_META_KEYS = ('cwd', 'originator', 'cli_version', 'source', 'thread_source', 'model_provider', 'base_instructions', 'git')

def write_codex_resume(src_meta, doc, codex_home):
    """Write `<codex_home>/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDTHH-MM-SS-<new-id>.jsonl` = `session_meta` (forked from
    the source) + a `compacted` record whose replacement history is one user message carrying `doc`; returns the new
    thread id. `src_meta`: the source rollout's records, or its `session_meta` payload."""
    if isinstance(src_meta, list): src_meta = next(r['payload'] for r in src_meta if r.get('type') == 'session_meta')
    new, now = uuid7(), datetime.now().astimezone()
    meta = dict(id=new, forked_from_id=src_meta['id'], timestamp=_now_iso(),
                **{k: src_meta[k] for k in CODEX_META_KEYS if src_meta.get(k) is not None})
    compacted = dict(message=doc, replacement_history=[dict(type='message', role='user',
                                                             content=[dict(type='input_text', text=doc)])])
    recs = [dict(timestamp=_now_iso(), type='session_meta', payload=meta),
            dict(timestamp=_now_iso(), type='compacted', payload=compacted)]
    p = Path(codex_home)/'sessions'/now.strftime('%Y/%m/%d')/f'rollout-{now.strftime("%Y-%m-%dT%H-%M-%S")}-{new}.jsonl'
    _write_new(p, recs, 0o644)
    return new

# ---------------------------------------------------------------- hooks (verified facts: tests/HOSTFACTS.md, "Hooks")

HOOK_SCRIPT = '''import json, os, sys, time
cfg = json.loads({cfg!r})
data = sys.stdin.read()
with open(cfg['log'], 'a') as f: f.write(json.dumps(dict(stdin=data, env=dict(os.environ), cwd=os.getcwd())) + '\\n')
time.sleep(cfg['sleep'])
if cfg['when'] is not None and cfg['when'] not in data: sys.exit(0)
if cfg['block'] is not None:
    sys.stderr.write(cfg['block'])
    sys.exit(2)
if cfg['context'] is not None:
    event = json.loads(data or '{{}}').get('hook_event_name', 'SessionStart')
    print(json.dumps({{'hookSpecificOutput': {{'hookEventName': event, 'additionalContext': cfg['context']}}}}))
sys.exit(cfg['exit_code'])
'''

def write_recorder(folder, name='hook', context=None, block=None, exit_code=0, sleep=0, when=None):
    """Write a trivial hook script `folder/<name>.py` and return the command that runs it (absolute paths: hooks run
    with the host's PATH). It appends what it got (stdin, env, cwd) as a JSON line to `folder/<name>.jsonl`, sleeps
    `sleep` s, then (only if its stdin holds `when`, when given) exits 2 with `block` on stderr, or prints `context`
    as the event's `additionalContext`, and exits `exit_code`. Read its calls with `hook_calls(folder/<name>.jsonl)`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cfg = dict(log=str(folder/f'{name}.jsonl'), context=context, block=block, exit_code=exit_code, sleep=sleep,
               when=when)
    script = folder/f'{name}.py'
    script.write_text(HOOK_SCRIPT.format(cfg=json.dumps(cfg)))
    return f'{shlex.quote(sys.executable)} {shlex.quote(str(script))}'

def hook_calls(log):
    "What a `write_recorder` hook received, one dict per call: `input` (its stdin JSON), `env`, `cwd`"
    if not Path(log).exists(): return []
    recs = read_jsonl(log)
    return [dict(input=json.loads(r['stdin']) if r['stdin'].strip() else None, env=r['env'], cwd=r['cwd'])
            for r in recs]

def hook_group(command, matcher=None, timeout=None):
    "One matcher group, the same shape in Claude Code's settings.json and Codex's hooks.json"
    h = dict(type='command', command=command)
    if timeout is not None: h['timeout'] = timeout
    return dict(hooks=[h]) if matcher is None else dict(matcher=matcher, hooks=[h])

def merge_json(path, **keys):
    "Set top-level `keys` in the JSON object at `path` (created if missing)"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    d = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**d, **keys}, indent=2) + '\n')
    return path

def claude_hooks(home, **events):
    "Set `hooks` (event name -> list of `hook_group`s) in the sandbox's `$CLAUDE_CONFIG_DIR/settings.json`"
    return merge_json(Path(home)/'.claude'/'settings.json', hooks=events)

def claude_settings(home, **settings):
    "Set top-level keys of the sandbox's `$CLAUDE_CONFIG_DIR/settings.json` (e.g. `bashOutputMaxChars`)"
    return merge_json(Path(home)/'.claude'/'settings.json', **settings)

def codex_hooks(home, **events):
    "Write `$CODEX_HOME/hooks.json` = {hooks: events}; Codex runs them only once trusted (`trust_codex_hooks`)"
    return merge_json(codex_home(home)/'hooks.json', hooks=events)

# ---------------------------------------------------------------- the hosts' own compaction

# CLAUDE_QUICK without --disable-slash-commands, which turns /compact off ("/compact isn't available in this ...")
CLAUDE_QUICK_SLASH = ('--tools', 'Bash', '--system-prompt', 'You are a test assistant.')

def compact_claude(bin, home, cwd, session_id, server, instructions='', timeout=60):
    """Run Claude Code's own compaction in print mode, `claude -p --resume ID "/compact [instructions]"`:
    (returncode, stdout, stderr). The mock should answer with `summary(...)` (one request) unless a hook blocks."""
    prompt = f'/compact {instructions}'.strip()
    cmd = [bin, '-p', prompt, '--resume', session_id, *CLAUDE_QUICK_SLASH]
    return _run(cmd, claude_env(home, server), cwd, timeout)

class AppServer:
    """`codex app-server` on stdio (JSON-RPC, one message a line) in the sandbox `home`: `call` a method, `wait` for a
    notification; every wait is bounded. Use as a context manager (the process group is killed on exit)."""
    def __init__(self, bin, home, cwd, server=None):
        env = codex_env(home, server) if server else sandbox_env(home)
        if server: set_codex_server(home, server)
        self.proc = subprocess.Popen([str(bin), 'app-server'], env=env, cwd=cwd, stdin=subprocess.PIPE, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self.n, self.notes, self.lines = 0, [], queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        "Queue each line the server prints (a thread: select() on a buffered pipe misses lines already read)"
        for line in self.proc.stdout: self.lines.put(line)
        self.lines.put(None)

    def __enter__(self):
        self.call('initialize', {'clientInfo': {'name': 'hostkit', 'version': '0'}})
        self._write({'jsonrpc': '2.0', 'method': 'initialized'})
        return self

    def __exit__(self, *a):
        try: os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError: pass
        self.proc.wait(10)

    def _write(self, msg):
        self.proc.stdin.write(json.dumps(msg) + '\n')
        self.proc.stdin.flush()

    def _next(self, end):
        "The next message, or None once `end` (a monotonic time) has passed"
        try: line = self.lines.get(timeout=max(0, end - time.monotonic()))
        except queue.Empty: return None
        if line is None: raise RuntimeError('codex app-server exited')
        return json.loads(line)

    def call(self, method, params=None, timeout=30):
        "Send a request and return its `result` (RuntimeError on an error reply); notifications go to `notes`"
        self.n += 1
        self._write({'jsonrpc': '2.0', 'id': self.n, 'method': method, 'params': params or {}})
        end = time.monotonic() + timeout
        while (msg := self._next(end)) is not None:
            if msg.get('id') != self.n: self.notes.append(msg)
            elif 'error' in msg: raise RuntimeError(f'{method}: {msg["error"]}')
            else: return msg['result']
        raise TimeoutError(f'{method}: no reply in {timeout}s')

    def wait(self, method, timeout=30, after=0):
        "The first notification named `method` among `notes[after:]` and those still to come"
        for m in self.notes[after:]:
            if m.get('method') == method: return m
        end = time.monotonic() + timeout
        while (msg := self._next(end)) is not None:
            self.notes.append(msg)
            if msg.get('method') == method: return msg
        raise TimeoutError(f'no {method} in {timeout}s')

def compact_codex(bin, home, cwd, thread_id, server, then=None, timeout=60):
    """Codex's own compaction with no TUI: app-server `thread/resume`, then `thread/compact/start`, until its turn
    completes; with `then`, a next turn with that prompt in the same process (SessionStart with source `compact` runs
    only there, before that turn). Returns the notifications after the resume (hook runs, items, turns)."""
    with AppServer(bin, home, cwd, server) as app:
        app.call('thread/resume', {'threadId': thread_id, 'excludeTurns': True})
        k = len(app.notes)
        app.call('thread/compact/start', {'threadId': thread_id})
        app.wait('turn/completed', timeout, after=k)
        if then is not None:
            j = len(app.notes)
            app.call('turn/start', {'threadId': thread_id, 'input': [{'type': 'text', 'text': then}]})
            app.wait('turn/completed', timeout, after=j)
        return app.notes[k:]

def codex_hooks_list(bin, home, cwd):
    "The hooks Codex sees for `cwd` (app-server `hooks/list`): each with `key`, `currentHash`, `trustStatus`, ..."
    with AppServer(bin, home, cwd) as app: return app.call('hooks/list', {'cwds': [str(cwd)]})['data'][0]['hooks']

def trust_codex_hooks(bin, home, cwd):
    """Trust every hook Codex lists for `cwd` the way its TUI does ("Trust all and continue"): Codex itself writes
    `[hooks.state."<key>"] trusted_hash = "<currentHash>"` into config.toml (`config/batchWrite`). Returns the hooks."""
    with AppServer(bin, home, cwd) as app:
        hooks = app.call('hooks/list', {'cwds': [str(cwd)]})['data'][0]['hooks']
        state = {h['key']: {'trusted_hash': h['currentHash']} for h in hooks}
        edit = {'keyPath': 'hooks.state', 'mergeStrategy': 'upsert', 'value': state}
        app.call('config/batchWrite', {'edits': [edit]})
    return hooks

# ---------------------------------------------------------------- what a request carries

def request_with(server, needle):
    "The first model request whose body holds `needle` (skips side requests such as Codex's thread title)"
    return first_or_none(r for r in server.model_requests() if needle in json.dumps(r['body'], ensure_ascii=False))

def first_or_none(it): return next(iter(it), None)

def _block_text(content):
    if isinstance(content, str): return content
    return ''.join(c.get('text', '') for c in content if isinstance(c, dict))

def claude_tool_results(body):
    "The text of each `tool_result` block in a Messages API request body, in order"
    blocks = [b for m in body['messages'] if isinstance(m['content'], list) for b in m['content']]
    return [_block_text(b['content']) for b in blocks if b.get('type') == 'tool_result']

def codex_tool_outputs(body):
    "The `output` of each `function_call_output` item in a Responses API request body, in order"
    return [_block_text(i['output']) for i in body['input'] if i.get('type') == 'function_call_output']

# ---------------------------------------------------------------- the command under test, and sessions to give it

EXE = Path(sys.executable).absolute().parent/'llmsurgery-compact'

def sha(p): return hashlib.sha256(Path(p).read_bytes()).hexdigest()

def compact_in(home, cwd, *args):
    "Run `llmsurgery-compact ARGS` in `cwd` with both stores under `home`: (returncode, stdout, stderr)"
    env = sandbox_env(home) | {k:v for k,v in os.environ.items() if k=='PYTHONPATH'}   # the llmsurgery under test
    p = subprocess.run([str(EXE), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr

def one_turn(host, bin, home, cwd, prompt, answer=None):
    "The file of a one-turn session that the real client `bin` of `host` ('claude' or 'codex') writes in `home`"
    run,mock,made_in = (run_claude, AnthropicMock, claude_sessions) if host=='claude' else (run_codex, ResponsesMock, codex_rollouts)
    before = set(made_in(home))
    with mock([text(answer or f'answer to {prompt}')]) as s: assert run(bin, home, cwd, prompt, s)[0] == 0
    made, = set(made_in(home)) - before
    return made

# ---------------------------------------------------------------- Gemini CLI (verified facts: ../shared/HOSTS.md, "Gemini CLI")

GEMINI_PKG, GEMINI_VER = '@google/gemini-cli', '0.61.0'
GEMINI_BIN = 'node_modules/@google/gemini-cli/bundle/gemini.js'

def install_gemini(cache=None):
    "The path of Gemini CLI's `gemini.js` (run it with node), installed on first use; RuntimeError if npm can't"
    return install_npm(GEMINI_PKG, GEMINI_VER, GEMINI_BIN, cache)

def shell(command): return tool('run_shell_command', command=command)

def _gm_usage(n=100): return {'promptTokenCount': n, 'candidatesTokenCount': 10, 'totalTokenCount': n+10}

def _gm_parts(r):
    "The parts of one scripted reply: a function call, or text (with a thought before it when the reply has one)"
    if 'tool' in r: return [{'functionCall': {'name': r['tool'], 'args': r['args']}}]
    return ([{'text': r['thought'], 'thought': True}] if r.get('thought') else []) + [{'text': r['text']}]

class GeminiMock(MockServer):
    """Gemini API: POST /v1beta/models/M:streamGenerateContent?alt=sse answers from the script (SSE); the two
    non-streaming :generateContent calls of a compression are answered with `snapshot` (the summary) and the same
    (the check), using up no scripted reply; :countTokens counts 4 characters a token. Each reply's usageMetadata
    reports `prompt_tokens`, or by default the request body's size counted the same way."""
    snapshot = '<state_snapshot>\n<overall_goal>MOCK-SNAPSHOT-GOAL</overall_goal>\n</state_snapshot>'
    prompt_tokens = None
    def is_model(self, r): return r['method'] == 'POST' and ':streamGenerateContent' in r['path']
    def compressions(self): return [r for r in self.requests if r['method'] == 'POST' and ':generateContent' in r['path']]
    def post(self, h, body):
        p = h.path.split('?')[0]
        if p.endswith(':countTokens'): return h._send(200, {'totalTokens': len(json.dumps(body)) // 4})
        if p.endswith(':generateContent'):
            cand = {'content': {'role': 'model', 'parts': [{'text': self.snapshot}]}, 'finishReason': 'STOP', 'index': 0}
            return h._send(200, {'candidates': [cand], 'usageMetadata': _gm_usage(50)})
        if not p.endswith(':streamGenerateContent'): return h._send(404, {'error': {'code': 404, 'message': p}})
        r = self.next_reply()
        cand = {'content': {'role': 'model', 'parts': _gm_parts(r)}, 'finishReason': 'STOP', 'index': 0}
        n = self.prompt_tokens or len(json.dumps((body or {}).get('contents'))) // 4
        ev = {'candidates': [cand], 'usageMetadata': _gm_usage(n), 'modelVersion': 'gemini-mock'}
        h.close_connection = True
        h.send_response(200)
        h.send_header('content-type', 'text/event-stream'); h.send_header('connection', 'close'); h.end_headers()
        h.wfile.write(f'data: {json.dumps(ev)}\n\n'.encode()); h.wfile.flush()

def chat_sse(h, r, k, n, model='mock-model'):
    "Answer handler `h` with reply `r` (text or tool call) as an OpenAI chat stream: request `k`, `n` prompt tokens"
    delta = {'role': 'assistant'}
    if 'tool' in r:
        call = {'index': 0, 'id': f'call_mock{k:03d}', 'type': 'function',
                'function': {'name': r['tool'], 'arguments': json.dumps(r['args'])}}
        delta, finish = delta | {'content': None, 'tool_calls': [call]}, 'tool_calls'
    else: delta, finish = delta | {'content': r['text']}, 'stop'
    chunk = lambda choices, **kw: {'id': f'chatcmpl-mock{k:03d}', 'object': 'chat.completion.chunk', 'created': 0,
                                   'model': model, 'choices': choices, **kw}
    evs = [chunk([{'index': 0, 'delta': delta, 'finish_reason': None}]),
           chunk([{'index': 0, 'delta': {}, 'finish_reason': finish}]),
           chunk([], usage={'prompt_tokens': n, 'completion_tokens': 10, 'total_tokens': n+10})]
    h.close_connection = True
    h.send_response(200)
    h.send_header('content-type', 'text/event-stream'); h.send_header('connection', 'close'); h.end_headers()
    for ev in evs: h.wfile.write(f'data: {json.dumps(ev)}\n\n'.encode())
    h.wfile.write(b'data: [DONE]\n\n'); h.wfile.flush()

def gemini_home(home): return Path(home)/'.gemini'

GEMINI_SETTINGS = {'security': {'auth': {'selectedType': 'gemini-api-key'}, 'folderTrust': {'enabled': False}},
                   'privacy': {'usageStatisticsEnabled': False}, 'telemetry': {'enabled': False},
                   'general': {'enableAutoUpdate': False, 'enableAutoUpdateNotification': False}}

def merge_settings(p, offline, settings):
    "Merge top-level `settings` into the JSON settings file `p`, made first with `offline`: its path"
    d = json.loads(p.read_text()) if p.exists() else json.loads(json.dumps(offline))
    for k, v in settings.items(): d[k] = {**d.get(k, {}), **v} if isinstance(v, dict) and isinstance(d.get(k), dict) else v
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(d, indent=2) + '\n')
    return p

def gemini_settings(home, **settings):
    "Merge top-level `settings` into the sandbox's `~/.gemini/settings.json`, made first with the offline settings"
    return merge_settings(gemini_home(home)/'settings.json', GEMINI_SETTINGS, settings)

def force_compression(home, on=True):
    "Make Gemini compress its history on the next turn (`model.compressionThreshold` tiny), or stop that"
    p = gemini_home(home)/'settings.json'
    d = json.loads(p.read_text()) if p.exists() else json.loads(json.dumps(GEMINI_SETTINGS))
    m = {k: v for k, v in d.get('model', {}).items() if k != 'compressionThreshold'}
    d['model'] = {**m, 'compressionThreshold': 0.00001} if on else m
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(d, indent=2) + '\n')

def gemini_env(home, server):
    "Environment for gemini with HOME and GEMINI_CLI_HOME at `home`; writes its offline settings on first use"
    env = sandbox_env(home)
    if not (gemini_home(home)/'settings.json').exists(): gemini_settings(home)
    env.update(GEMINI_CLI_HOME=str(home), GOOGLE_GEMINI_BASE_URL=server.url, GEMINI_API_KEY='test-key')
    return env

GEMINI_MODEL = 'gemini-2.5-flash'   # a model of its own: with the default 'auto' each turn first asks a router model

def run_gemini(js, home, cwd, prompt, server, *extra_args, timeout=60):
    """Run `gemini -p PROMPT --output-format json --approval-mode yolo [extra_args]` offline in `cwd` against `server`
    (for a resume pass `'--resume', ID`): (returncode, stdout, stderr)"""
    cmd = ['node', js, '-p', prompt, '--output-format', 'json', '--approval-mode', 'yolo', '-m', GEMINI_MODEL, *extra_args]
    return _run(cmd, gemini_env(home, server), cwd, timeout)

def gemini_sessions(home):
    "The main session logs in the sandbox's Gemini store (sub-agents' lie deeper)"
    return sorted((gemini_home(home)/'tmp').glob('*/chats/session-*.jsonl'))
