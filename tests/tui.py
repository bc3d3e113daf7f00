"""Drive an interactive terminal program (the Claude Code or Codex TUI) through a pseudo-terminal, offline.

`Tui` starts a command under a pty in its own process group, feeds everything it prints into a `pyte` terminal
emulator on a reader thread, and answers the terminal queries the TUIs send (cursor position, device attributes).
Tests read the screen as text (`screen()`, `wait_for()`), type (`send`, `type`, `KEYS`), and always `stop()` it
(the whole process group is killed), best as a context manager. Every wait is bounded.
`claude_tui` / `codex_tui` start the real clients in a sandbox home, past their first-run screens (tests/HOSTFACTS.md).
"""
import fcntl, json, os, re, signal, struct, subprocess, termios, threading, time
from pathlib import Path
import pyte
from hostkit import CLAUDE_QUICK_SLASH, claude_env, codex_env, codex_home, set_codex_server, merge_json

KEYS = dict(enter='\r', up='\x1b[A', down='\x1b[B', right='\x1b[C', left='\x1b[D', esc='\x1b', tab='\t',
            ctrl_c='\x03', ctrl_d='\x04', backspace='\x7f')

class _Screen(pyte.Screen):
    "A pyte screen that sends the terminal's answers (cursor position, device attributes) back to the program"
    def __init__(self, cols, rows, reply):
        super().__init__(cols, rows)
        self.reply = reply
    def write_process_input(self, data): self.reply(data)

class Tui:
    "`cmd` under a pseudo-terminal of `cols`x`rows`; the screen is kept by pyte from a reader thread"
    def __init__(self, cmd, env, cwd, cols=140, rows=45, log=None):
        self.cmd, self.env, self.cwd, self.log = [str(c) for c in cmd], dict(env), cwd, log
        self.cols, self.rows = cols, rows
        self.lock = threading.Lock()
        self.screen_ = _Screen(cols, rows, self._reply)
        self.stream = pyte.ByteStream(self.screen_)
        self.raw, self.proc, self.master = bytearray(), None, None

    def start(self):
        "Start the program (once); returns self"
        if self.proc is not None: raise RuntimeError('already started')
        self.master, slave = os.openpty()
        os.set_blocking(self.master, True)
        env = {**self.env, 'TERM': 'xterm-256color', 'COLUMNS': str(self.cols), 'LINES': str(self.rows)}
        _set_size(slave, self.rows, self.cols)
        self.proc = subprocess.Popen(self.cmd, env=env, cwd=self.cwd, stdin=slave, stdout=slave, stderr=slave,
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        return self

    def _read(self):
        "Feed the program's output to the emulator until the pty closes"
        while True:
            try: data = os.read(self.master, 65536)
            except OSError: return
            if not data: return
            with self.lock:
                self.raw += data
                self.stream.feed(data)
            if self.log: self.log.write(data)

    def _reply(self, s):
        try: os.write(self.master, s.encode() if isinstance(s, str) else s)
        except OSError: pass

    def screen(self):
        "The visible screen as text, one line per row, trailing spaces removed"
        with self.lock: return '\n'.join(l.rstrip() for l in self.screen_.display).rstrip('\n')

    def wait_for(self, pattern, timeout=30, gone=False):
        "Wait until `pattern` (a string, a compiled regex or a predicate) shows on screen (or, with `gone`, no longer)"
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = _found(pattern, self.screen())
            if found != gone: return self.screen()
            if not self.alive(): break
            time.sleep(0.1)
        state = 'still shown' if gone else 'not shown'
        raise TimeoutError(f'{pattern!r} {state} after {timeout}s (alive={self.alive()}); screen:\n{self.screen()}')

    def wait_any(self, patterns, timeout=30):
        "Wait until one of `patterns` shows; returns that pattern"
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            scr = self.screen()
            for p in patterns:
                if _found(p, scr): return p
            if not self.alive(): break
            time.sleep(0.1)
        raise TimeoutError(f'none of {patterns!r} shown after {timeout}s; screen:\n{self.screen()}')

    def send(self, *keys):
        "Write raw keys: text, or names from KEYS (`'enter'`, `'up'`, ...)"
        for k in keys: os.write(self.master, KEYS.get(k, k).encode())

    def type(self, text, enter=True, pause=0.5, timeout=10):
        """Type `text`; with `enter`, wait until its end shows on screen, then `pause` (a TUI takes an Enter that comes
        with a burst of keys as part of a paste, or as picking a completion), then press Enter"""
        for ch in text:
            os.write(self.master, ch.encode())
            time.sleep(0.005)
        if not enter: return
        self.wait_for(text[-20:].strip() or text, timeout)
        time.sleep(pause)
        self.send('enter')

    def alive(self): return self.proc is not None and self.proc.poll() is None

    def stop(self):
        "Kill the program's whole process group and close the pty"
        if self.proc is None: return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try: os.killpg(self.proc.pid, sig)
            except ProcessLookupError: break
            try:
                self.proc.wait(3)
                break
            except subprocess.TimeoutExpired: pass
        try: os.killpg(self.proc.pid, signal.SIGKILL)  # what the program left behind in its group
        except ProcessLookupError: pass
        try: os.close(self.master)
        except OSError: pass
        self.reader.join(5)

    def __enter__(self): return self if self.proc else self.start()
    def __exit__(self, *a): self.stop()

def _found(pattern, text):
    "Does the screen `text` show `pattern`: a string, a compiled regex, or a predicate on the text"
    if callable(pattern): return bool(pattern(text))
    return bool(pattern.search(text)) if isinstance(pattern, re.Pattern) else pattern in text

def joined(s):
    "A predicate: is `s` on screen once all whitespace is dropped (a long line the TUI wrapped still matches)"
    flat = re.sub(r'\s+', '', s)
    return lambda text: flat in re.sub(r'\s+', '', text)

def _set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))

