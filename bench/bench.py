"""Performance of llmsurgery's renderers, beside the obvious baseline (tokenizing the whole content), in one run.

Run: `make bench` (or `.venv/bin/python bench/bench.py [--max-mb 100] [--msgs 10000]`). Not part of the test suite.
Prints markdown tables: time per render against content size for each renderer next to full tokenization of the
same content, then the compaction of a synthetic 10,000-message session (read, render, fit) and the run's peak memory.
"""
import argparse, platform, resource, sys, time, os
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent/'examples'))
from make_examples import synth_claude
from llmsurgery.compact import *
from llmsurgery.claude import read_claude

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
    t = time.perf_counter(); doc = compact_chat(msgs); render = time.perf_counter()-t
    t = time.perf_counter(); r = compaction_report(msgs, doc); rep = time.perf_counter()-t
    fits = []
    for mx in (8_000, 32_000, 128_000):
        t = time.perf_counter(); d = compact_doc(msgs, '/session.jsonl', max_toks=mx); fits.append((mx, len_toks(d), time.perf_counter()-t))
    print(f'\nSynthetic Claude Code session: {len(msgs):,} messages, {mb:,.1f} MB of JSONL ({len(lines):,} records).\n')
    print('| step | time | result |\n|---|---:|---|')
    print(f'| read (parse JSONL to canonical messages) | {fmt_t(read)} | {len(msgs):,} messages, {r.turns:,} turns |')
    print(f'| compact_chat with compact_policy | {fmt_t(render)} | {r.toks_after:,} tokens |')
    print(f'| compaction_report (renders and tokenizes the full transcript) | {fmt_t(rep)} | {r.toks_before:,} tokens before, ratio {r.ratio:,} |')
    for mx,got,tt in fits: print(f'| compact_doc(max_toks={mx:,}) | {fmt_t(tt)} | {got:,} tokens |')

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--max-mb', type=float, default=100, help='largest content size in the size table, in MB')
    ap.add_argument('--msgs', type=int, default=10_000, help='messages in the synthetic session')
    a = ap.parse_args()
    print(f'Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}\n')
    t = time.perf_counter(); compact_enc(); print(f'Tokenizer load (offline, once per process): {fmt_t(time.perf_counter()-t)}\n')
    size_table(a.max_mb)
    session_table(a.msgs)
    print(f'\nPeak memory (max RSS of the whole run): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:,.0f} MB')

if __name__ == '__main__': main()
