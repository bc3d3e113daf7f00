"""Make the genuine Pi sessions of tests/data/genuine/pi/ with the real client (`@mariozechner/pi-coding-agent@0.73.1`),
offline against a scripted loopback model: `python tests/make_genuine_pi.py [OUT_DIR]`.

`pi_work.jsonl`, one session through `pi --mode rpc`: a shell call, a failing command, an edit, a write, a read, a
command the user ran (`!`), a message an extension added, Pi's own threshold compaction (its summary from the mock),
a turn after it, then `/back` (a small project extension) that goes back up the tree with a branch summary, and a turn
on the new branch. The project's path is rewritten to /home/dev/work/pi-demo, as in ../shared/data/pi-genuine."""
import sys, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from pikit import install_pi, work_session

DEMO = '/home/dev/work/pi-demo'

def make(out):
    "Write `pi_work.jsonl` into folder `out`, the project's path in it rewritten"
    with tempfile.TemporaryDirectory() as d:
        home,cwd = Path(d)/'home',Path(d)/'work'
        cwd.mkdir()
        src,_ = work_session(install_pi(), home, cwd)
        said = src.read_text().replace(str(cwd.resolve()), DEMO).replace(str(cwd), DEMO)
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out)/'pi_work.jsonl').write_text(said)
    return Path(out)/'pi_work.jsonl'

if __name__=='__main__':
    print(make(sys.argv[1] if len(sys.argv)>1 else Path(__file__).parent/'data'/'genuine'/'pi'))
