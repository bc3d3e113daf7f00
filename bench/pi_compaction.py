"""Pi's compaction with llmsurgery's extension against Pi's own, on a Pi session of about 3 MB, with the real client.

Run: `.venv/bin/python bench/pi_compaction.py [--mb 3] [--reps 3] [--session FILE]`. Not in the test suite
(tests/test_hosts_pi.py checks the same job against its bound). Pi (`@mariozechner/pi-coding-agent@0.73.1`, from the
tests' npm cache) runs offline in a temporary HOME against a loopback model (tests/pikit.py) that answers Pi's
summarization request at once.

The session: the real Claude Code sessions of tests/data/claude-real, read, and written as Pi writes its entries (ids,
`parentId` chain, usage) until the file holds about `--mb` megabytes. Each run compacts a fresh copy through
`pi --mode rpc` (`compact`, as `/compact` does), timing the command from its request to Pi's response:
- with the extension (`--install-hooks pi`): no model call; the summary is llmsurgery's document;
- Pi's own: its model call to the loopback model, which answers at once (a real model takes seconds to minutes).
It also times the extension's job alone (`python -P -m llmsurgery.hooks pi`), its wall and CPU time, and prints the
summary's tokens (o200k) against Pi's `tokensBefore`. Best of `--reps` each; the load average says how quiet it was."""
import argparse, json, os, resource, shutil, subprocess, sys, tempfile, time
from pathlib import Path
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT/'tests'))
from pikit import install_pi, PiMock, PiRpc, pi_config, pi_env, pi_session_from, pi_cut, agent_dir
from hostkit import EXE
from llmsurgery.sessions import read_session
from llmsurgery.toks import len_toks

REAL = ('258c7280-ae70-4798-800f-63464d01a85d.jsonl', '8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl')

def big_session(cwd, mb):
    "The lines of a Pi session of about `mb` MB, run in `cwd`, made of the real sessions"
    msgs = [m for f in REAL for m in read_session(ROOT/'tests'/'data'/'claude-real'/f, whole=True, warn=False).msgs]
    return pi_session_from(msgs, cwd, int(mb*1e6))

def compact_once(js, home, cwd, lines, hooked, keep=None):
    "`(seconds, compaction entry, model calls)` of one RPC `compact` of a fresh copy of `lines`"
    d = agent_dir(home)/'sessions'/'copies'
    d.mkdir(parents=True, exist_ok=True)
    f = d/f'copy-{time.time_ns()}.jsonl'
    f.write_text(''.join(lines))
    with PiMock([]) as s:
        s.summary_text = '## Goal\nMOCK: a summary of the work, as a model would write it.'
        pi_config(home, s, context=200_000, keep=keep, cwd=cwd)
        with PiRpc(js, home, cwd, '--session', str(f)) as rpc:
            rpc.send(dict(type='get_state'), timeout=120)   # Pi has opened the session
            t0 = time.perf_counter()
            r = rpc.send(dict(type='compact'), timeout=300)
            dt = time.perf_counter()-t0
        calls = len(s.summaries())
    assert r.get('success'), r
    comp = [json.loads(l) for l in f.read_text().splitlines() if '"type":"compaction"' in l][-1]
    assert comp['fromHook']==hooked, comp.get('fromHook')
    return dt,comp,calls

def hook_job(inp, env):
    "`(wall, cpu)` seconds of one run of the extension's job on input `inp`, in environment `env`"
    r0,t0 = resource.getrusage(resource.RUSAGE_CHILDREN),time.perf_counter()
    p = subprocess.run([sys.executable, '-P', '-m', 'llmsurgery.hooks', 'pi'], input=json.dumps(inp),
                       capture_output=True, text=True, env=env)
    wall,r1 = time.perf_counter()-t0,resource.getrusage(resource.RUSAGE_CHILDREN)
    assert p.returncode==0 and json.loads(p.stdout)['summary'], p.stderr
    return wall,(r1.ru_utime-r0.ru_utime)+(r1.ru_stime-r0.ru_stime)

def genuine(path, cwd):
    "The lines of the session file at `path`, its header's directory made `cwd` (Pi opens none whose directory is gone)"
    lines = Path(path).read_text().splitlines(keepends=True)
    return [json.dumps(json.loads(lines[0]) | dict(cwd=str(cwd)))+'\n', *lines[1:]]

def main(mb=3, reps=3, path=None):
    js = install_pi()
    with tempfile.TemporaryDirectory() as d:
        home,cwd = Path(d)/'home',Path(d)/'work'
        cwd.mkdir()
        lines = genuine(path, cwd.resolve()) if path else big_session(cwd.resolve(), mb)
        keep = 50 if path else None   # a small session: Pi keeps its last 50 tokens, as the tests have it
        size = sum(len(l.encode()) for l in lines)
        print(f'session: {size/1e6:.2f} MB, {len(lines):,} lines; load average {os.getloadavg()[0]:.2f}')
        f = cwd/'big.jsonl'
        f.write_text(''.join(lines))
        inp = dict(hook_event_name='session_before_compact', transcript_path=str(f), session_id='bench',
                   first_kept_entry_id=pi_cut(lines, 50 if path else 20_000), leaf_id=json.loads(lines[-1])['id'],
                   context_window=200_000, reserve_tokens=16_384)
        job = min(hook_job(inp, pi_env(home)) for _ in range(reps))
        print(f'the extension\'s job alone: {job[0]:.2f} s wall, {job[1]:.2f} s CPU')
        own = min((compact_once(js, home, cwd, lines, False, keep) for _ in range(reps)), key=lambda o: o[0])
        env = pi_env(home)
        subprocess.run([str(EXE), '--install-hooks', 'pi'], env=env, check=True, capture_output=True)
        ours = min((compact_once(js, home, cwd, lines, True, keep) for _ in range(reps)), key=lambda o: o[0])
        for name,(dt,comp,calls) in (('Pi\'s own, loopback model', own), ('with llmsurgery\'s extension', ours)):
            print(f'{name}: {dt:.2f} s, {calls} model call(s); summary {len_toks(comp["summary"]):,} tokens '
                  f'against tokensBefore {comp["tokensBefore"]:,}')
        print(f'load average after: {os.getloadavg()[0]:.2f}')

if __name__=='__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--mb', type=float, default=3)
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--session', help='a genuine Pi session to compact instead (tests/data/genuine/pi/pi_work.jsonl)')
    a = ap.parse_args()
    main(a.mb, a.reps, a.session)
