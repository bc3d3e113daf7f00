"""OpenClaw's compaction with llmsurgery's plugin against OpenClaw's own, on an OpenClaw session of about 3 MB, with the
real client.

Run: `.venv/bin/python bench/openclaw_compaction.py [--mb 3] [--reps 1]`. Not in the test suite
(tests/test_hosts_openclaw.py checks the same job on the genuine session). OpenClaw (`openclaw@2026.9.6` on Node 24,
from the tests' npm cache) runs offline in a temporary HOME against a loopback model (tests/openclawkit.py) that
answers OpenClaw's summarization request at once.

The session: the real Claude Code sessions of tests/data/claude-real, read, and written as the entries OpenClaw's
sessions hold (tests/pikit.py's `pi_session_from`: OpenClaw keeps Pi's entry format) until they hold about `--mb`
megabytes, then added to the store by `openclaw doctor --session-sqlite import`. Each run compacts a fresh copy of
that store through a Gateway (`openclaw sessions compact`), timing the command (its Gateway already listening):
- OpenClaw's own: its model call to the loopback model, which answers at once (a real model takes seconds to minutes);
  OpenClaw audits that summary, and a placeholder's may fail it: then it says so, and compacts nothing;
- with the plugin (`--install-hooks openclaw`): no model call; the summary is llmsurgery's document.
Then one `openclaw agent --local` turn on a fresh copy, which OpenClaw compacts before it (the session is far beyond
its model's window): the plugin makes that automatic compaction too. It also times the plugin's job alone (`python -P -m llmsurgery.hooks openclaw`), its wall and CPU time, and prints the
summary's tokens (o200k). Best of `--reps` each; the load average says how quiet it was."""
import argparse, json, os, resource, shutil, subprocess, sys, tempfile, time
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT/'tests'))
from openclawkit import install_openclaw, ClawMock, Gateway, claw_config, claw_env, claw_db, run_claw
from pikit import pi_session_from
from hostkit import EXE, text
from llmsurgery.sessions import read_session
from llmsurgery.toks import len_toks

REAL = ('258c7280-ae70-4798-800f-63464d01a85d.jsonl', '8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl')
SID = 'bench-big'

def big_store(node, js, home, cwd, mb):
    "OpenClaw's store in `home` holding session `SID` of about `mb` MB, added by its doctor import: its timestamps"
    msgs = [m for f in REAL for m in read_session(ROOT/'tests'/'data'/'claude-real'/f, whole=True, warn=False).msgs]
    lines = [json.loads(l) for l in pi_session_from(msgs, cwd, int(mb*1e6))]
    lines[0] |= dict(version=4, id=SID)
    d = home/'.openclaw'/'agents'/'main'/'sessions'
    d.mkdir(parents=True)
    (d/f'{SID}.jsonl').write_text(''.join(json.dumps(e, ensure_ascii=False)+'\n' for e in lines))
    (d/'sessions.json').write_text(json.dumps({f'agent:main:explicit:{SID}': dict(sessionId=SID,
                                   updatedAt=int(time.time()*1000), sessionFile=f'{SID}.jsonl')}))
    t = time.perf_counter()
    args = ['doctor', '--session-sqlite', 'import', '--session-sqlite-agent', 'main', '--non-interactive']
    rc,out,err = run_claw(node, js, home, cwd, args, timeout=600)
    assert rc==0, (out[-2000:], err[-2000:])
    print(f'session: {sum(len(json.dumps(e)) for e in lines)/1e6:.2f} MB, {len(lines):,} entries, imported in '
          f'{time.perf_counter()-t:.1f} s')
    return [e['message']['timestamp'] for e in lines if e.get('type')=='message']

def hook_job(inp, env):
    "`(wall, cpu)` seconds of one run of the plugin's job on input `inp`, in environment `env`"
    r0,t0 = resource.getrusage(resource.RUSAGE_CHILDREN),time.perf_counter()
    p = subprocess.run([sys.executable, '-P', '-m', 'llmsurgery.hooks', 'openclaw'], input=json.dumps(inp),
                       capture_output=True, text=True, env=env)
    wall,r1 = time.perf_counter()-t0,resource.getrusage(resource.RUSAGE_CHILDREN)
    assert p.returncode==0 and json.loads(p.stdout)['summary'], (p.stdout[-500:], p.stderr[-2000:])
    return wall,(r1.ru_utime-r0.ru_utime)+(r1.ru_stime-r0.ru_stime)

