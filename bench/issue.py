"""The release measures, each as a ratio against its own baseline taken in the same run, beside its goal.

Run: `make bench` (or `.venv/bin/python bench/issue.py [--mb 400] [--msgs 10000] [--reps 3] [--rev REV] [--rows ROWS]`).
Not part of the test suite. Rows: `--all` on the ~400 MB chained Claude Code session (bench/e2e.py builds it, cached
outside the repository) against the stdlib JSON-parse floor of the same file, its peak RSS against the file's size, the
default read against the same floor, the compaction (`compact_doc`) of the synthetic 10,000-message session in process
against llmsurgery 0.0.17 (bench/bench.py installs it in a venv of its own), the same on a session of that size in
which no result repeats (a document renders a repeated result once), and on one of short results and calls, as real
sessions mostly hold (0.0.17 tokenized each text whole, which costs little for a short one), the spec's renderer
(`compact_chat` with `compact_policy`) on each against 0.0.17's, the compaction and `compact_chat` of the two largest
real sessions (the latter read whole, as 0.0.17 reads them), and Codex's UserPromptSubmit hook letting an ordinary
prompt pass, against the bare interpreter, with the gate `--install-hooks` writes and without; the MCP server's
start (`llmsurgery-compact --mcp`) to its `initialize` answer, against the bare interpreter, and a `search` call on the
running server beside `llmsurgery-compact --search` of the same words (the real Claude Code sessions in a sandbox, the
index built first). Each version's modules are byte-compiled first, as an installed package's are. `--rev REV` measures
that git revision too (extracted into the cache), in the same run: a before and after on one machine. The machine may be
shared: ratios within one run are what compare.
"""
import argparse, functools, json, os, statistics, subprocess, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'examples'))
import e2e, bench
from make_examples import synth_claude

NEW_RUN = """import sys, time
sys.path.insert(0, sys.argv[1])
try:   # a revision since the hosts became classes, else one before
    from llmsurgery.hosts.base import host_named; read_claude = host_named('claude').read_lines
except ImportError: from llmsurgery.claude import read_claude
from llmsurgery.compact import compact_doc, compact_enc, compact_chat, compact_policy
lines, ts, kw = open(sys.argv[2]).read().splitlines(), [], dict(whole=True) if sys.argv[4:]==['whole'] else {}
compact_enc()
for _ in range(int(sys.argv[3])):
    t = time.perf_counter(); msgs = read_claude(lines, **kw); r = time.perf_counter()
    compact_doc(msgs, '/session.jsonl'); d = time.perf_counter()
    compact_chat(msgs, **compact_policy); ts.append((d-t, d-r, time.perf_counter()-d))
print(*map(min, zip(*ts)))
"""
OLD_RUN = """import json, sys, time
from llmsurgery.ant import recs2chat
from llmsurgery.compact import compact_chat, compact_content, compact_policy, compact_enc
lines, enc, ts = open(sys.argv[1]).read().splitlines(), compact_enc(), []
for _ in range(3):
    t = time.perf_counter(); msgs = recs2chat([json.loads(l) for l in lines]); r = time.perf_counter()
    chat = compact_chat(msgs, **compact_policy, enc=enc, last_n=5); c = time.perf_counter()
    compact_content(chat, '/session.jsonl'); d = time.perf_counter(); ts.append((d-t, d-r, c-r))
print(*map(min, zip(*ts)))
"""   # bench.OLD_RUN's compaction, and its `compact_chat` alone
REAL = [e2e.ROOT/'tests'/'data'/'claude-real'/f for f in e2e.BIG]   # the real sessions' two largest
GATE = ['--when', 'prompt=/compact llmsurgery']   # as `--install-hooks codex` writes the command (an older hook ignores it)
PASS = json.dumps(dict(hook_event_name='UserPromptSubmit', prompt='fix the parser', session_id='t',
                       transcript_path='/nowhere.jsonl', cwd='/')).encode()

def wall(cmd, env=None, stdin=b'', check=True):
    "Seconds one run of `cmd` takes"
    t = time.perf_counter()
    subprocess.run(cmd, input=stdin, capture_output=True, env=env, check=check, timeout=120)
    return time.perf_counter()-t

def median(f, reps): return statistics.median(f() for _ in range(reps))

def hook_row(code, reps, state, gate=GATE):
    "`(hook seconds, bare interpreter seconds)`: Codex's hook (its command's `gate`) on a prompt it lets pass, medians of `reps` runs"
    env = dict(os.environ, PYTHONPATH=str(code), XDG_STATE_HOME=state)
    bare = median(lambda: wall([sys.executable, '-P', '-c', 'pass'], env), reps)
    hook = median(lambda: wall([sys.executable, '-P', '-m', 'llmsurgery.hooks', 'codex', *gate], env, PASS), reps)
    return hook, bare

