"""Performance of llmsurgery's renderers, beside the obvious baseline (tokenizing the whole content), in one run.

Run: `make bench` (or `.venv/bin/python bench/bench.py [--max-mb 100] [--msgs 10000]`). Not part of the test suite.
Prints markdown tables: time per render against content size for each renderer next to full tokenization of the
same content, then the compaction of a synthetic 10,000-message session (read, render, fit) and the run's peak memory.
"""
import argparse, gzip, hashlib, platform, resource, subprocess, sys, tempfile, time, os
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'examples'))
from make_examples import synth_claude
from llmsurgery.compact import *
from llmsurgery.hosts.base import host_named
read_claude = host_named('claude').read_lines

def best(f, reps=3):
    "Best wall time of `reps` calls of `f`, in seconds"
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); f(); ts.append(time.perf_counter()-t)
    return min(ts)

def content(nbytes):
    "About `nbytes` of tool-output-like text: log lines, code, a little CJK and emoji"
    unit = ('tests/test_reader.py::test_quoted_fields[utf-8-sig] PASSED                 [ 42%]\n'
            '    def parse(row, *, strict=False):  # 解析 the row ✅\n'
            'E   AssertionError: expected 3 columns, got 2 — café 👩‍💻\n')
    n = len(unit.encode())
    return unit*(nbytes//n+1)

def fmt_t(s): return f'{s*1e3:,.2f} ms' if s < 10 else f'{s:,.1f} s'

def renderers():
    "Name and call of each renderer, at the production budgets"
    p = compact_policy
    return [('compact_result', lambda s: compact_result(s, p['result_toks'])),
            ('compact_text', lambda s: compact_text(s, '§', p['user_toks'])),
            ('bash_call', lambda s: bash_call(s, p['call_toks'])),
            ('fenced_code', lambda s: fenced_code(s, p['call_toks'])),
            ('generic_call', lambda s: generic_call('Write', {'file_path': 'a.py', 'content': s}, p['call_toks']))]

def size_table(max_mb):
    enc = compact_enc()
    sizes = [o for o in (1_000, 10_000, 100_000, 1_000_000, 11_000_000, 100_000_000) if o <= max_mb*1_000_000]
    rs = renderers()
    print('| content | full tokenization | ' + ' | '.join(n for n,_ in rs) + ' | speed-up of compact_result |')
    print('|---:|---:|' + '---:|'*len(rs) + '---:|')
    for sz in sizes:
        s = content(sz)[:sz]
        full = best(lambda: enc.encode_ordinary(s), 1 if sz > 10_000_000 else 3)
        ts = [best(lambda: f(s)) for _,f in rs]
        label = f'{sz/1e6:g} MB' if sz >= 1_000_000 else f'{sz/1e3:g} KB'
        print(f'| {label} | {fmt_t(full)} | ' + ' | '.join(fmt_t(t) for t in ts) + f' | {full/ts[0]:,.0f}x |')

def session_table(n):
    t = time.perf_counter(); lines = list(synth_claude(n, seed=3)); gen = time.perf_counter()-t
    mb = sum(map(len, lines))/1e6
    t = time.perf_counter(); msgs = read_claude(lines); read = time.perf_counter()-t
    t = time.perf_counter(); chat = compact_chat(msgs); render = time.perf_counter()-t
    t = time.perf_counter(); r = compaction_report(continuation_doc(msgs, '/session.jsonl'), exact=True)
    rep = time.perf_counter()-t
    fits = []
    for mx in (8_000, 32_000, 128_000):
        t = time.perf_counter(); d = compact_doc(msgs, '/session.jsonl', max_toks=mx); fits.append((mx, len_toks(d), time.perf_counter()-t))
    print(f'\nSynthetic Claude Code session: {len(msgs):,} messages, {mb:,.1f} MB of JSONL ({len(lines):,} records).\n')
    print('| step | time | result |\n|---|---:|---|')
    print(f'| read (parse JSONL to canonical messages) | {fmt_t(read)} | {len(msgs):,} messages, {r.turns:,} turns |')
    print(f'| compact_chat with compact_policy | {fmt_t(render)} | {len_toks(chat):,} tokens |')
    print(f'| continuation_doc and its exact report (renders and tokenizes the full transcript too) | {fmt_t(rep)} | '
          f'{r.toks_exact:,} tokens before, {r.toks_after:,} after, ratio {r.toks_exact/r.toks_after:,.1f} |')
    for mx,got,tt in fits: print(f'| compact_doc(max_toks={mx:,}) | {fmt_t(tt)} | {got:,} tokens |')

OLD = '0.0.17'   # the last release before the rewrite: the in-process speed the issue compares with
OLD_RUN = """import json, sys, time
from llmsurgery.ant import recs2chat
from llmsurgery.compact import compact_chat, compact_content, compact_policy, compact_enc
lines, enc, ts = open(sys.argv[1]).read().splitlines(), compact_enc(), []
for _ in range(3):
    t = time.perf_counter(); msgs = recs2chat([json.loads(l) for l in lines]); r = time.perf_counter()
    compact_content(compact_chat(msgs, **compact_policy, enc=enc, last_n=5), '/session.jsonl'); ts.append((time.perf_counter()-t, time.perf_counter()-r))
print(*min(ts))
"""

def old_python(cache):
    "The interpreter of a venv in `cache` holding llmsurgery `OLD` and the aidialog it was written for (<0.0.38), made once with pip"
    d = cache/f'venv-llmsurgery-{OLD}'
    py = d/'bin'/'python'
    if not py.exists():
        subprocess.run([sys.executable, '-m', 'venv', str(d)], check=True)
        subprocess.run([str(py), '-m', 'pip', 'install', '-q', f'llmsurgery=={OLD}', 'aidialog<0.0.38', 'tiktoken'], check=True)
    return py

def o200k_cache(cache):
    "A TIKTOKEN_CACHE_DIR holding o200k_base, so the old release's `tiktoken.get_encoding` works offline"
    from llmsurgery.toks import _o200k_paths, _o200k_url
    d = cache/'tiktoken'; d.mkdir(exist_ok=True)
    f = d/hashlib.sha1(_o200k_url.encode()).hexdigest()
    if not f.exists():
        data = next(p for p in _o200k_paths() if p.is_file()).read_bytes()
        f.write_bytes(gzip.decompress(data) if data[:2]==b'\x1f\x8b' else data)
    return d

def old_table(n):
    "In-process compaction of the same synthetic session (its JSONL read by each version's own reader, then compacted), this version against llmsurgery `OLD`"
    cache = Path(os.environ.get('XDG_CACHE_HOME') or Path.home()/'.cache')/'llmsurgery'/'bench'; cache.mkdir(parents=True, exist_ok=True)
    lines = list(synth_claude(n, seed=3))
    def new():
        t = time.perf_counter(); msgs = read_claude(lines); r = time.perf_counter()
        compact_doc(msgs, '/session.jsonl'); return time.perf_counter()-t, time.perf_counter()-r
    nt,nc = min(new() for _ in range(3))
    with tempfile.TemporaryDirectory() as tmp:
        (f := Path(tmp)/'s.jsonl').write_text('\n'.join(lines)+'\n')
        env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(o200k_cache(cache)))
        out = subprocess.run([str(old_python(cache)), '-c', OLD_RUN, str(f)], capture_output=True, text=True, check=True, env=env, cwd=tmp).stdout
    ot,oc = map(float, out.split())
    print(f'\nThe synthetic session ({n:,} messages) read and compacted in process, best of 3, beside llmsurgery {OLD} in its own venv:\n')
    print(f'| version | read + compact | compact only |\n|---|---:|---:|')
    print(f'| llmsurgery {OLD} (`recs2chat`, `compact_chat` + `compact_content`) | {fmt_t(ot)} | {fmt_t(oc)} |')
    print(f'| this version (`read_claude`, `compact_doc`) | {fmt_t(nt)} ({ot/nt:,.1f}x faster) | {fmt_t(nc)} ({oc/nc:,.1f}x faster) |')

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--max-mb', type=float, default=100, help='largest content size in the size table, in MB')
    ap.add_argument('--msgs', type=int, default=10_000, help='messages in the synthetic session')
    ap.add_argument('--no-old', action='store_true', help='skip the comparison with llmsurgery 0.0.17 (it is fetched with `pip download`)')
    a = ap.parse_args()
    print(f'Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}\n')
    t = time.perf_counter(); compact_enc(); print(f'Tokenizer load (offline, once per process): {fmt_t(time.perf_counter()-t)}\n')
    size_table(a.max_mb)
    session_table(a.msgs)
    if not a.no_old: old_table(a.msgs)
    print(f'\nPeak memory (max RSS of the whole run): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:,.0f} MB')

if __name__ == '__main__': main()
