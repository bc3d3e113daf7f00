"""Regenerate tests/data/genuine/qwen/q1-compressions.jsonl: a session written by the real Qwen Code (0.24.4) itself,
offline against `qwenkit.ChatMock`.

    python tests/make_genuine_qwen.py [OUTDIR]

One `qwen --yolo` process asked five prompts in turn: the first runs shell commands (one fails), reads and edits a file and
commits; then `/compress`; a prompt whose reply reports a context near the window, so that the next prompt triggers an
automatic compression; that prompt's reply runs a command reported as near the window again, so that its result triggers
a second one mid-turn; a last prompt the model refuses with an API error (Qwen records no later turn of the
same process after one). Each temporary path is written as
`/home/dev/work/q1` (the project) or `/home/dev` (HOME), as in /work/shared/data/qwen-genuine."""
import re, shutil, sys, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from qwenkit import install_qwen, ChatMock, QwenRun, qwen_sessions, shell, reply, api_error
from hostkit import text, tool

PROMPTS = ['The add function in app.py subtracts: find out why, fix it and commit', '/compress',
           'Now add a test for add', 'Run the tests', 'Explain the fix in one line']

def replies(cwd):
    app = str(cwd/'app.py')
    return [shell('cat app.py'), shell('python3 -c "from app import add; assert add(2, 2) == 4"'),
            tool('read_file', file_path=app), tool('edit', file_path=app, old_string='a - b', new_string='a + b'),
            shell('echo "[main 1a2b3c4] Fix add: it subtracted"  # git commit -am "Fix add"'), text('Fixed: add returned a - b. Committed as 1a2b3c4.'),
            reply(text('I will write tests/test_app.py next.'), 180000),
            reply(shell('python3 -c "from app import add; print(add(2, 3))"'), 180000), text('The tests pass: add(2, 3) is 5.'),
            api_error('MOCK-BAD-REQUEST: the model refused the request')]

def make(js, root):
    "The genuine session file made in the folder `root`, its temporary paths as they are"
    home, cwd = root/'home', root/'work'
    cwd.mkdir(parents=True)
    (cwd/'app.py').write_text('def add(a, b):\n    return a - b\n')
    with ChatMock(replies(cwd)) as s, QwenRun(js, home, cwd, s, '--yolo') as q:
        for p in PROMPTS: q.ask(p)
    src, = qwen_sessions(home)
    return src, home, cwd

def main(outdir):
    js = install_qwen()
    with tempfile.TemporaryDirectory() as d:
        src, home, cwd = make(js, Path(d))
        s = src.read_text().replace(str(cwd), '/home/dev/work/q1').replace(str(home), '/home/dev')
        s = s.replace(re.sub(r'[^a-zA-Z0-9]', '-', str(cwd)), '-home-dev-work-q1')
        out = Path(outdir); out.mkdir(parents=True, exist_ok=True)
        (out/'q1-compressions.jsonl').write_text(s)

if __name__ == '__main__': main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent/'data'/'genuine'/'qwen')