def compact_once(node, js, home, cwd, store):
    "`(seconds, summary, model calls)` of one `sessions compact` of a fresh copy of the store's files in `store`"
    for f in claw_db(home).parent.glob('openclaw-agent.sqlite*'): f.unlink()
    for f in store.iterdir(): shutil.copyfile(f, claw_db(home).parent/f.name)
    with ClawMock([]) as s:
        s.summary_text = '## Goal\nMOCK: a summary of the work, as a model would write it.'
        cfg = json.loads((home/'.openclaw'/'openclaw.json').read_text())
        cfg['models']['providers']['mock']['baseUrl'] = f'{s.url}/v1'
        (home/'.openclaw'/'openclaw.json').write_text(json.dumps(cfg, indent=2)+'\n')
        with Gateway(node, js, home, cwd) as g:
            t0 = time.perf_counter()
            rc,out,err = g.run(['sessions', 'compact', f'agent:main:explicit:{SID}', '--json'], timeout=600)
            dt = time.perf_counter()-t0
        calls = len(s.summaries())
    got = json.loads(out[out.index('{'):]) if '{' in out else dict(reason=err[-300:])
    return dt,(got.get('result') or {}).get('summary') if got.get('compacted') else None,calls,got.get('reason')

def auto_once(node, js, home, cwd, store):
    "`(seconds, summary calls, opens with the document?)` of an `agent --local` turn that compacts a fresh copy first"
    for f in claw_db(home).parent.glob('openclaw-agent.sqlite*'): f.unlink()
    for f in store.iterdir(): shutil.copyfile(f, claw_db(home).parent/f.name)
    with ClawMock([text('DONE')]) as s:
        cfg = json.loads((home/'.openclaw'/'openclaw.json').read_text())
        cfg['models']['providers']['mock']['baseUrl'] = f'{s.url}/v1'
        (home/'.openclaw'/'openclaw.json').write_text(json.dumps(cfg, indent=2)+'\n')
        t0 = time.perf_counter()
        rc,out,err = run_claw(node, js, home, cwd, ['agent', '--local', '--agent', 'main', '--session-id', SID,
                                                    '--message', 'Go on.', '--json'], timeout=600)
        dt = time.perf_counter()-t0
        said = json.dumps(s.main_requests()[-1]['body']['messages'][1]) if rc==0 and s.main_requests() else ''
    return dt,len(s.summaries()),'This session is being continued' in said

def main(mb=3, reps=1):
    node,js = install_openclaw()
    with tempfile.TemporaryDirectory() as d:
        home,cwd = Path(d)/'home',Path(d)/'work'
        cwd.mkdir()
        with ClawMock([]) as s: claw_config(home, s, cwd)
        print(f'load average {os.getloadavg()[0]:.2f}')
        stamps = big_store(node, js, home, cwd, mb)
        (store := Path(d)/'store').mkdir()
        for f in claw_db(home).parent.glob('openclaw-agent.sqlite*'): shutil.copyfile(f, store/f.name)
        inp = dict(hook_event_name='summarize', transcript_path=SID, session_id=SID, timestamps=stamps[:-20])
        job = min(hook_job(inp, claw_env(home, node)) for _ in range(reps))
        print(f"the plugin's job alone: {job[0]:.2f} s wall, {job[1]:.2f} s CPU")
        own = min((compact_once(node, js, home, cwd, store) for _ in range(reps)), key=lambda o: o[0])
        env = claw_env(home, node) | {k: v for k,v in os.environ.items() if k=='PYTHONPATH'}
        subprocess.run([str(EXE), '--install-hooks', 'openclaw'], env=env, check=True, capture_output=True)
        ours = min((compact_once(node, js, home, cwd, store) for _ in range(reps)), key=lambda o: o[0])
        for name,(dt,summary,calls,why) in (("OpenClaw's own, a loopback model", own), ("with the plugin", ours)):
            cut = '; cut by OpenClaw' if summary and 'Compaction summary truncated' in summary else ''
            said = f'summary {len_toks(summary):,} tokens, {len(summary):,} characters{cut}' if summary else None
            said = said or f'no compaction: {why}'
            print(f'{name}: {dt:.2f} s, {calls} model call(s); {said}')
        dt,calls,ours_first = auto_once(node, js, home, cwd, store)
        print(f'an agent --local turn that compacts first, with the plugin: {dt:.2f} s, {calls} summary call(s); '
              f"the model's request opens with the document: {ours_first}")
        print(f'load average after: {os.getloadavg()[0]:.2f}')

if __name__=='__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--mb', type=float, default=3)
    ap.add_argument('--reps', type=int, default=1)
    a = ap.parse_args()
    main(a.mb, a.reps)
