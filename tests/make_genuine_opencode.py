"""Regenerate tests/data/genuine/opencode.db: a store written by the real opencode (1.18.33) itself, offline (tests/ockit.py).

    python tests/make_genuine_opencode.py [OUTDIR]

One session in /tmp/…/work: (1) a prompt answered with reasoning, a `bash` call that really ran, and a reply; (2) a turn
after which opencode compacts (the reply reports 7,900 prompt tokens against a model context of 8,000), its summary, and
its automatic "Continue" turn; (3) one more turn. The store is copied with `VACUUM INTO` (one file, rollback journal, no -wal)
in 512-byte pages (~125 KB); it holds only temporary paths.
"""
import shutil, sqlite3, sys, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostkit import text
from ockit import install_opencode, ChatMock, ocbash, full, thinking, run_opencode, opencode_db, oc_sessions

def check(rc, out, err, what):
    if rc: raise SystemExit(f'{what} failed (rc={rc}):\n{out}\n{err[-3000:]}')

def make(b, d, outdir):
    home,cwd = d/'home',d/'work'
    cwd.mkdir()
    (cwd/'notes.txt').write_text('milk\neggs\nflour\n')
    with ChatMock([thinking(ocbash('cat notes.txt', 'Show the shopping list'), 'The list is in notes.txt: read it.'),
                   text('The list has milk, eggs and flour.')]) as s:
        check(*run_opencode(b, home, cwd, 'What is on my shopping list in notes.txt?', s, context=8000), 'turn 1')
    (sid,_,_), = oc_sessions(home)
    s = ChatMock([full(text('Butter is not on it; add it if you bake.')), text('Nothing more to do for now.')])
    s.summary_text = ('## Objective\n- Check the shopping list in notes.txt\n\n## Work State\n### Completed\n'
                      '- Read notes.txt: milk, eggs, flour\n\n## Next Move\n1. (none)')
    with s: check(*run_opencode(b, home, cwd, 'Is butter on it?', s, '-s', sid, context=8000), 'turn 2 (compaction)')
    with ChatMock([text('Add butter below flour.')]) as s:
        check(*run_opencode(b, home, cwd, 'Where should I add butter?', s, '-s', sid, context=8000), 'turn 3')
    out = outdir/'opencode.db'
    out.unlink(missing_ok=True)
    with sqlite3.connect(f'file:{opencode_db(home)}?mode=ro', uri=True) as c: c.execute('vacuum into ?', (str(out),))
    c = sqlite3.connect(out, isolation_level=None)   # the copy in small pages: the same rows in a third of the bytes
    c.execute('pragma page_size=512'); c.execute('vacuum'); c.close()
    return out

if __name__ == '__main__':
    outdir = Path(sys.argv[1] if len(sys.argv)>1 else Path(__file__).resolve().parent/'data'/'genuine')
    with tempfile.TemporaryDirectory() as d: print(make(install_opencode(), Path(d), outdir))
