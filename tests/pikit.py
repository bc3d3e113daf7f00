"""Test harness for Pi (`@mariozechner/pi-coding-agent@0.73.1`), offline against a loopback OpenAI-compatible server.

Built on hostkit (its npm cache, `sandbox_env`, `_run`) and ockit's `ChatMock` (chat completions over SSE); kept in its
own file so that hostkit's other hosts merge without conflicts. Verified facts: ../shared/hosts/pi.md.

- `install_pi()`: Pi's `cli.js` (run with node), installed once into hostkit's cache.
- `PiMock`: `ChatMock` that answers Pi's own summarization request ("You are a context summarization assistant") with
  `summary_text`, using up no scripted reply; `summaries()` lists those requests.
- `pi_config(home, server, ...)`: the sandbox's agent folder (`models.json`, `settings.json`): one provider `mock`
  (model `mock-model`) at `server`; a small `context` window with `reserve`/`keep` makes Pi compact.
- `pi_env(home)`: HOME, XDG_* and `PI_CODING_AGENT_DIR` under `home`, offline (`PI_OFFLINE=1`), no telemetry.
- `run_pi(js, home, cwd, prompts, server, *extra)`: one `pi -p PROMPT…` run (each prompt a turn); `PiRpc`: `pi --mode
  rpc` on stdio, for `/compact` (`compact`) and prompts in one process.
- `pi_sessions(home)`: the session files of the sandbox's store.
- `work_session(js, home, cwd)`: a genuine session of many kinds of entries, written by Pi through RPC (tests and
  `make_genuine_pi.py`); `pi_session_from(msgs, cwd, size)` a big one shaped as Pi writes them, from another host's.
"""
import json, os, queue, shutil, signal, subprocess, threading, time
from pathlib import Path
from hostkit import install_npm, sandbox_env, _run, text, tool
from ockit import ChatMock, _system

PI_PKG, PI_VER = '@mariozechner/pi-coding-agent', '0.73.1'
PI_BIN = 'node_modules/@mariozechner/pi-coding-agent/dist/cli.js'
PI_SUMMARY_SYSTEM = 'You are a context summarization assistant'

def install_pi(cache=None):
    "Pi's `cli.js`, installing the pinned version on first use; RuntimeError if npm can't"
    return install_npm(PI_PKG, PI_VER, PI_BIN, cache)

def pibash(command): return tool('bash', command=command)
def piedit(path, old, new): return tool('edit', path=path, edits=[dict(oldText=old, newText=new)])
def piwrite(path, content): return tool('write', path=path, content=content)

def is_pi_summary(body): return PI_SUMMARY_SYSTEM in _system(body)

class PiMock(ChatMock):
    "`ChatMock` for Pi: its summarization request gets `summary_text`; `prompt_tokens` is what each reply reports"
    summary_text = 'MOCK-PI-SUMMARY: the user asked for files.'
    def summaries(self): return [r for r in self.model_requests() if is_pi_summary(r['body'])]
    def main_requests(self): return [r for r in self.model_requests() if not is_pi_summary(r['body'])]
    def _reply(self, body):
        if is_pi_summary(body): return text(self.summary_text),10
        r = self.next_reply()
        return r,r.get('prompt_tokens', self.prompt_tokens)

def agent_dir(home): return Path(home)/'.pi'/'agent'