def big_hook_row(code, reps, state):
    "`(hook seconds, bare interpreter seconds)`: Claude Code's state hook on a 2 GB transcript holding no newline"
    env = dict(os.environ, PYTHONPATH=str(code), XDG_STATE_HOME=state)
    big = Path(state)/'big.jsonl'
    with open(big, 'wb') as f: f.truncate(2<<30)   # sparse: no disk taken
    ev = json.dumps(dict(hook_event_name='SessionStart', source='compact', session_id='t', transcript_path=str(big),
                         cwd='/')).encode()
    cmd = [sys.executable, '-P', '-m', 'llmsurgery.hooks', 'claude', '--when', 'source=compact']
    bare = median(lambda: wall([sys.executable, '-P', '-c', 'pass'], env), reps)
    hook = median(lambda: wall(cmd, env, ev, check=False), reps)   # an older hook's watchdog ends it with status 1
    big.unlink()
    return hook, bare

INIT = dict(protocolVersion='2025-06-18', capabilities={}, clientInfo=dict(name='bench', version='1'))
CLI = Path(sys.executable).parent/'llmsurgery-compact'   # the console script, importing llmsurgery from PYTHONPATH
WORDS = '"git commit"'

def rpc(p, id, method, params):
    "Send one JSON-RPC request to server `p` and read its answer"
    p.stdin.write((json.dumps(dict(jsonrpc='2.0', id=id, method=method, params=params))+'\n').encode()); p.stdin.flush()
    return json.loads(p.stdout.readline())

