"""Regenerate tests/data/genuine/cline/: sessions written by the real Cline CLI (3.0.65) itself, offline against
`clinekit.ChatMock`.

    python tests/make_genuine_cline.py [OUTDIR]

- `a-tools`: one headless turn (`cline --json`) that runs a command, one that fails, reads and edits a file.
- `b-auto`: a turn whose reply reports a context near the window (providers.json `contextWindow` 20000), so that
  Cline compacts automatically before its next request, then goes on.
- `c-manual`: the TUI asked a prompt, then `/compact`, then another prompt.
Each is the session's folder as Cline keeps it (`<id>.json`, `<id>.messages.json`, `<id>.compaction.json` after a
compaction), its temporary paths written as `/home/dev/work/c1` (the project) or `/home/dev` (HOME)."""
import re, shutil, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from clinekit import cline_tui, install_cline, ChatMock, cline_auth, cline_env, cline_sessions, run_cline, run, reply
from hostkit import text, tool

TASK = 'The add function in app.py subtracts: find out why and fix it'
AUTO = 'Count the lines of app.py, twice'
MANUAL = ('What does app.py hold?', 'Now say what you saw, in one line')

def tool_replies(cwd):
    app = str(cwd/'app.py')
    return [run('cat app.py'), run('ls /nonexistent-dir'), tool('read_files', files=[{'path': app}]),
            tool('editor', command='str_replace', path=app, old_text='a - b', new_text='a + b'),
            text('Fixed: add returned a - b; it adds now.')]

def auto_replies():
    return [reply(run('wc -l app.py'), 19500), run('wc -l app.py'), text('app.py has 2 lines.')]

def project(root):
    home, cwd = root/'home', root/'work'
    cwd.mkdir(parents=True)
    (cwd/'app.py').write_text('def add(a, b):\n    return a - b\n')
    return home, cwd

def make_tools(exe, root):
    home, cwd = project(root)
    with ChatMock(tool_replies(cwd)) as s:
        cline_auth(home, s)
        rc, out, err = run_cline(exe, home, cwd, TASK)
    assert rc == 0, err[-2000:]
    return home, cwd

def make_auto(exe, root):
    home, cwd = project(root)
    with ChatMock(auto_replies()) as s:
        cline_auth(home, s, context_window=20000)
        rc, out, err = run_cline(exe, home, cwd, AUTO)
    assert rc == 0 and s.compactions(), err[-2000:]
    return home, cwd

def make_manual(exe, root):
    home, cwd = project(root)
    with ChatMock([run('cat app.py'), text('app.py defines add(a, b).'), text('It held add, which subtracts.')]) as s:
        cline_auth(home, s)
        with cline_tui(exe, home, cwd) as t:
            for p in (MANUAL[0], '/compact', MANUAL[1]):
                time.sleep(1.5)
                t.type(p)
                if p == '/compact': t.wait_for('compacted', timeout=60)
                else: t.wait_for(re.compile(r'defines add|subtracts\.'), timeout=60)
            time.sleep(1.5)
    assert s.compactions()
    return home, cwd

def copy_out(home, cwd, dest):
    "The session folder of the sandbox `home` copied to `dest`, its temporary paths replaced"
    src, = cline_sessions(home)
    dest.mkdir(parents=True, exist_ok=True)
    for f in src.parent.iterdir():
        s = f.read_text().replace(str(cwd), '/home/dev/work/c1').replace(str(home), '/home/dev')
        (dest/f.name).write_text(s)

def main(outdir, which='abc'):
    exe = install_cline()
    out = Path(outdir)
    for k, name, make in (('a', 'a-tools', make_tools), ('b', 'b-auto', make_auto), ('c', 'c-manual', make_manual)):
        if k not in which: continue
        with tempfile.TemporaryDirectory() as d:
            home, cwd = make(exe, Path(d))
            shutil.rmtree(out/name, ignore_errors=True)
            copy_out(home, cwd, out/name)

if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent/'data'/'genuine'/'cline', *sys.argv[2:])