def pi_config(home, server, context=128000, reserve=None, keep=None, cwd=None):
    """Write the sandbox's `models.json` and `settings.json`: provider `mock` at `server`, default model
    `mock/mock-model` with a `context` window; `reserve` and `keep` (compaction settings) go into
    `cwd/.pi/settings.json` when given"""
    d = agent_dir(home)
    d.mkdir(parents=True, exist_ok=True)
    model = dict(id='mock-model', contextWindow=context, maxTokens=1024)
    prov = dict(baseUrl=f'{server.url}/v1', api='openai-completions', apiKey='sk-mock', models=[model],
                compat=dict(supportsDeveloperRole=False, supportsReasoningEffort=False))
    (d/'models.json').write_text(json.dumps(dict(providers=dict(mock=prov)), indent=2)+'\n')
    settings = dict(defaultProvider='mock', defaultModel='mock-model', enableInstallTelemetry=False, quietStartup=True)
    (d/'settings.json').write_text(json.dumps(settings, indent=2)+'\n')
    if cwd is not None and (reserve or keep):
        c = {k:v for k,v in dict(reserveTokens=reserve, keepRecentTokens=keep).items() if v is not None}
        (Path(cwd)/'.pi').mkdir(exist_ok=True)
        (Path(cwd)/'.pi'/'settings.json').write_text(json.dumps(dict(compaction=c))+'\n')

def pi_env(home):
    "Environment for pi with HOME, XDG_* and PI_CODING_AGENT_DIR under `home`, offline, no telemetry or version check"
    env = sandbox_env(home)
    env.update(PI_CODING_AGENT_DIR=str(agent_dir(home)), PI_OFFLINE='1', PI_TELEMETRY='0', PI_SKIP_VERSION_CHECK='1')
    return env

def point_at(home, server):
    "Point the sandbox's provider `mock` at `server` (configured first if it is not)"
    f = agent_dir(home)/'models.json'
    if not f.exists(): return pi_config(home, server)
    d = json.loads(f.read_text())
    d['providers']['mock']['baseUrl'] = f'{server.url}/v1'
    f.write_text(json.dumps(d, indent=2)+'\n')

def run_pi(js, home, cwd, prompts, server, *extra, timeout=90, env=None):
    "Run `pi [extra] -p PROMPT…` offline in `cwd` against `server`: (returncode, stdout, stderr)"
    point_at(home, server)
    prompts = [prompts] if isinstance(prompts, str) else list(prompts)
    return _run(['node', js, *extra, '-p', *prompts], env or pi_env(home), cwd, timeout)

def pi_sessions(home):
    "Every session file of the sandbox's store, oldest first"
    return sorted((agent_dir(home)/'sessions').glob('*/*.jsonl'), key=lambda p: p.stat().st_mtime)

class PiRpc:
    """`pi --mode rpc` on stdio in the sandbox `home`: `send` a command and wait for its response, `wait` for an event;
    every wait is bounded. Use as a context manager (the process group is killed on exit)."""
    def __init__(self, js, home, cwd, *extra, env=None):
        self.proc = subprocess.Popen(['node', str(js), '--mode', 'rpc', *extra], env=env or pi_env(home), cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, start_new_session=True)
        self.lines,self.events,self.n = queue.Queue(),[],0
        threading.Thread(target=self._read, daemon=True).start()
    def _read(self):
        for line in self.proc.stdout: self.lines.put(line)
        self.lines.put(None)
    def __enter__(self): return self
    def __exit__(self, *a):
        try: os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError: pass
        self.proc.wait(10)
    def _next(self, end):
        try: line = self.lines.get(timeout=max(0, end-time.monotonic()))
        except queue.Empty: return None
        if line is None: raise RuntimeError('pi --mode rpc exited')
        try: return json.loads(line)
        except ValueError: return {}
    def send(self, cmd, timeout=60):
        "Send command `cmd` (a dict) and return its `response`; events meanwhile go to `events`"
        self.n += 1
        cid = f'c{self.n}'
        self.proc.stdin.write(json.dumps(dict(cmd, id=cid))+'\n')
        self.proc.stdin.flush()
        end = time.monotonic()+timeout
        while (m := self._next(end)) is not None:
            if m.get('type')=='response' and m.get('id')==cid: return m
            self.events.append(m)
        raise TimeoutError(f'{cmd.get("type")}: no response in {timeout}s')
    def wait(self, typ, timeout=60, after=0):
        "The first event of type `typ` among `events[after:]` and those still to come"
        for m in self.events[after:]:
            if m.get('type')==typ: return m
        end = time.monotonic()+timeout
        while (m := self._next(end)) is not None:
            self.events.append(m)
            if m.get('type')==typ: return m
        raise TimeoutError(f'no {typ} in {timeout}s')

