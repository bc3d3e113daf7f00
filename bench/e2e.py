"""End-to-end performance of `llmsurgery-compact` on large real-shaped Claude Code sessions, beside a JSON parse floor.

Run: `.venv/bin/python bench/e2e.py [--sizes 13,100,400] [--quick] [--rev REV] [--cache DIR] [--reps N]`. Not part of the test suite.

Inputs are built once, deterministically, into a cache dir outside the repository (default
`${XDG_CACHE_HOME:-~/.cache}/llmsurgery/bench`) and reused: the real sessions in `tests/data/claude-real/` chained
copy after copy into one long session of about each size. Each copy gets fresh ids (`uuid`, `parentUuid`,
`logicalParentUuid`, `leafUuid`, `sourceToolAssistantUUID`, `messageId`, by a per-copy uuid5 mapping; `sessionId` is one
per built file), and its root record's `parentUuid` points at the last record of the copy before, so the result reads as
one session holding many host compactions (`compact_boundary` + `isCompactSummary`). Record content is kept byte for
byte. The file ends with a whole big session, so the default mode (what follows the last compaction) has hundreds of
messages. A second input ends with a ~20 MB Bash tool result (stored twice, as Claude Code does: in the tool_result
block and in `toolUseResult.stdout`).

Each case runs in its own subprocess; wall time is measured around it and its peak RSS is its own `ru_maxrss`, as
GNU `time` (or a small wrapper interpreter) reports it for that one process. The parse floor is the same file read
line by line with stdlib `json.loads` in a fresh interpreter. Prints a markdown table: time, ratio to the floor, peak RSS, RSS as a multiple of the file size, and the 1-minute load
average when the case started (the numbers are only as quiet as the machine).
"""
import argparse, compileall, os, platform, random, re, subprocess, sys, tempfile, time, uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
# the console script's body, importing llmsurgery from the directory given first (fastcore's call_parse needs a file)
LAUNCH = ('import sys\nsys.path.insert(0, sys.argv.pop(1))\nsys.argv[0] = "llmsurgery-compact"   # before the import, as the console script: the CLI sets up its process then\n'
          'from llmsurgery.cli import llmsurgery_compact\nif __name__ == "__main__":\n    sys.exit(llmsurgery_compact())\n')
BUILD = 'v1'   # bump when the recipe changes: cached inputs are named by it
NS = uuid.UUID('6f1c3e52-7a0b-4d8e-9f21-1b5e0c7d4a93')
BIG = ('258c7280-ae70-4798-800f-63464d01a85d.jsonl', '8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl')
CYCLE = BIG + ('tool_heavy.jsonl', 'short.jsonl')

def find_data():
    "The `claude-real` directory, in the repository"
    d = ROOT/'tests'/'data'/'claude-real'
    return d if d.is_dir() else sys.exit(f'cannot find {d}')

def default_cache():
    return Path(os.environ.get('XDG_CACHE_HOME') or Path.home()/'.cache')/'llmsurgery'/'bench'

# --- building inputs ---

_id_keys = 'uuid|parentUuid|logicalParentUuid|leafUuid|sourceToolAssistantUUID|messageId'
_id_re = re.compile(r'"(' + _id_keys + r'|sessionId)":(?:"([0-9a-fA-F-]{36})"|null)')

class Template:
    "A session file's text split at its id fields, so copies with other ids are joined without parsing"
    def __init__(self, path):
        txt = path.read_text(encoding='utf-8', errors='surrogateescape')
        if not txt.endswith('\n'): txt += '\n'
        self.lits, self.fields, pos = [], [], 0   # lits[i] precedes fields[i]; lits[-1] ends the text
        for m in _id_re.finditer(txt):
            self.lits.append(txt[pos:m.start()]); pos = m.end()
            line = txt[txt.rfind('\n', 0, m.start())+1:txt.find('\n', m.start())]
            root = m[1]=='parentUuid' and m[2] is None and '"compact_boundary"' not in line
            self.fields.append((m[1], m[2], root))
        self.lits.append(txt[pos:])
        self.last = next(old for k,old,_ in reversed(self.fields) if k=='uuid' and old)

    def copy(self, tag, session, prev_last):
        "Text of this session with ids remapped for copy `tag`; `(text, new id of its last record)`"
        ids, out, rooted = {}, [], False
        def new(old): return ids.get(old) or ids.setdefault(old, str(uuid.uuid5(NS, f'{tag}:{old}')))
        for lit,(k,old,root) in zip(self.lits, self.fields):
            out.append(lit)
            if k=='sessionId': v = f'"{session}"'
            elif old: v = f'"{new(old)}"'
            elif root and not rooted and prev_last: v, rooted = f'"{prev_last}"', True
            else: v = 'null'
            out.append(f'"{k}":{v}')
        out.append(self.lits[-1])
        return ''.join(out), new(self.last)

