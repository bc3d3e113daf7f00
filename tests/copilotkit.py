"""Test harness for GitHub Copilot CLI (`@github/copilot@1.0.102`), offline against a loopback chat-completions model.

Built on hostkit (its npm cache, `MockServer`, `sandbox_env`, `_run`) and ockit's `ChatMock`; kept in its own file so
that hostkit's other hosts merge without conflicts. Verified facts: ../shared/hosts/copilot.md.

- `install_copilot()`: the pinned native binary, installed once into hostkit's cache; its 235 MB JS bundle is extracted
  once into `copilot_pkg_cache()` (beside the install, never in a sandbox or the real HOME).
- `CopilotMock`: ockit's `ChatMock`, whose compaction request (`tool_choice: "none"`, the `<checkpoint_title>` prompt)
  is answered with `summary_text` without using up a scripted reply, each reply's usage counting the request's
  characters over 4; `cpbash(cmd)` a reply that calls Copilot's `bash` tool.
- `compact_copilot`: Copilot's own `/compact`, ended once the compaction is logged (1.0.102 may wait 60 s to exit).
- `copilot_env` / `run_copilot`: one `copilot -p PROMPT` turn with HOME, every XDG_*_HOME and COPILOT_HOME under a temp
  folder, `COPILOT_OFFLINE=true` and the mock as its provider; `copilot_sessions(home)` the events.jsonl files it wrote.
- `sent_messages(body)`: a request's messages as `(role, text)`; `force_compaction`: the prompt-token limit that makes
  Copilot compact after a long tool output.
"""
import json, os, signal, subprocess, time
from pathlib import Path
from hostkit import install_npm, hosts_cache, sandbox_env, _run, tool, text, read_jsonl
from ockit import ChatMock

COPILOT_PKG, COPILOT_VER = '@github/copilot', '1.0.102'
COPILOT_BIN = 'node_modules/@github/copilot-linux-x64/copilot'   # the native binary the npm loader runs
COPILOT_MODEL = 'mock-model'
SMALL_LIMIT = 14000   # COPILOT_PROVIDER_MAX_PROMPT_TOKENS that, with a ~15 KB tool output, makes Copilot compact

def copilot_pkg_cache():
    "Where the binary extracts its bundle (`COPILOT_PKG_CACHE_HOME`): in hostkit's cache, shared by every test"
    return hosts_cache()/f'copilot-pkg@{COPILOT_VER}'

def install_copilot(cache=None):
    "Copilot CLI's native binary, installed on first use and its bundle extracted; RuntimeError if npm can't"
    exe = install_npm(COPILOT_PKG, COPILOT_VER, COPILOT_BIN, cache)
    done = copilot_pkg_cache()/'pkg'/'linux-x64'/COPILOT_VER/'.extraction-complete'
    if not done.exists():
        env = sandbox_env(copilot_pkg_cache()/'.home') | dict(COPILOT_PKG_CACHE_HOME=str(copilot_pkg_cache()),
                                                              COPILOT_SEA_EXTRACT_ONLY='1')
        subprocess.run([str(exe), '--binary-version'], env=env, capture_output=True, timeout=300,
                       stdin=subprocess.DEVNULL)
        if not done.exists(): raise RuntimeError(f'copilot did not extract its bundle into {copilot_pkg_cache()}')
    return exe

def cpbash(command, description='Run a command'): return tool('bash', command=command, description=description)

def is_compaction(body):
    "Is this chat request Copilot's summary call (tools offered with `tool_choice: none`, the checkpoint prompt)?"
    ms = (body or {}).get('messages') or [{}]
    return (body or {}).get('tool_choice')=='none' and '<checkpoint_title>' in json.dumps(ms[-1].get('content'))