def mcp_start(env):
    "A started `llmsurgery-compact --mcp`, and the seconds from its start to its `initialize` answer"
    t = time.perf_counter()
    p = subprocess.Popen([str(CLI), '--mcp'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    rpc(p, 0, 'initialize', INIT)
    return p,time.perf_counter()-t

def mcp_row(code, reps, state):
    "`(start to initialize, bare interpreter)` seconds, medians of `reps` starts"
    env = dict(os.environ, PYTHONPATH=str(code), XDG_STATE_HOME=state)
    def once():
        p,took = mcp_start(env)
        p.stdin.close(); p.wait(10)
        return took
    return median(once, reps),median(lambda: wall([sys.executable, '-P', '-c', 'pass'], env), reps)

def mcp_home(state):
    "A sandbox whose only store is Claude Code's, holding the real sessions: its environment"
    home = Path(state)/'mcp-home'
    proj = home/'.claude'/'projects'/'-work'
    proj.mkdir(parents=True, exist_ok=True)
    for f in (e2e.ROOT/'tests'/'data'/'claude-real').glob('*.jsonl'): (proj/f.name).write_bytes(f.read_bytes())
    xdg = {f'XDG_{k}_HOME': str(home/k.lower()) for k in ('CACHE', 'CONFIG', 'DATA', 'STATE')}
    return dict(os.environ, HOME=str(home), CLAUDE_CONFIG_DIR=str(home/'.claude'), CODEX_HOME=str(home/'.codex'), **xdg)

def mcp_search_row(code, reps, state):
    "`(search call on the running server, --search WORDS)` seconds, medians of `reps`; the index built first"
    env = mcp_home(state) | dict(PYTHONPATH=str(code))
    cli = lambda: wall([str(CLI), '--search', WORDS], env)
    cli()   # builds the index: both then search a current one
    p,_ = mcp_start(env)
    def call(i):
        t = time.perf_counter()
        assert not rpc(p, i, 'tools/call', dict(name='search', arguments=dict(query=WORDS)))['result']['isError']
        return time.perf_counter()-t
    call(0)   # the tool's first call imports the search: a host's later calls don't
    res = statistics.median(call(i) for i in range(1, reps+1)),median(cli, reps)
    p.stdin.close(); p.wait(10)
    return res

def chat_row(code, path, reps, whole=False):
    "`(read + compact_doc, compact_doc, compact_chat)` seconds of this code in process on the session at `path` (read `whole`), each best of `reps`"
    args = [str(code), str(path), str(reps)] + ['whole']*whole
    out = subprocess.run([sys.executable, '-c', NEW_RUN, *args], capture_output=True, text=True, check=True)
    return tuple(map(float, out.stdout.split()))

def old_row(path, cache):
    "The same for llmsurgery 0.0.17, in its own venv"
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(bench.o200k_cache(cache)))
    out = subprocess.run([str(bench.old_python(cache)), '-c', OLD_RUN, str(path)], capture_output=True, text=True,
                         check=True, env=env, cwd=path.parent)
    return tuple(map(float, out.stdout.split()))

def e2e_rows(code, chain, cache, reps):
    "`(floor, --all, default)`, each `(best seconds, largest peak RSS)`: the three run in turn `reps` times, so a slow minute slows each"
    (launch := cache/'llmsurgery-compact.py').write_text(e2e.LAUNCH)
    cli = [e2e.PY, str(launch), str(code), str(chain)]
    cmds = [[e2e.PY, '-c', e2e.FLOOR, str(chain)], [*cli, '--all'], cli]
    runs = [[e2e.run(c) for c in cmds] for _ in range(reps)]
    return [(min(r[i][0] for r in runs), max(r[i][1] for r in runs)) for i in range(len(cmds))]

def chat_rows(code, synth, cache, reps):
    "`(doc, chat)`: `(0.0.17's, this code's)` seconds of the compaction and of `compact_chat`, best of `reps` turns of each (each turn best of 3 in process)"
    runs = [(old_row(synth, cache), chat_row(code, synth, 3)) for _ in range(reps)]
    best = lambda i, j: min(r[i][j] for r in runs)
    return (best(0, 1), best(1, 1)),(best(0, 2), best(1, 2))

def real_rows(code, cache, reps):
    "`(0.0.17's, this code's)` compactions of the real sessions, in seconds, summed over them (each best of `reps` turns)"
    rows = [chat_rows(code, f, cache, reps)[0] for f in REAL]
    return sum(o for o,_ in rows),sum(n for _,n in rows)

def real_chat_rows(code, cache, reps):
    "`(0.0.17's, this code's)` `compact_chat` of the real sessions read whole, as 0.0.17 reads them, summed (each best of `reps` turns, the two in turn: a slow minute slows both)"
    runs = [[(old_row(f, cache)[2], chat_row(code, f, 3, whole=True)[2]) for f in REAL] for _ in range(reps)]
    return tuple(sum(min(r[i][k] for r in runs) for i in range(len(REAL))) for k in (0, 1))

_pairs = ('chat', 'spec'),('unique', 'spec_unique'),('short', 'spec_short')

def measures(code, chain, sessions, cache, reps, state, rows):
    "Each of `rows`' `(value, baseline)` for the code in `code`, each value and its baseline measured in turn"
    res = {}
    if {'all', 'rss', 'default'} & rows:
        floor,whole,default = e2e_rows(code, chain(), cache, reps)
        res.update(all=(whole[0], floor[0]), rss=(whole[1], chain().stat().st_size), default=(default[0], floor[0]))
    for (doc,chat),path in zip(_pairs, sessions):   # each synthetic session: its compaction's row, its `compact_chat`'s
        if {doc, chat} & rows: res[doc],res[chat] = chat_rows(code, path, cache, reps)
    if 'real' in rows: res['real'] = real_rows(code, cache, reps)
    if 'spec_real' in rows: res['spec_real'] = real_chat_rows(code, cache, reps)
    if 'hook' in rows: res['hook'] = hook_row(code, max(reps, 5), state)
    if 'barehook' in rows: res['barehook'] = hook_row(code, max(reps, 5), state, gate=())
    if 'bighook' in rows: res['bighook'] = big_hook_row(code, reps, state)
    if 'mcp' in rows and (code/'llmsurgery'/'mcp_server.py').exists(): res['mcp'] = mcp_row(code, max(reps, 5), state)
    if 'mcp_search' in rows and (code/'llmsurgery'/'mcp_server.py').exists():
        res['mcp_search'] = mcp_search_row(code, max(reps, 5), state)
    return res

ROWS = [('all', '`--all` on the {mb} MB session, against the JSON-parse floor of the file', '{:.2f} s', '≤ 2x, then 1.5x', lambda v,b: v/b<=2),
        ('rss', "its peak RSS, against the input's size", '{:,.0f} MB', '≤ 1x', lambda v,b: v/b<=1),
        ('default', 'the default (after the last boundary) on the same file, against the floor', '{:.2f} s', '≤ 0.25x', lambda v,b: v/b<=0.25),
        ('chat', '`compact_doc` on the synthetic {msgs:,}-message session, llmsurgery 0.0.17 against it (in process)', '{:.3f} s', '≥ 5x', lambda v,b: v/b>=5),
        ('unique', '`compact_doc` on a synthetic {msgs:,}-message session in which no result repeats, 0.0.17 against it (in process)', '{:.3f} s', '≥ 5x', lambda v,b: v/b>=5),
        ('spec', "`compact_chat` (`compact_policy`) on the synthetic session, 0.0.17's against it (in process)", '{:.3f} s', '≥ 5x', lambda v,b: v/b>=5),
        ('spec_unique', "`compact_chat` (`compact_policy`) on the session in which no result repeats, 0.0.17's against it (in process)", '{:.3f} s', '≥ 5x', lambda v,b: v/b>=5),
        ('short', '`compact_doc` on a synthetic {msgs:,}-message session of short results and calls, as real sessions mostly hold, 0.0.17 against it (in process)', '{:.3f} s', '≥ 5x', lambda v,b: v/b>=5),
        ('spec_short', "`compact_chat` (`compact_policy`) on the session of short results, 0.0.17's against it (in process)", '{:.3f} s', '≥ 5x', lambda v,b: v/b>=5),
        ('real', '`compact_doc` on the two largest real sessions (tests/data/claude-real, 2.8 and 2.9 MB), 0.0.17 against it (in process): they repeat few results', '{:.3f} s', 'none set', None),
        ('spec_real', "`compact_chat` (`compact_policy`) on the same two read whole (0.0.17 reads all of a session), 0.0.17's against it (in process)", '{:.3f} s', '≥ 5x', lambda v,b: v/b>=5),
        ('hook', "Codex's UserPromptSubmit hook letting an ordinary prompt pass, against the bare interpreter", '{:.3f} s', '≤ 2.5x and ≤ 0.05 s', lambda v,b: v<=2.5*b and v<=0.05),
        ('barehook', "the same hook with no gate in its command (as run by hand, or written by an older llmsurgery)", '{:.3f} s', '≤ 2.5x', lambda v,b: v<=2.5*b),
        ('bighook', "Claude Code's state hook on a 2 GB transcript holding no newline, against the bare interpreter", '{:.2f} s', '≤ 8 s (its deadline)', lambda v,b: v<=8),
        ('mcp', "`llmsurgery-compact --mcp` from its start to its `initialize` answer, against the bare interpreter", '{:.3f} s', '≤ 1.5 s', lambda v,b: v<=1.5),
        ('mcp_search', "a `search` call on the running MCP server (the real sessions), against `llmsurgery-compact --search` of the same words", '{:.3f} s', '≤ 1x', lambda v,b: v<=b)]

def cell(key, v, fmt):
    "A value as the row shows it"
    return fmt.format(v/1e6) if key=='rss' else fmt.format(v)

def print_table(runs, mb, msgs):
    "One row per measure: each run's value, baseline and ratio, and whether the goal is met (– where none is set)"
    names = list(runs)
    print('| measure | ' + ' | '.join(f'{n}: value / baseline = ratio' for n in names) + ' | goal | met (last) |')
    print('|---|' + '---:|'*len(names) + '---|---|')
    for key,label,fmt,goal,ok in ROWS:
        if key not in runs[names[-1]]: continue
        cells = []
        for n in names:   # a revision that lacks the measure (an older one: no MCP server) shows a dash
            v,b = runs[n].get(key, (None, None))
            cells.append('–' if v is None else f'{cell(key, v, fmt)} / {cell(key, b, fmt)} = {v/b:,.2f}x')
        v,b = runs[names[-1]][key]
        met = '–' if ok is None else 'yes' if ok(v, b) else 'no'
        print(f'| {label.format(mb=mb, msgs=msgs)} | ' + ' | '.join(cells) + f' | {goal} | {met} |')

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--mb', type=int, default=400, help='size of the chained session, MB')
    ap.add_argument('--msgs', type=int, default=10_000, help='messages in the synthetic session')
    ap.add_argument('--reps', type=int, default=3, help='turns of each measure and its baseline, run one after the other; the best of each is taken')
    ap.add_argument('--rev', help='also measure this git revision (a before), in the same run')
    ap.add_argument('--rows', default=','.join(k for k,*_ in ROWS), help='the rows to measure, comma-separated: ' + ', '.join(k for k,*_ in ROWS) + ' (default: all)')
    a = ap.parse_args()
    rows = set(a.rows.split(','))
    if rows - {k for k,*_ in ROWS}: ap.error(f'--rows: no row {", ".join(sorted(rows - {k for k,*_ in ROWS}))}')
    cache = e2e.default_cache(); cache.mkdir(parents=True, exist_ok=True)
    chain = functools.cache(lambda: e2e.build_chain(e2e.find_data(), cache, a.mb))   # built only for the rows that read it
    print(f'Release measures: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load {e2e.load()} at start\n')
    with tempfile.TemporaryDirectory() as tmp:
        # the synthetic session, one in which no result repeats, and one of short results and calls (as real sessions hold)
        sessions = [Path(tmp)/'s.jsonl', Path(tmp)/'unique.jsonl', Path(tmp)/'short.jsonl']
        for f,kw in zip(sessions, ({}, dict(repeat=False), dict(big=False))):
            f.write_text('\n'.join(synth_claude(a.msgs, seed=3, **kw))+'\n')
        codes = ([(f'{a.rev} (before)', e2e.code_dir(cache, a.rev))] if a.rev else []) + [('working tree', e2e.code_dir(cache, None))]
        runs = {n: measures(c, chain, sessions, cache, a.reps, tmp, rows) for n,c in codes}
    print_table(runs, a.mb, a.msgs)
    print(f'\nload average at end: {e2e.load()}')

if __name__ == '__main__': main()