def write_atomic(path, chunks):
    "Write text `chunks` to `path` through a temporary file, so a half-built input is never reused"
    tmp = path.with_suffix('.tmp')
    with open(tmp, 'w', encoding='utf-8', errors='surrogateescape', newline='') as f:
        for c in chunks: f.write(c)
    tmp.replace(path)

def build_chain(data, cache, mb):
    "A ~`mb` MB session of real sessions chained copy after copy; it stops after a big session once past `mb`"
    path = cache/f'claude-chain-{mb}mb-{BUILD}.jsonl'
    if path.exists(): return path
    tpls = {n: Template(data/n) for n in CYCLE}
    session = str(uuid.uuid5(NS, path.name))
    def chunks():
        size, prev, i = 0, None, 0
        while True:
            name = CYCLE[i % len(CYCLE)]
            txt, prev = tpls[name].copy(f'{mb}:{i}', session, prev)
            size += len(txt.encode('utf-8', 'surrogateescape')); i += 1
            yield txt
            if name in BIG and size >= mb*1e6: return
    t = time.perf_counter()
    write_atomic(path, chunks())
    print(f'built {path} ({path.stat().st_size/1e6:,.1f} MB) in {time.perf_counter()-t:.1f} s', file=sys.stderr)
    return path

def log_text(nbytes, seed=0):
    "About `nbytes` of varied build/test log lines, deterministic"
    rnd = random.Random(seed)
    mods = ['api.router', 'db.pool', 'worker.queue', 'auth.session', 'cache.lru', 'http.client', 'sched.cron', 'fs.watch']
    words = ('request handled retry timeout connection closed opened user job done failed parsed flushed batch '
             'commit rollback token refresh upstream latency shard replica index rebuild warm cold').split()
    lvls = ['DEBUG']*5 + ['INFO']*8 + ['WARN']*2 + ['ERROR']
    out, n, ts = [], 0, 1_770_000_000.0
    while n < nbytes:
        ts += rnd.random()*0.05
        r = rnd.random()
        if r < 0.08:
            ln = f'tests/test_{rnd.choice(mods).split(".")[1]}.py::test_{"_".join(rnd.sample(words, 2))}[{rnd.randrange(64)}] ' \
                 f'{"PASSED" if rnd.random()<0.9 else "FAILED"} [{rnd.randrange(101):3d}%]'
        elif r < 0.1:
            ln = f'    at {rnd.choice(mods)}.{rnd.choice(words)}({rnd.choice(words)}.ex:{rnd.randrange(1, 900)})'
        else:
            ln = (f'{time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts))}.{int(ts*1000)%1000:03d}Z {rnd.choice(lvls):5} '
                  f'[{rnd.choice(mods)}] {" ".join(rnd.choices(words, k=rnd.randrange(3, 9)))} '
                  f'id={rnd.getrandbits(48):012x} took={rnd.randrange(1, 5000)}ms')
        out.append(ln); n += len(ln)+1
    return '\n'.join(out)

