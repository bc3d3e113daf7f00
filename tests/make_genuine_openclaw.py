"""Record genuine OpenClaw sessions (the real CLI, offline, against the loopback mock) into tests/data/openclaw-genuine.

Each session is kept as its rows: `<id>.events.jsonl`, one `transcript_events` row a line (`seq`, and `event_json`, or
`event_zstd` in base64), as OpenClaw stored them; and the store itself, `openclaw-agent.sqlite` (checkpointed), so a
test reads the very database. Paths of the sandbox are left as they were (a temp folder)."""
import base64, json, shutil, sqlite3, sys, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).parent))
from openclawkit import install_openclaw, work_session, claw_events

OUT = Path(__file__).parent/'data'/'openclaw-genuine'

def main():
    node,js = install_openclaw()
    with tempfile.TemporaryDirectory(prefix='claw-genuine-') as d:
        home,cwd = Path(d)/'home',Path(d)/'work'
        cwd.mkdir(parents=True)
        db,sid,_ = work_session(node, js, home, cwd)
        with sqlite3.connect(f'file:{db}?mode=ro', uri=True) as c, sqlite3.connect(Path(d)/'copy.sqlite') as o:
            c.backup(o)
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(d)/'copy.sqlite', OUT/'openclaw-agent.sqlite')
        rows = [dict(seq=q, event_json=j, event_zstd=z and base64.b64encode(z).decode()) for q,j,z in claw_events(db, sid)]
        (OUT/f'{sid}.events.jsonl').write_text(''.join(json.dumps(r)+'\n' for r in rows))
        print(f'{sid}: {len(rows)} events, {sum(r["event_zstd"] is not None for r in rows)} compressed')

if __name__=='__main__': main()
