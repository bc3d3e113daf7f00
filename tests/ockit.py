"""Test harness for opencode (`opencode-ai@1.18.33`), run offline against a loopback OpenAI-compatible server.

Built on hostkit (its npm cache, `MockServer`, `sandbox_env`, `_run`); kept in its own file so that hostkit's other
hosts merge without conflicts. Verified facts: ../shared/HOSTS.md ("opencode").

- `install_opencode()`: the pinned binary, installed once into hostkit's cache.
- `ChatMock`: a scripted `/v1/chat/completions` server (SSE, with a usage chunk). Title requests and the compaction
  request ("You are a context summarization agent") are answered without using up a scripted reply.
- `opencode_env` / `opencode_config` / `run_opencode`: one `opencode run` turn with HOME and every XDG_*_HOME under a
  temp folder, `$PWD` set to the folder it runs in (opencode takes its directory from `$PWD`).
- `opencode_db(home)`: where that sandbox keeps its store; `oc_rows(db, sql)` reads it read-only.
- `ocbash(cmd)`: a scripted reply that calls opencode's `bash` tool; `full(r)` one after which opencode compacts (with
  `context=8000`), `slow(r, s)` one sent after `s` seconds.
"""
import json, os, sqlite3, time
from pathlib import Path
from hostkit import install_npm, MockServer, sandbox_env, _run, text, tool

OPENCODE_PKG, OPENCODE_VER = 'opencode-ai', '1.18.33'
OPENCODE_BIN = 'node_modules/opencode-linux-x64/bin/opencode'
SUMMARY_SYSTEM = 'You are a context summarization agent'

def install_opencode(cache=None):
    "The opencode binary, installing the pinned version on first use; RuntimeError if npm can't"
    return install_npm(OPENCODE_PKG, OPENCODE_VER, OPENCODE_BIN, cache)

def ocbash(command, description='Run a command'): return tool('bash', command=command, description=description)
def slow(r, seconds):
    "Reply `r`, sent after `seconds`: opencode waits for it with its store open and its prompt written"
    return r | dict(delay=seconds)

def thinking(r, s):
    "Reply `r` after reasoning `s` (streamed as `reasoning_content`, which opencode keeps as a `reasoning` part)"
    return r | dict(reasoning=s)

def full(r, n=7900):
    "Reply `r` reporting `n` prompt tokens: with a model context of 8000, opencode compacts after it"
    return r | dict(prompt_tokens=n)

def _system(body):
    "The text of a chat request's system messages"
    ms = [m for m in (body or {}).get('messages') or [] if m.get('role')=='system']
    return '\n'.join(c if isinstance(c, str) else json.dumps(c) for m in ms for c in [m.get('content')])

def is_title(body): return 'title' in _system(body)[:400].lower() and not (body or {}).get('tools')
def is_summary(body): return SUMMARY_SYSTEM in _system(body)

class ChatMock(MockServer):
    """OpenAI chat completions: POST /v1/chat/completions (stream) answers from the script. `prompt_tokens` is the
    usage each main reply reports unless the reply says (`full(r)`: one that makes opencode compact); the summary
    request gets `summary_text`."""
    summary_text = 'MOCK-OPENCODE-SUMMARY: the user asked for files; ls ran.'
    prompt_tokens = 100
    def is_model(self, r): return r['method']=='POST' and r['path'].split('?')[0].endswith('/chat/completions')
    def main_requests(self): return [r for r in self.model_requests() if not is_title(r['body'])]
    def _reply(self, body):
        if is_title(body): return text('Mock title'),10
        if is_summary(body): return text(self.summary_text),10
        r = self.next_reply()
        return r,r.get('prompt_tokens', self.prompt_tokens)
    def post(self, h, body):
        if not self.is_model(dict(method='POST', path=h.path)): return h._send(404, {'error': {'message': 'mock'}})
        r,ptoks = self._reply(body)
        time.sleep(r.get('delay', 0))   # opencode holds its store open meanwhile
        n = len(self.model_requests())
        if 'tool' in r:
            call = dict(index=0, id=f'call_mock{n:03d}', type='function',
                        function=dict(name=r['tool'], arguments=json.dumps(r['args'])))
            deltas,stop = [dict(role='assistant', content=None, tool_calls=[call])],'tool_calls'
        else: deltas,stop = [dict(role='assistant', content=''), dict(content=r['text'])],'stop'
        if r.get('reasoning'): deltas.insert(0, dict(role='assistant', content=None, reasoning_content=r['reasoning']))
        head = dict(id=f'chatcmpl-mock{n:03d}', object='chat.completion.chunk', created=int(time.time()),
                    model=(body or {}).get('model', 'mock'))
        chunks = [head | dict(choices=[dict(index=0, delta=d, finish_reason=None)]) for d in deltas]
        chunks += [head | dict(choices=[dict(index=0, delta={}, finish_reason=stop)])]
        usage = dict(prompt_tokens=ptoks, completion_tokens=10, total_tokens=ptoks+10)
        chunks += [head | dict(choices=[], usage=usage)]
        h.close_connection = True
        h.send_response(200)
        h.send_header('content-type', 'text/event-stream'); h.send_header('cache-control', 'no-cache')
        h.send_header('connection', 'close'); h.end_headers()
        for c in chunks: h.wfile.write(f'data: {json.dumps(c)}\n\n'.encode())
        h.wfile.write(b'data: [DONE]\n\n')
        h.wfile.flush()