def build_huge_result(data, cache, mb=20):
    "A real session followed by one Bash call whose result is ~`mb` MB of log, and a short reply"
    import json
    path = cache/f'claude-last-result-{mb}mb-{BUILD}.jsonl'
    if path.exists(): return path
    session = str(uuid.uuid5(NS, path.name))
    txt, last = Template(data/BIG[1]).copy('huge:0', session, None)
    log = log_text(mb*1_000_000)
    base = dict(isSidechain=False, userType='external', cwd='/home/USER/projects/spotter-worktrees/spotter-fum',
                sessionId=session, version='2.1.39', gitBranch='spotter-fum', slug='drifting-tumbling-whisper')
    ids = [str(uuid.uuid5(NS, f'huge:tail:{i}')) for i in range(3)]
    call = dict(type='tool_use', id='toolu_01BenchHugeLogAaaaaaaaaa', name='Bash',
                input=dict(command='mix test --trace 2>&1 | tee /tmp/full.log', description='Run the full test suite'))
    recs = [dict(parentUuid=last, **base, message=dict(model='claude-opus-4-6', id='msg_01BenchHugeLogCall', type='message',
                 role='assistant', content=[call], stop_reason=None), type='assistant', uuid=ids[0],
                 timestamp='2026-02-11T23:00:00.000Z'),
            dict(parentUuid=ids[0], **base, type='user', message=dict(role='user', content=[dict(
                 tool_use_id=call['id'], type='tool_result', content=log, is_error=False)]), uuid=ids[1],
                 timestamp='2026-02-11T23:04:00.000Z', toolUseResult=dict(stdout=log, stderr='', interrupted=False, isImage=False),
                 sourceToolAssistantUUID=ids[0]),
            dict(parentUuid=ids[1], **base, message=dict(model='claude-opus-4-6', id='msg_01BenchHugeLogReply', type='message',
                 role='assistant', content=[dict(type='text', text='The suite ran; the log is long. Two tests failed, '
                 'both timeouts in the worker queue; I will look at those next.')], stop_reason='end_turn'),
                 type='assistant', uuid=ids[2], timestamp='2026-02-11T23:04:10.000Z')]
    t = time.perf_counter()
    write_atomic(path, [txt] + [json.dumps(r, ensure_ascii=False, separators=(',', ':'))+'\n' for r in recs])
    print(f'built {path} ({path.stat().st_size/1e6:,.1f} MB) in {time.perf_counter()-t:.1f} s', file=sys.stderr)
    return path

# --- measuring ---

FLOOR = ('import json,sys\n'
         'for l in open(sys.argv[1], encoding="utf-8", errors="replace"):\n'
         '    if l.strip(): json.loads(l)\n')

# Linux charges a child's peak RSS with the mm it was forked from (exec records the old mm's high-water mark), so
# `os.wait4` on a child of this process, grown by building inputs, over-reports small cases. The child is therefore
# started by a tiny parent: GNU time when present, else a fresh interpreter that reports its child's `ru_maxrss`.
TIME = '/usr/bin/time' if Path('/usr/bin/time').exists() and sys.platform=='linux' else None
WRAP = ('import os,subprocess,sys\n'
        'p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)\n'
        '_,st,ru = os.wait4(p.pid, 0); p.returncode = os.waitstatus_to_exitcode(st)\n'
        'open(sys.argv[1], "w").write(f"{p.returncode} {ru.ru_maxrss*(1 if sys.platform==\'darwin\' else 1024)}")\n')

def run(cmd):
    "Run `cmd` with stdout to /dev/null: `(wall seconds, peak RSS bytes of that process, last report line on stderr)`"
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile('r') as out:
        pre = [TIME, '-o', out.name, '-f', '%x %M'] if TIME else [PY, '-c', WRAP, out.name]
        t = time.perf_counter()
        rc = subprocess.run(pre + cmd, stdout=subprocess.DEVNULL, stderr=err).returncode
        dt = time.perf_counter() - t
        err.seek(0)
        lines = [l.strip() for l in re.split(r'[\r\n]', err.read().decode('utf-8', 'replace')) if l.strip()]
        res = out.read().split()
    if rc or not res or res[-2]!='0': sys.exit(f'{cmd} failed ({rc}):\n' + '\n'.join(lines[-20:]))
    rss = int(res[-1]) * (1024 if TIME else 1)   # GNU time's %M is in KiB
    return dt, rss, next((l for l in reversed(lines) if 'tokens' in l), '')

def measure(cmd, reps):
    "Best time and largest peak RSS of `reps` runs of `cmd`, its last report line, and the 1-minute load average before it"
    ld = os.getloadavg()[0]
    rs = [run(cmd) for _ in range(reps)]
    return min(r[0] for r in rs), max(r[1] for r in rs), rs[-1][2], ld

def compiled(d):
    "Code directory `d`, its modules byte-compiled as pip installs them: a machine that sets PYTHONDONTWRITEBYTECODE would compile each on every run"
    compileall.compile_dir(str(d/'llmsurgery'), quiet=1)
    return d

