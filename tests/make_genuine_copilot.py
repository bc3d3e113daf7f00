"""Regenerate tests/data/genuine/copilot/fix-parser/: a session folder written by the real GitHub Copilot CLI (1.0.102)
itself, offline against `copilotkit.CopilotMock`.

    python tests/make_genuine_copilot.py [OUTDIR]

Four headless runs of one session in a project folder holding data.csv and parser.py, with two hooks of the user's
(one adds a line to each prompt, one holds each turn's end for 2 s):
1. a prompt whose replies run `bash` (a listing, then a command that fails with exit code 2), `view` a missing file (a
   tool failure), `edit` parser.py, `create` a test file, and answer;
2. a resumed prompt whose reply prints 2,500 numbers with a small prompt-token limit: Copilot compacts on its own,
   its summary arriving after the turn's last reply (which the compaction keeps);
3. a resumed `/compact` with focus text: Copilot's manual compaction;
4. a resumed prompt answered after both compactions.
The recorded project path is rewritten to /home/dev/work/parser-demo, the sandbox's home to /home/dev; the session's
events.jsonl, workspace.yaml and checkpoints/ are kept (rewind snapshots are not)."""
import json, shutil, sys, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from copilotkit import (compact_copilot, copilot_home, install_copilot, CopilotMock, run_copilot, cpbash,
                        copilot_sessions, session_id_of, SMALL_LIMIT)
from hostkit import tool, text

PROJECT = '/home/dev/work/parser-demo'
TASK = 'The parser drops the last row of data.csv: find out why and fix it'

def hooks(home):
    """Two hooks of the user's own: one adds a line to each prompt, one holds the process at the end of each turn, so
    that Copilot's automatic compaction (which runs beside the turn) completes before the process exits"""
    d = copilot_home(home)/'hooks'
    d.mkdir(parents=True)
    say = "echo '{\"additionalContext\": \"HOOK-CONTEXT: the project runs its tests with pytest.\"}'"
    hs = dict(userPromptSubmitted=[dict(type='command', bash=say, timeoutSec=10)],
              agentStop=[dict(type='command', bash='sleep 2', timeoutSec=10)])
    (d/'user.json').write_text(json.dumps(dict(version=1, hooks=hs), indent=2))

def turn(exe, home, cwd, prompt, replies, *args, limit=None, ok=(0,), summary_delay=0):
    with CopilotMock(replies) as s:
        s.summary_delay = summary_delay
        rc, out, err = run_copilot(exe, home, cwd, prompt, s, *args, limit=limit)
    if rc not in ok: raise SystemExit(f'copilot failed (rc={rc}):\n{out}\n{err[-3000:]}')
    return s

TEST_FILE = 'from parser import rows\n\ndef test_last_row():\n    assert rows("a\\nb\\nc") == ["b", "c"]\n'

def first_turn(exe, home, cwd):
    "The first prompt: a listing, a failing command, a `view` of a missing file, an edit, a new file, an answer"
    turn(exe, home, cwd, TASK, [
        cpbash('ls && wc -l data.csv', 'List files and count lines'),
        cpbash('python3 -m pytest -q tests/test_parser.py; exit 2', 'Run the parser tests'),
        tool('view', path=str(cwd/'tests'/'test_parser.py')),
        tool('edit', path=str(cwd/'parser.py'), old_str='[1:-1]', new_str='[1:]'),
        tool('create', path=str(cwd/'test_parser.py'), file_text=TEST_FILE),
        text('Fixed: rows() dropped the last line because of the [1:-1] slice; it keeps it now, and '
             'test_parser.py checks it.')])

def copy_out(src, dest, d, home, cwd):
    "The session folder of transcript `src` copied to `dest`, the temporary paths (under `d`) rewritten"
    if dest.parent.exists(): shutil.rmtree(dest.parent)
    dest.mkdir(parents=True)
    for name in ('events.jsonl', 'workspace.yaml'):
        (dest/name).write_text((src.parent/name).read_text().replace(str(cwd), PROJECT).replace(str(home), '/home/dev'))
    shutil.copytree(src.parent/'checkpoints', dest/'checkpoints')
    assert d not in ''.join(p.read_text() for p in dest.rglob('*') if p.is_file()), 'a temporary path is left'
    return dest

def main(outdir):
    exe = install_copilot()
    with tempfile.TemporaryDirectory() as d:
        home, cwd = Path(d)/'home', Path(d)/'parser-demo'
        cwd.mkdir()
        hooks(home)
        (cwd/'data.csv').write_text('name,qty\napples,3\npears,5\nplums,7')
        (cwd/'parser.py').write_text('def rows(text):\n    return text.split("\\n")[1:-1]\n')
        first_turn(exe, home, cwd)
        src, = copilot_sessions(home)
        sid = session_id_of(src)
        s = turn(exe, home, cwd, 'Now print the numbers 1 to 2500 so I can check the tail',
                 [cpbash('seq 1 2500', 'Print numbers'), text('Printed 1 to 2500.')], f'--resume={sid}',
                 limit=SMALL_LIMIT, summary_delay=1)
        if not s.compactions(): raise SystemExit('the small limit made no compaction')
        with CopilotMock([]) as s: compact_copilot(exe, home, cwd, sid, s, 'focus on the parser fix')
        if not s.compactions(): raise SystemExit('/compact made no compaction')
        turn(exe, home, cwd, 'What is left to do?', [text('Nothing: the fix and its test are in.')], f'--resume={sid}')
        return copy_out(src, Path(outdir)/'fix-parser'/sid, d, home, cwd)

if __name__ == '__main__':
    print(main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent/'data'/'genuine'/'copilot'))
