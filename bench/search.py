"""Search across every host's sessions: the index's build, refresh and query on a store of 1 GB or more, each beside its baseline.

Run: `.venv/bin/python bench/search.py [--mb 1000] [--reps 5] [--cache DIR]`. Not part of the test suite (`make bench` runs it).

The store is built once, deterministically, under the cache dir (default `${XDG_CACHE_HOME:-~/.cache}/llmsurgery/bench`)
and reused: a sandboxed HOME whose Claude Code store holds copies of the real sessions in `tests/data/claude-real/` and the
genuine ones in `tests/data/genuine/` (fresh ids per copy, as bench/e2e.py makes them; each copy in a project of its own
among 40), whose Codex store holds copies of the genuine rollouts, whose Gemini CLI store holds copies of the genuine
log, and whose opencode store is the genuine database. The index lives in that sandbox's own XDG_CACHE_HOME.

Each measure is a ratio to its baseline taken in the same run, the best of `--reps` turns of each (the machine is shared):
- the first full build (`llmsurgery-compact --reindex`, a fresh interpreter) beside the floor of reading the same files:
  every JSON line (and opencode's JSON rows) parsed with stdlib `json.loads` in a fresh interpreter; goal <= 2x;
- a query on a current index, in process (`search.matches`), beside cass's 60 ms; goal <= 1x;
- the whole command `llmsurgery-compact --search WORDS`, interpreter start included, beside `grep -rF WORDS` over the
  same store files; goal < 0.25x;
- the refresh when nothing changed, in process, beside 50 ms; and after a session grew by 1 MB, beside 200 ms.
"""
import argparse, json, os, platform, re, shutil, sqlite3, subprocess, sys, time, uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import Template, NS, ROOT, PY, LAUNCH, default_cache, compiled, load

BUILD = 'v1'   # bump when the recipe changes: the cached store is named by it
DATA = ROOT/'tests'/'data'
CC_SRC = [DATA/'claude-real'/n for n in ('258c7280-ae70-4798-800f-63464d01a85d.jsonl', '8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl',
          'tool_heavy.jsonl', 'short.jsonl', 'subagent.jsonl')] + sorted((DATA/'genuine').glob('claude_*.jsonl'))
CX_SRC = sorted((DATA/'genuine').glob('codex_*.jsonl'))
GM_SRC = DATA/'gemini'/'gemini_compressed.jsonl'
PROJECTS = 40
QUERIES = ['transcript annotations', '"git commit"', 'notes.txt', 'annot*', 'shopping list', 'mix test --trace']

def sandbox(home):
    "The environment of a user whose HOME is `home`: every host's store, and the index, under it"
    env = {k: v for k, v in os.environ.items() if k in ('PATH', 'LANG', 'LC_ALL', 'TMPDIR', 'USER')}
    return env | dict(HOME=str(home), XDG_CACHE_HOME=str(home/'.cache'), XDG_DATA_HOME=str(home/'.local/share'),
                      XDG_STATE_HOME=str(home/'.local/state'), XDG_CONFIG_HOME=str(home/'.config'))

_cwd_re = re.compile(r'"cwd":"([^"]*)"')

def cc_copy(tpl, src_cwd, i, unique=False):
    "Copy `i` of a Claude Code session template: fresh ids, its directory in project `i % PROJECTS`, with `unique` every text and result string its own; `(session id, project, text)`"
    sid = str(uuid.uuid5(NS, f'search:{BUILD}:cc:{i}'))
    proj = f'/home/bench/project-{i % PROJECTS:02d}'
    txt, _ = tpl.copy(f'search:{i}', sid, None)
    if unique: txt = txt.replace('"text":"', f'"text":"copy{i} ').replace('"content":"', f'"content":"copy{i} ')
    return sid, proj, txt.replace(f'"cwd":"{src_cwd}', f'"cwd":"{proj}') if src_cwd else txt