class CopilotMock(ChatMock):
    "ockit's `ChatMock` for Copilot: its compaction request gets `summary_text` and leaves the script as it is"
    summary_text = ('<overview>\nMOCK-COPILOT-SUMMARY: the user asked for numbers; the agent ran seq.\n</overview>\n'
                    '<history>\n1. Printed numbers with seq.\n</history>\n<next_steps>\nNone.\n</next_steps>\n'
                    '<checkpoint_title>Printing numbers</checkpoint_title>')
    summary_delay = 0   # seconds before the summary is sent: an automatic compaction then ends after the turn's reply
    def _reply(self, body):
        if is_compaction(body): return text(self.summary_text) | dict(delay=self.summary_delay),10
        r = self.next_reply()
        return r,r.get('prompt_tokens', len(json.dumps(body))//4)   # the request's count, as a model reports one
    def compactions(self): return [r for r in self.model_requests() if is_compaction(r['body'])]
    def main_requests(self): return [r for r in self.model_requests() if not is_compaction(r['body'])]

def copilot_home(home): return Path(home)/'.copilot'

def copilot_env(home, server, limit=None):
    "Environment for copilot with HOME, XDG_* and COPILOT_HOME under `home`, offline, the mock as its provider"
    env = sandbox_env(home)
    env.update(COPILOT_HOME=str(copilot_home(home)), COPILOT_OFFLINE='true', COPILOT_PROVIDER_API_KEY='sk-test',
               COPILOT_PROVIDER_BASE_URL=f'{server.url}/v1', COPILOT_MODEL=COPILOT_MODEL, COPILOT_AUTO_UPDATE='false',
               COPILOT_PKG_CACHE_HOME=str(copilot_pkg_cache()))
    if limit: env['COPILOT_PROVIDER_MAX_PROMPT_TOKENS'] = str(limit)
    return env

def run_copilot(exe, home, cwd, prompt, server, *extra, timeout=90, limit=None):
    "Run `copilot -p PROMPT --allow-all-tools --no-auto-update [extra]` offline in `cwd`: (returncode, stdout, stderr)"
    cmd = [exe, '-p', prompt, '--allow-all-tools', '--no-auto-update', *extra]
    return _run(cmd, copilot_env(home, server, limit), cwd, timeout)

def copilot_sessions(home):
    "The events.jsonl of every session in the sandbox's store, oldest first"
    return sorted((copilot_home(home)/'session-state').glob('*/events.jsonl'), key=lambda p: p.stat().st_mtime)

def session_id_of(path): return read_jsonl(path)[0]['data']['sessionId']

def _text(c):
    if isinstance(c, str): return c
    return ''.join(p.get('text', '') for p in c or [] if isinstance(p, dict))

def sent_messages(body):
    "`(role, text)` of each message a chat request sends, after the system prompt"
    ms = (body or {}).get('messages') or []
    return [(m.get('role'), _text(m.get('content'))) for m in ms if m.get('role')!='system']

def sent_text(server, i=0):
    "All the text of the `i`th main request the mock got, after the system prompt"
    return '\n'.join(t for _,t in sent_messages(server.main_requests()[i]['body']))

def _compactions(path):
    try: return Path(path).read_bytes().count(b'"type":"session.compaction_complete"')
    except OSError: return 0

def compact_copilot(exe, home, cwd, sid, server, focus='', timeout=60, grace=3):
    """Copilot's own compaction, `copilot -p "/compact [focus]" --resume=ID`: (returncode, stdout, stderr). Copilot
    1.0.102 sometimes waits 60 s before it exits after a compaction ("a waited send timed out after 60000ms ... the event
    poll loop may be wedged"): once the compaction is in the session's events.jsonl, the process gets `grace` seconds
    to exit, then its group is killed (returncode -9). A resume after that works."""
    events = copilot_home(home)/'session-state'/sid/'events.jsonl'
    n = _compactions(events)
    cmd = [str(exe), '-p', f'/compact {focus}'.strip(), '--allow-all-tools', '--no-auto-update', f'--resume={sid}']
    p = subprocess.Popen(cmd, env=copilot_env(home, server), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    end = time.monotonic() + timeout
    while p.poll() is None and _compactions(events) <= n and time.monotonic() < end: time.sleep(0.1)
    try: out, err = p.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate(timeout=10)
        return -9, out, err
    return p.returncode, out, err