# ---------------------------------------------------------------- the real clients

def seed_claude_tui(home, cwd, api_key='sk-ant-test'):
    """Get Claude Code's TUI past its first-run screens offline: onboarding done, `cwd` trusted, and the custom API
    key approved (Claude Code keeps its last 20 characters), in `$CLAUDE_CONFIG_DIR/.claude.json`"""
    p = Path(home)/'.claude'/'.claude.json'
    d = json.loads(p.read_text()) if p.exists() else {}
    projects = d.get('projects', {})
    projects = {**projects, str(cwd): {**projects.get(str(cwd), {}), 'hasTrustDialogAccepted': True}}
    keys = {'approved': [api_key[-20:]], 'rejected': []}
    return merge_json(p, hasCompletedOnboarding=True, projects=projects, customApiKeyResponses=keys)

def claude_tui(bin, home, cwd, server, *args, timeout=30):
    "A started Claude Code TUI (`claude [args]`) in the sandbox, waiting at its prompt; use it in a `with`"
    seed_claude_tui(home, cwd)
    t = Tui([bin, *CLAUDE_QUICK_SLASH, *args], claude_env(home, server), cwd).start()
    try:
        t.wait_for('Claude Code v', timeout)
        t.wait_for(re.compile(r'^❯', re.M), timeout)
    except BaseException:
        t.stop()
        raise
    return t

def seed_codex_tui(home):
    "Log Codex's TUI in with an API key offline: `$CODEX_HOME/auth.json` as `codex login --with-api-key` writes it"
    p = codex_home(home)/'auth.json'
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({'auth_mode': 'apikey', 'OPENAI_API_KEY': 'sk-test'}, indent=2) + '\n')
    p.chmod(0o600)

def codex_tui(bin, home, cwd, server, *args, timeout=30):
    """A started Codex TUI (`codex --no-daemon [args]`) in the sandbox, waiting at its prompt (or at "Hooks need
    review"). `--no-daemon`: else it starts a background app-server that outlives the test (and copies itself)."""
    env = codex_env(home, server)
    set_codex_server(home, server)
    seed_codex_tui(home)
    t = Tui([bin, '--no-daemon', *args], env, cwd).start()
    try: t.wait_any(['Ask Codex', 'Hooks need review'], timeout)
    except BaseException:
        t.stop()
        raise
    return t