# ---------------------------------------------------------------- a big session, shaped as Pi writes them

def _ms(t): return int(t*1000)

def _iso(t):
    from datetime import datetime, timezone
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec='milliseconds').replace('+00:00', 'Z')

def _pi_blocks(m):
    "Pi's content blocks for canonical assistant message `m`: text, thinking, calls (`Bash` as Pi's `bash`)"
    from aidialog.msg_parts import Text, Thinking, ToolUse
    out = []
    for p in m.content:
        if isinstance(p, ToolUse):
            name,args = ('bash',{'command': p.arguments.get('command')}) if p.name=='Bash' else (p.name,p.arguments)
            out.append(dict(type='toolCall', id=p.id, name=name, arguments=args))
        elif isinstance(p, Thinking) and p.text: out.append(dict(type='thinking', thinking=p.text))
        elif isinstance(p, Text) and p.text: out.append(dict(type='text', text=p.text))
    return out

def pi_session_from(msgs, cwd, size, seed=0, t0=1_796_000_000.0):
    """The lines of a Pi session of about `size` bytes, shaped as the real client writes them (tests/data/genuine/pi):
    canonical `msgs` (a real session of another host, read) written as Pi's entries, again and again with fresh ids"""
    import random, uuid
    from aidialog.msg_parts import ToolResult
    rnd,t = random.Random(seed),t0
    nid = lambda: f'{rnd.getrandbits(32):08x}'
    usage = lambda n: dict(input=n, output=50, cacheRead=0, cacheWrite=0, totalTokens=n+50,
                           cost=dict(input=0, output=0, cacheRead=0, cacheWrite=0, total=0))
    sid = str(uuid.UUID(int=rnd.getrandbits(128)))
    lines,parent,n = [dict(type='session', version=3, id=sid, timestamp=_iso(t), cwd=str(cwd))],None,0
    def put(e):
        nonlocal parent,t,n
        t += 1.5
        e = dict(type=e.pop('type'), id=nid(), parentId=parent, timestamp=_iso(t), **e)
        parent = e['id']
        lines.append(e)
        n += len(json.dumps(e, ensure_ascii=False, separators=(',', ':')))+1
    put(dict(type='model_change', provider='mock', modelId='mock-model'))
    put(dict(type='thinking_level_change', thinkingLevel='off'))
    while n<size:
        for m in msgs:
            if m.role=='user' and m.text.strip():
                said = [dict(type='text', text=m.text)]
                put(dict(type='message', message=dict(role='user', content=said, timestamp=_ms(t))))
            elif m.role=='assistant' and (bs := _pi_blocks(m)):
                stop = 'toolUse' if any(b['type']=='toolCall' for b in bs) else 'stop'
                put(dict(type='message', message=dict(role='assistant', content=bs, api='openai-completions',
                         provider='mock', model='mock-model', usage=usage(min(n//4, 120_000)), stopReason=stop,
                         timestamp=_ms(t))))
            elif m.role=='tool':
                for p in m.content:
                    if isinstance(p, ToolResult):
                        err = str(p.text).startswith('Error')
                        put(dict(type='message', message=dict(role='toolResult', toolCallId=p.id, toolName=p.name,
                                 content=[dict(type='text', text=str(p.text))], isError=err, timestamp=_ms(t))))
            if n>=size: break
    return [json.dumps(e, ensure_ascii=False, separators=(',', ':'))+'\n' for e in lines]

def pi_cut(lines, keep=20_000):
    "The id of the entry Pi would keep from: where the last `keep` tokens of `lines` start (4 characters a token)"
    n = 0
    for ln in reversed(lines):
        e = json.loads(ln)
        n += len(json.dumps(e.get('message', ''), ensure_ascii=False))/4
        if n>=keep and (e.get('message') or {}).get('role') in ('user', 'assistant'): return e['id']

# ---------------------------------------------------------------- a genuine session of every kind of entry

MAKER = r"""export default function (pi) {
  pi.on("before_agent_start", async (event) => {
    if (event.prompt.includes("CONTEXT-PLEASE"))
      return { message: { customType: "maker-note", content: "EXTENSION-NOTE: the build is green", display: true } };
  });
  pi.registerCommand("back", { description: "go back to the first reply in words", handler: async (_args, ctx) => {
    const first = ctx.sessionManager.getBranch().find((e) => e.type === "message" && e.message.role === "assistant"
                                                       && e.message.content.some((c) => c.type === "text"));
    await ctx.navigateTree(first.id, { summarize: true });
  } });
}
"""
WORK_SUMMARY = 'MOCK-PI-SUMMARY: notes.txt shown, beta edited, plan.md written.'

def prompt(rpc, words, timeout=60):
    "Send prompt `words` and wait until the agent has done with it"
    k = len(rpc.events)
    assert rpc.send(dict(type='prompt', message=words))['success'], rpc.events[-3:]
    rpc.wait('agent_end', timeout, after=k)

def wait_for(ok, timeout=30):
    "Wait until `ok()`, at most `timeout` seconds"
    end = time.monotonic()+timeout
    while not ok():
        assert time.monotonic()<end, 'timed out'
        time.sleep(0.2)

def work_session(js, home, cwd, before=None):
    """A genuine session written by Pi through `pi --mode rpc` in `cwd`: a shell call, a failing command, an edit, a
    write, a read, a command the user ran (`!`), a message a project extension added, Pi's own threshold compaction, a
    turn after it; then `/back` (that extension) goes back up the tree with a branch summary, and a turn on the new
    branch. The file as it was before `/back` is copied to `before` when given. Returns `(session file, mock)`."""
    (cwd/'.pi'/'extensions').mkdir(parents=True, exist_ok=True)
    (cwd/'.pi'/'extensions'/'maker.ts').write_text(MAKER)
    (cwd/'notes.txt').write_text('alpha\nbeta\ngamma\n')
    replies = [pibash('cat notes.txt'), text('The notes hold alpha, beta and gamma.'),
               pibash('ls missing-file'), text('That file does not exist.'),
               piedit('notes.txt', 'beta', 'BETA'), piwrite('plan.md', '# Plan\n- ship it\n'),
               tool('read', path='plan.md'), text('Edited notes.txt and wrote plan.md.'),
               text('Noted: the build is green.'), dict(text('Summary of the work so far: done.'), prompt_tokens=3500),
               text('Still here after the compaction.'),
               text('On the new branch now.')]
    with PiMock(replies) as s:
        s.summary_text = WORK_SUMMARY
        pi_config(home, s, context=4000, reserve=1000, keep=50, cwd=cwd)
        with PiRpc(js, home, cwd) as rpc:
            for words in ('PI-TASK: show me the notes', 'List missing-file please',
                          'Make beta upper case and write a plan'):
                prompt(rpc, words)
            assert rpc.send(dict(type='bash', command='echo USER-RAN-THIS'))['success']
            prompt(rpc, 'CONTEXT-PLEASE: anything new?')
            assert rpc.send(dict(type='set_session_name', name='notes work'))['success']
            prompt(rpc, 'Summarise the work')   # its reply reports 3,500 tokens of 4,000: Pi compacts after it
            prompt(rpc, 'After the compaction: still there?')
            src, = pi_sessions(home)
            if before: shutil.copy(src, before)
            assert rpc.send(dict(type='prompt', message='/back'))['success']
            wait_for(lambda: '"branch_summary"' in src.read_text())
            prompt(rpc, 'A new direction from here')
    assert s.summaries(), 'Pi made no summary: no compaction'
    return src,s