def code_dir(cache, rev):
    "A directory to import `llmsurgery` from, byte-compiled: the repository, or the package at git `rev` extracted into the cache"
    if not rev: return compiled(ROOT)
    sha = subprocess.run(['git', '-C', str(ROOT), 'rev-parse', '--verify', f'{rev}^{{commit}}'], capture_output=True, text=True, check=True).stdout.strip()
    d = cache/f'code-{sha[:12]}'
    if not (d/'llmsurgery').is_dir():
        tmp = Path(tempfile.mkdtemp(dir=cache))
        arc = subprocess.run(['git', '-C', str(ROOT), 'archive', sha, 'llmsurgery'], capture_output=True, check=True).stdout
        subprocess.run(['tar', '-x', '-C', str(tmp)], input=arc, check=True)
        tmp.replace(d)
    return compiled(d)

def load(): return ' / '.join(f'{x:.2f}' for x in os.getloadavg())

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sizes', default='13,100,400', help='chained session sizes in MB, comma-separated')
    ap.add_argument('--quick', action='store_true', help='13 MB only (and the 20 MB-last-result case)')
    ap.add_argument('--no-huge', action='store_true', help='skip the 20 MB-last-result case')
    ap.add_argument('--cache', type=Path, default=default_cache(), help='where inputs are built and reused')
    ap.add_argument('--rev', help='measure llmsurgery as of this git revision (extracted into the cache) instead of the working tree')
    ap.add_argument('--reps', type=int, default=1, help='runs per case; the best time is shown')
    a = ap.parse_args()
    sizes = [13] if a.quick else [int(s) for s in a.sizes.split(',') if s.strip()]
    a.cache.mkdir(parents=True, exist_ok=True)
    data = find_data()
    t0 = time.perf_counter()
    chains = [build_chain(data, a.cache, mb) for mb in sizes]
    huge = None if a.no_huge else build_huge_result(data, a.cache)
    code = code_dir(a.cache, a.rev)
    (launch := a.cache/'llmsurgery-compact.py').write_text(LAUNCH)
    CLI = [PY, str(launch), str(code)]
    rev = subprocess.run(['git', '-C', str(ROOT), 'log', '-1', '--format=%h %s', *([a.rev] if a.rev else [])], capture_output=True, text=True).stdout.strip()
    dirty = not a.rev and subprocess.run(['git', '-C', str(ROOT), 'status', '--porcelain', '--', 'llmsurgery'], capture_output=True, text=True).stdout.strip()
    print(f'llmsurgery-compact end to end: {platform.node()}, {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}')
    print(f'code: {rev[:90]}' + (f' (extracted to {code})' if a.rev else ' (working tree' + (', with uncommitted changes)' if dirty else ')')))
    print(f'load average (1/5/15 min) at start: {load()}; reps per case: {a.reps}\n')
    rows = []
    startup = measure([*CLI, str(data/'short.jsonl')], a.reps)
    rows.append(('short.jsonl (startup)', None, 'llmsurgery-compact FILE', startup, None))
    sys.stdout.flush()
    cases = [(p, [('', []), ('--all', ['--all']), ('--all --max-tokens 32000', ['--all', '--max-tokens', '32000'])]) for p in chains]
    if huge: cases.append((huge, [('', []), ('--max-tokens 2000', ['--max-tokens', '2000'])]))
    for path, opts in cases:
        size = path.stat().st_size
        floor = measure([PY, '-c', FLOOR, str(path)], a.reps)
        rows.append((path.name, size, 'parse floor: json.loads per line', floor, floor[0]))
        for label, args in opts:
            r = measure([*CLI, str(path), *args], a.reps)
            rows.append((path.name, size, f'llmsurgery-compact FILE {label}'.strip(), r, floor[0]))
            print(f'  {path.name} {label or "(default)"}: {r[0]:.1f} s, {r[1]/2**20:,.0f} MiB; {r[2]}', file=sys.stderr)
    print('| input | size | case | time | × floor | peak RSS | RSS ÷ size | load | report line |')
    print('|---|---:|---|---:|---:|---:|---:|---:|---|')
    for name, size, case, (dt, rss, rep, ld), fl in rows:
        ratio = f'{dt/fl:,.1f}×' if fl and 'floor' not in case else ''
        mb, per = (f'{size/1e6:,.1f} MB', f'{rss/size:,.1f}×') if size else ('', '')
        print(f'| {name} | {mb} | {case} | {dt:,.2f} s | {ratio} | {rss/2**20:,.0f} MiB | {per} | {ld:.2f} | {rep} |')
    print(f'\nload average at end: {load()}; whole run {time.perf_counter()-t0:,.0f} s (building included)')
    print(f'uptime: {subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()}')

if __name__ == '__main__': main()
