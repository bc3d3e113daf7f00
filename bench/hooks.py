"""How fast llmsurgery's SessionStart(compact) hook is on real sessions, and where its time goes (the goal: at most 0.5 s).

Run: `.venv/bin/python bench/hooks.py [--reps 5] [--grow 1 10 40]`. Not part of the test suite.
For each real Claude Code session (tests/data/claude-real/, else ../shared/data/claude-real/) it runs the hook as the
host does, `python -P -m llmsurgery.hooks claude` with the event on stdin, and prints its wall time (best and median of
`reps` runs) and the size of what it adds; then the time split into the interpreter's start, the imports and the work;
then the same hook on copies whose part before the last boundary is repeated `grow` times (its cost must not grow with
it); and the hook's cost on a Codex prompt it lets pass (it runs on every prompt there).
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path

root = Path(__file__).resolve().parent.parent
from llmsurgery.hosts.base import host_named
from llmsurgery.hosts.claude import cc_boundary
from llmsurgery.jsonl import last_boundary
from llmsurgery.hookstate import hook_facts, compacted_state
claude_host = host_named('claude')
cc_boundary_mark = claude_host.mark

def sessions():
    "The real Claude Code sessions: the repository's copy, else the shared one"
    for d in (root/'tests'/'data'/'claude-real', root.parent/'shared'/'data'/'claude-real'):
        if d.is_dir(): return sorted(d.glob('*.jsonl'))
    sys.exit('no claude-real sessions found')

def event(path): return json.dumps(dict(hook_event_name='SessionStart', source='compact', session_id=path.stem,
                                        transcript_path=str(path), cwd=str(path.parent))).encode()

def run_hook(stdin, name='claude', env=None, gate=()):
    "One run of the hook as the host runs it (its command's `gate`): (seconds, stdout)"
    t = time.perf_counter()
    p = subprocess.run([sys.executable, '-P', '-m', 'llmsurgery.hooks', name, *gate], input=stdin, capture_output=True,
                       env=env, timeout=60)
    return time.perf_counter()-t, p.stdout

def times(f, reps):
    "(best, median) of `reps` runs of `f`, which returns its own time"
    ts = [f() for _ in range(reps)]
    return min(ts), statistics.median(ts)

def clock(f):
    "`f` as a function that returns how long a call of it took"
    def timed():
        t = time.perf_counter()
        f()
        return time.perf_counter()-t
    return timed

def ms(s): return f'{s*1e3:,.0f} ms'

def wall_table(paths, reps, env):
    print('| session | size | part since the last boundary | hook wall time, best / median | added (characters) | facts |')
    print('|---|---|---|---|---|---|')
    for p in paths:
        runs = [run_hook(event(p), env=env) for _ in range(reps)]
        ts,out = [t for t,_ in runs],runs[-1][1]
        added = json.loads(out)['hookSpecificOutput']['additionalContext'] if out else ''
        with open(p, 'rb') as f: start = last_boundary(f, cc_boundary_mark, cc_boundary)
        size = p.stat().st_size
        facts = sum(1 for l in added.splitlines() if l.startswith('- '))
        print(f'| {p.name[:12]} | {size/1e6:.2f} MB | {(size-start)/1e6:.2f} MB | {ms(min(ts))} / {ms(statistics.median(ts))} '
              f'| {len(added):,} | {facts} |')

def split_table(paths, reps):
    "Where the time goes: the interpreter, the imports, then each step of the work in this process"
    bare = times(lambda: _timed([sys.executable, '-P', '-c', 'pass']), reps)[0]
    imp = times(lambda: _timed([sys.executable, '-P', '-c', 'import llmsurgery.hooks']), reps)[0]
    print(f'\nPython starts in {ms(bare)}; importing llmsurgery.hooks (and so the service and both hosts) adds {ms(imp-bare)}.\n')
    print('| session | read the part | read the head (task, cwd) | facts | whole job (`compacted_state`) |')
    print('|---|---|---|---|---|')
    for p in paths:
        part = times(clock(lambda: claude_host.compacted_part(p)), reps)[0]
        head = times(clock(lambda: claude_host.read_head(p)), reps)[0]
        msgs,kept = claude_host.compacted_part(p)
        facts = times(clock(lambda: hook_facts(msgs, None, kept)), reps)[0]
        job = times(clock(lambda: compacted_state(p, claude_host)), reps)[0]
        print(f'| {p.name[:12]} | {ms(part)} | {ms(head)} | {ms(facts)} | {ms(job)} |')

def _timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter()-t

def grown(p, k, d):
    "A copy of session `p` whose part before its last boundary is repeated `k` times"
    b = p.read_bytes()
    with open(p, 'rb') as f: start = last_boundary(f, cc_boundary_mark, cc_boundary)
    out = Path(d)/f'{p.stem}-x{k}.jsonl'
    out.write_bytes(b[:start]*k + b[start:])
    return out

def growth_table(paths, grow, reps, env):
    print('\n| session | before the last boundary, repeated | file size | hook wall time, best |')
    print('|---|---|---|---|')
    with tempfile.TemporaryDirectory() as d:
        for p in paths:
            with open(p, 'rb') as f:
                if not last_boundary(f, cc_boundary_mark, cc_boundary): continue
            for k in grow:
                g = grown(p, k, d)
                t = min(run_hook(event(g), env=env)[0] for _ in range(reps))
                print(f'| {p.name[:12]} | {k}x | {g.stat().st_size/1e6:,.1f} MB | {ms(t)} |')

def resume_table(paths, env):
    "`/compact llmsurgery` in Claude Code: the PreCompact hook writing the resumable session (a temporary store)"
    print('\n| session | `/compact llmsurgery` hook wall time | its message |')
    print('|---|---|---|')
    for p in paths:
        with tempfile.TemporaryDirectory() as d:
            ev = json.dumps(dict(hook_event_name='PreCompact', trigger='manual', custom_instructions='llmsurgery',
                                 session_id=p.stem, transcript_path=str(p), cwd=d)).encode()
            t = time.perf_counter()
            r = subprocess.run([sys.executable, '-P', '-m', 'llmsurgery.hooks', 'claude'], input=ev, capture_output=True,
                               env=env|dict(CLAUDE_CONFIG_DIR=d), cwd=d, timeout=300)
            t = time.perf_counter()-t
            msg = r.stderr.decode().splitlines()
            print(f"| {p.name[:12]} | {ms(t)} (status {r.returncode}) | {msg[-2] if len(msg)>1 else msg} |")

def pass_line(reps, env):
    ev = json.dumps(dict(hook_event_name='UserPromptSubmit', prompt='fix the parser', session_id='t',
                         transcript_path='/nowhere.jsonl', cwd='/')).encode()
    best,med = times(lambda: run_hook(ev, 'codex', env, ['--when', 'prompt=/compact llmsurgery'])[0], reps)
    print(f"\nOn a Codex prompt it lets pass (the hook runs on every prompt there): {ms(best)} best, {ms(med)} median.")

if __name__=='__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--reps', type=int, default=5)
    ap.add_argument('--grow', type=int, nargs='*', default=[1, 10, 40])
    a = ap.parse_args()
    paths = sessions()
    with tempfile.TemporaryDirectory() as state:
        env = dict(os.environ, XDG_STATE_HOME=state)   # a failure's log line stays out of the user's state
        print(f'Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}\n')
        wall_table(paths, a.reps, env)
        split_table(paths, a.reps)
        growth_table(paths, a.grow, a.reps, env)
        resume_table(paths, env)
        pass_line(a.reps, env)
        if (Path(state)/'llmsurgery'/'hooks.log').exists(): print('\nhooks.log:', (Path(state)/'llmsurgery'/'hooks.log').read_text())