def build_store(cache, mb, unique=False):
    "The sandboxed HOME holding a store of at least `mb` MB across the hosts (with `unique`, no two copies share a text); built once, reused"
    home = cache/f'search-{mb}mb{"-unique"*unique}-{BUILD}'/'home'
    if (home/'.built').exists(): return home
    if home.exists(): shutil.rmtree(home)
    t, size, i = time.perf_counter(), 0, 0
    tpls = [(Template(p), (_cwd_re.search(p.read_text()) or [None, None])[1]) for p in CC_SRC]
    projects = home/'.claude'/'projects'
    while size < mb*1e6:
        tpl, cwd = tpls[i % len(tpls)]
        sid, proj, txt = cc_copy(tpl, cwd, i, unique)
        d = projects/re.sub(r'[^A-Za-z0-9]', '-', proj); d.mkdir(parents=True, exist_ok=True)
        (f := d/f'{sid}.jsonl').write_text(txt, encoding='utf-8', errors='surrogateescape')
        os.utime(f, (1.77e9 + i*600,)*2)
        size += f.stat().st_size; i += 1
    for j in range(300):
        src = CX_SRC[j % len(CX_SRC)]
        txt = src.read_text()
        old = json.loads(txt.splitlines()[0])['payload']['id']
        new = str(uuid.uuid5(NS, f'search:{BUILD}:cx:{j}'))
        d = home/'.codex'/'sessions'/'2026'/f'{1 + j//100:02d}'/f'{1 + j%28:02d}'; d.mkdir(parents=True, exist_ok=True)
        (d/f'rollout-2026-01-01T10-00-00-{new}.jsonl').write_text(txt.replace(old, new))
    gm = GM_SRC.read_text()
    old = json.loads(gm.splitlines()[0])['sessionId']
    for j in range(100):
        new = str(uuid.uuid5(NS, f'search:{BUILD}:gm:{j}'))
        d = home/'.gemini'/'tmp'/f'bench-{j % 10}'/'chats'; d.mkdir(parents=True, exist_ok=True)
        (d/f'session-2026-01-01T10-{j % 60:02d}-{new[:8]}.jsonl').write_text(gm.replace(old, new))
    (oc := home/'.local'/'share'/'opencode').mkdir(parents=True)
    shutil.copyfile(DATA/'genuine'/'opencode.db', oc/'opencode.db')
    (home/'.built').touch()
    print(f'built {home} ({store_bytes(home)/1e6:,.0f} MB, {i} Claude Code sessions) in {time.perf_counter()-t:.0f} s', file=sys.stderr)
    return home

def store_files(home):
    "Every file of the hosts' stores under `home`: what grep reads"
    return [p for d in ('.claude', '.codex', '.gemini', '.local/share/opencode') for p in sorted((home/d).rglob('*')) if p.is_file()]

def store_bytes(home): return sum(p.stat().st_size for p in store_files(home))

FLOOR = ('import json, sqlite3, sys\n'
         'for p in sys.argv[1:]:\n'
         '    if p.endswith(".db"):\n'
         '        c = sqlite3.connect(f"file:{p}?mode=ro", uri=True)\n'
         '        for t in ("message", "part"):\n'
         '            for d, in c.execute(f"select data from {t}"): json.loads(d)\n'
         '        continue\n'
         '    for l in open(p, encoding="utf-8", errors="replace"):\n'
         '        if l.strip(): json.loads(l)\n')

def wall(cmd, env, reps, ok=(0,)):
    "The best wall time of `reps` runs of `cmd` (stdout discarded)"
    best = None
    for _ in range(reps):
        t = time.perf_counter()
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        dt = time.perf_counter() - t
        if p.returncode not in ok: sys.exit(f'{cmd[:4]} failed ({p.returncode}): {p.stderr.decode()[-2000:]}')
        best = dt if best is None else min(best, dt)
    return best

IN_PROCESS = r'''
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from llmsurgery import search as S
reps, queries, grow = int(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
def best(f):
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return min(ts)
res = {}
with S.locked(S.index_dir()) as d:
    db = S.current(d)
    res['query'] = {q: best(lambda: S.matches(db, q)) for q in queries}
    res['hits'] = {q: len(S.matches(db, q)[0]) for q in queries}
    res['unchanged'] = best(lambda: S.refresh(db))
    S.refresh(db)
    size, line = os.path.getsize(grow), open(sys.argv[5], 'rb').read()
    ts = []
    try:
        for k in range(reps):
            with open(grow, 'ab') as f: f.write(line)
            t = time.perf_counter(); n = S.refresh(db); ts.append(time.perf_counter()-t)
            assert n == 1, n
        res['grown'] = min(ts)
        res['grown_found'] = len(S.matches(db, 'benchgrowthmarker')[0])
    finally:
        os.truncate(grow, size)
        S.refresh(db)
    db.close()
print(json.dumps(res))
'''

