"""Regenerate tests/data/gemini/gemini_compressed.jsonl: a session log written by the real Gemini CLI (0.61.0) itself,
offline against `hostkit.GeminiMock`.

    python tests/make_gemini.py [OUTDIR]

Three headless turns in one session: a prompt whose reply runs `run_shell_command` twice (a long listing, then a commit
line) and answers after a thought; a resumed turn with a forced compression (the mock's `<state_snapshot>`) whose reply
runs a failing command; a resumed turn after it. It holds only temporary paths (/tmp/...) and is < 60 KB."""
import shutil, sys, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostkit import (install_gemini, GeminiMock, run_gemini, gemini_sessions, force_compression, shell, text, read_jsonl)

def turn(js, home, cwd, prompt, replies, *args, compress=False):
    force_compression(home, compress)
    with GeminiMock(replies) as s: rc, out, err = run_gemini(js, home, cwd, prompt, s, *args)
    if rc: raise SystemExit(f'gemini failed (rc={rc}):\n{out}\n{err[-3000:]}')

def main(outdir):
    js = install_gemini()
    with tempfile.TemporaryDirectory() as d:
        home, cwd = Path(d)/'home', Path(d)/'work'
        cwd.mkdir()
        turn(js, home, cwd, 'The parser drops the last row of data.csv: find out why and fix it',
             [shell('seq 1 300 | sed "s/^/row,/"'), shell('echo "[main 1a2b3c4] Keep the last row when the file ends without a newline"'),
              dict(text='Fixed and committed: the last row is kept now.', thought='The loop stops one row early.')])
        src, = gemini_sessions(home)
        sid = read_jsonl(src)[0]['sessionId']
        turn(js, home, cwd, 'Now add a test for it', [shell('python -m pytest -q tests/test_parser.py'),
             text('The test run failed: there is no tests/test_parser.py yet. I will write it next.')],
             '--resume', sid, compress=True)
        turn(js, home, cwd, 'Go on', [text('Writing tests/test_parser.py now.')], '--resume', sid)
        shutil.copyfile(src, Path(outdir)/'gemini_compressed.jsonl')

if __name__ == '__main__': main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent/'data'/'gemini')