def opencode_config(home, server, context=None):
    """Write the sandbox's `~/.config/opencode/opencode.json`: one provider `mock` at `server`, model `mock/mock`
    (with `context`, a model context limit: 8000 and a reply reporting 7900 prompt tokens force a compaction).
    Also a `node_modules/` and a `package-lock.json` naming `@opencode-ai/plugin`, which skip its npm install."""
    d = Path(home)/'.config'/'opencode'
    (d/'node_modules'/'@opencode-ai'/'plugin').mkdir(parents=True, exist_ok=True)
    model = dict(name='Mock') | (dict(limit=dict(context=context, output=min(1000, context//8))) if context else {})
    cfg = {'$schema': 'https://opencode.ai/config.json', 'autoupdate': False, 'share': 'disabled', 'model': 'mock/mock',
           'provider': {'mock': {'npm': '@ai-sdk/openai-compatible', 'name': 'Mock',
                                 'options': {'baseURL': f'{server.url}/v1', 'apiKey': 'sk-test'},
                                 'models': {'mock': model}}}}
    (d/'opencode.json').write_text(json.dumps(cfg, indent=2)+'\n')
    deps = {'@opencode-ai/plugin': OPENCODE_VER}
    (d/'package.json').write_text(json.dumps(dict(dependencies=deps))+'\n')
    lock = dict(name='opencode', lockfileVersion=3, requires=True, packages={'': dict(dependencies=deps),
                'node_modules/@opencode-ai/plugin': dict(version=OPENCODE_VER)})
    (d/'package-lock.json').write_text(json.dumps(lock)+'\n')
    (d/'node_modules'/'@opencode-ai'/'plugin'/'package.json').write_text(
        json.dumps(dict(name='@opencode-ai/plugin', version=OPENCODE_VER))+'\n')
    return d/'opencode.json'

def opencode_env(home, cwd):
    "Environment for opencode with HOME and every XDG_*_HOME under `home`, no model list fetched, no update, `$PWD` at `cwd`"
    env = sandbox_env(home)
    env.update(OPENCODE_DISABLE_MODELS_FETCH='1', OPENCODE_DISABLE_AUTOUPDATE='1', OPENCODE_DISABLE_SHARE='1',
               OPENCODE_DISABLE_LSP_DOWNLOAD='1', PWD=str(cwd))
    return env

def run_opencode(bin, home, cwd, words, server, *extra, timeout=90, context=None):
    "Run `opencode run WORDS… --format json [extra]` offline in `cwd` against `server`: (returncode, stdout, stderr)"
    opencode_config(home, server, context)
    words = words.split() if isinstance(words, str) else list(words)
    return _run([bin, 'run', *words, '--format', 'json', *extra], opencode_env(home, cwd), cwd, timeout)

def opencode_db(home): return Path(home)/'.local'/'share'/'opencode'/'opencode.db'

def oc_rows(db, sql, *args):
    "Rows of `sql` on the opencode store at `db`, opened read-only"
    with sqlite3.connect(f'file:{db}?mode=ro', uri=True) as c: return c.execute(sql, args).fetchall()

def oc_sessions(home):
    "`[(id, directory, title)]` of every session in the sandbox's store, oldest first"
    db = opencode_db(home)
    return oc_rows(db, 'select id, directory, title from session order by time_created') if db.exists() else []