def growth_bytes(cache):
    "About 1 MB of real Claude Code records, with fresh ids, ending in a reply that holds a word found nowhere else"
    p = cache/f'search-growth-{BUILD}.jsonl'
    if not p.exists():
        txt, _ = Template(CC_SRC[0]).copy('search:growth', str(uuid.uuid5(NS, 'search:growth')), None)
        lines = txt.encode('utf-8', 'surrogateescape').splitlines(keepends=True)
        out, n = [], 0
        for ln in lines[len(lines)//2:]:
            out.append(ln); n += len(ln)
            if n >= 1_000_000: break
        rec = dict(type='assistant', uuid=str(uuid.uuid5(NS, 'search:growth:last')), parentUuid=None, sessionId='x', cwd='/home/bench',
                   message=dict(role='assistant', id='msg_growth', model='claude', content=[dict(type='text', text='benchgrowthmarker reached')]))
        p.write_bytes(b''.join(out) + json.dumps(rec).encode() + b'\n')
    return p

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--mb', type=int, default=1000, help='size of the store, MB (the goals are for 1000 or more)')
    ap.add_argument('--reps', type=int, default=5, help='turns of each measure and of its baseline; the best of each is taken')
    ap.add_argument('--cache', type=Path, default=default_cache(), help='where the store is built and reused')
    ap.add_argument('--unique', action='store_true', help="a store whose copies share no text: each Claude Code copy's texts and results carry its own word")
    a = ap.parse_args()
    a.cache.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    home = build_store(a.cache, a.mb, a.unique)
    env, code = sandbox(home), compiled(ROOT)
    (launch := a.cache/'llmsurgery-compact.py').write_text(LAUNCH)
    cli = [PY, str(launch), str(code)]
    files = store_files(home)
    size = sum(p.stat().st_size for p in files)
    rev = subprocess.run(['git', '-C', str(ROOT), 'log', '-1', '--format=%h %s'], capture_output=True, text=True).stdout.strip()
    print(f'search across sessions: {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}')
    print(f'code: {rev[:90]}; store: {size/1e6:,.0f} MB in {len(files):,} files' + (', no two copies sharing a text' if a.unique else '') +
          f'; load average at start: {load()}; best of {a.reps}\n')
    rows = []
    build_reps = max(1, min(a.reps, 2))
    floor = wall([PY, '-c', FLOOR, *map(str, files)], env, build_reps)
    build = wall([*cli, '--reindex'], env, build_reps)
    idx = home/'.cache'/'llmsurgery'/'search'/'index.db'
    rows.append(('first full build (--reindex), whole command', build, 'JSON-lines parse floor', floor, 2.0))
    r = json.loads(subprocess.run([PY, '-c', IN_PROCESS, str(code), str(a.reps), json.dumps(QUERIES), str(grow_target(home)),
                                   str(growth_bytes(a.cache))], env=env, capture_output=True, text=True, check=True).stdout)
    worst = max(r['query'], key=r['query'].get)
    for q in QUERIES: rows.append((f'query {q!r} in process ({r["hits"][q]} hits)', r['query'][q], "cass's 60 ms", 0.060, 1.0))
    for q in ('transcript annotations', 'notes.txt', 'shopping list'):
        cmd = wall([*cli, '--search', q], env, a.reps)
        grep = wall(['grep', '-rF', q.strip('"'), *map(str, files)], env, a.reps, ok=(0, 1))
        rows.append((f'llmsurgery-compact --search {q!r}, whole command', cmd, 'grep -rF over the store files', grep, 0.25))
    rows.append(('refresh, nothing changed, in process', r['unchanged'], '50 ms', 0.050, 1.0))
    rows.append(('refresh after a session grew by 1 MB, in process', r['grown'], '200 ms', 0.200, 1.0))
    print('| measure | time | baseline | baseline time | ratio | goal | met |')
    print('|---|---:|---|---:|---:|---:|:-:|')
    for name, t, base, bt, goal in rows:
        print(f'| {name} | {t*1000:,.1f} ms | {base} | {bt*1000:,.1f} ms | {t/bt:.2f}x | <= {goal}x | {"yes" if t/bt <= goal else "NO"} |')
    print(f'\nindex: {idx.stat().st_size/1e6:,.0f} MB for {size/1e6:,.0f} MB of store; the grown session\'s new reply found: '
          f'{r["grown_found"]} hit; slowest query: {worst!r}')
    print(f'load average at end: {load()}; whole run {time.perf_counter()-t0:,.0f} s')

def grow_target(home):
    "The Claude Code session the growth measure appends to: the first copy of the biggest real session"
    return next(p for p in sorted((home/'.claude'/'projects').rglob('*.jsonl')) if p.stat().st_size > 2_500_000)

if __name__ == '__main__': main()
