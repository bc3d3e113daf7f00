"""What the speed-ups must not change, and what they promise: the default read from the end gives the messages of a full read,
orjson and json give the same messages, a text within its budget by bytes is never tokenized, long texts count exactly in chunks,
and the one-line report takes the host's count instead of tokenizing the transcript. Behaviour only: no timings."""
from itertools import groupby
import io, json, re, types, warnings
from pathlib import Path
import orjson, pytest
from hypothesis import given, settings, strategies as st
from llmsurgery import jsonl as hosts
from llmsurgery.jsonl import last_boundary, records, LogMsgs
from llmsurgery.hosts.base import host_named
from llmsurgery.hosts.claude import cc_boundary, Claude
cc_boundary_mark = Claude.mark
read_claude,read_codex = host_named("claude").read_lines,host_named("codex").read_lines
from llmsurgery.sessions import read_session
from llmsurgery.toks import compact_enc, fit_text, len_toks, _count
from llmsurgery.document import compact_doc, continuation_doc, compaction_report, report_line, report_table

root = Path(__file__).resolve().parent.parent
real = root/'tests'/'data'/'claude-real'
examples = sorted((root/'examples').glob('*.jsonl'))
reals = sorted(real.glob('*.jsonl'))   # in the repository: every clone has them
sessions = examples + reals

def full_read(path, whole=False):
    "The reader over every line of `path`, as before the scan from the end"
    lines = path.read_bytes().splitlines(keepends=True)
    return read_codex(lines, whole) if 'codex' in path.name else read_claude(lines, whole)

@pytest.fixture(scope='module')
def chained(tmp_path_factory):
    "The real sessions one after another in one file: several compactions, the last one far from the top"
    p = tmp_path_factory.mktemp('chain')/'chain.jsonl'
    p.write_bytes(b''.join(f.read_bytes().rstrip(b'\n')+b'\n' for f in reals*3))
    return p

@pytest.mark.parametrize('path', sessions, ids=lambda p: p.name)
def test_default_read_from_the_end_is_the_full_read(path):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        s,m = read_session(path),full_read(path)
    assert s.msgs == list(m) and s.summary == m.summary and s.host_toks == m.host_toks

def test_chained_session_read_from_the_end(chained):
    s,m = read_session(chained),full_read(chained)
    assert chained.read_bytes().count(cc_boundary_mark) > 1
    assert len(s.msgs) and s.msgs == list(m) and s.summary == m.summary and s.host_toks == m.host_toks
    assert read_session(chained, whole=True).msgs == list(full_read(chained, whole=True))

def test_documents_of_the_scan_are_the_documents_of_the_full_read(chained):
    s,m = read_session(chained),full_read(chained)
    for mt in (None, 8000): assert compact_doc(s.msgs, 'x.jsonl', max_toks=mt) == compact_doc(list(m), 'x.jsonl', max_toks=mt)

class Reads(io.BytesIO):
    "A binary file that counts the bytes read from it"
    n = 0
    def read(self, size=-1):
        b = super().read(size); self.n += len(b); return b

def test_scan_reads_only_after_the_boundary():
    filler = b''.join(json.dumps({'type':'user', 'message':{'role':'user', 'content':f'line {i} ' + 'x'*200}}).encode()+b'\n' for i in range(20_000))
    tail = b'{"type":"system","subtype":"compact_boundary"}\n' + b'{"type":"user","message":{"role":"user","content":"after"}}\n'
    f = Reads(filler + tail)
    assert last_boundary(f, cc_boundary_mark, cc_boundary, block=4096) == len(filler)
    assert f.n <= 4096+len(tail)   # one block from the end, not the 4 MB before it

def test_orjson_and_json_give_the_same_messages(monkeypatch):
    plain = {p: (read_claude if 'codex' not in p.name else read_codex)(p.read_bytes().splitlines(), whole=True) for p in sessions}
    def refuse(ln): raise orjson.JSONDecodeError('refused', '', 0)
    monkeypatch.setattr(hosts, 'orjson', types.SimpleNamespace(loads=refuse, JSONDecodeError=orjson.JSONDecodeError))
    for p,m in plain.items():
        j = (read_claude if 'codex' not in p.name else read_codex)(p.read_bytes().splitlines(), whole=True)
        assert j == m and j.bad_lines == m.bad_lines and j.summary == m.summary, p.name

def test_torn_lines_are_still_counted():
    st_ = LogMsgs()
    assert list(records([b'{"a":1}\n', b'{"a":', b'', b'{"b":"\\ud800"}'], st_)) == [{'a':1}, {'b':'\ufffd'}]
    assert st_.bad_lines == 1

class Counting:
    "An encoder that counts the texts it tokenizes, and their characters"
    def __init__(self): self.enc,self.n,self.chars = compact_enc(),0,0
    def encode_ordinary(self, s): self.n += 1; self.chars += len(s); return self.enc.encode_ordinary(s)
    def decode_bytes(self, t): return self.enc.decode_bytes(t)

@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.integers(0, 200))
def test_a_text_within_its_budget_by_bytes_is_never_tokenized(s, extra):
    fmt = lambda b: f'> {b}'
    n = len(fmt(s).encode('utf-8', 'surrogatepass')) + extra
    ce = Counting()
    assert fit_text(s, n, fmt, enc=ce) == fmt(s)
    assert ce.n == 0

@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list('ab Z9_.,/*§→é\n\r\t²Ω') + ['👩\u200d💻', 'word', '\n\n***\n\n', '  \n']), max_size=200).map(''.join), st.integers(1, 40))
def test_long_texts_count_exactly_in_chunks(s, size):
    enc = compact_enc()
    assert _count(s, enc, size) == len(enc.encode_ordinary(s))

def test_report_line_takes_the_hosts_count():
    path = reals[0]
    s = read_session(path)
    last = [json.loads(l) for l in path.read_text().splitlines() if '"usage"' in l and '"assistant"' in l][-1]['message']['usage']
    assert s.host_toks == last['input_tokens'] + last['cache_read_input_tokens'] + last['cache_creation_input_tokens']
    doc = continuation_doc(s.msgs, str(path))
    r = compaction_report(doc, host_toks=s.host_toks, host=s.host)
    assert (r.toks_before, r.before_by, r.toks_exact) == (s.host_toks, "Claude Code's count", None)
    assert "tokens (Claude Code's count) ->" in report_line(r)
    exact = compaction_report(doc, exact=True, host_toks=s.host_toks, host=s.host)
    assert report_line(exact) == report_line(r)   # one basis, whether or not the exact count is asked for
    assert exact.toks_exact > 0 and exact.toks_after == r.toks_after == len_toks(doc.text)
    assert "tokens before (Claude Code's count): " in report_table(exact) and 'o200k' in report_table(exact)

# --- the error cut counts lines once and cuts only the lines it looks at: the same result as before ---
from llmsurgery.docstyle import error_result, is_error_result
from llmsurgery.render import compact_result, result_lines, result_line
from llmsurgery.toks import clip_ends, head_text

_diag_re = re.compile(r'error|Error|ERROR|FAIL|[Ff]ailed|[Ff]atal|Traceback|Exception|panic|[Aa]ssert|[Nn]ot found|No such|[Dd]enied|^\*\* \(|^E\s')

def _join_kept(ls, kept):
    "Lines `ls` at indices `kept` joined by ` ¶ `, with ` … ` where lines between were left out"
    ks,res = sorted(kept),''
    for a,b in zip([None]+ks, ks): res += ls[b] if a is None else (' ¶ ' if b==a+1 else ' … ')+ls[b]
    return res+(' …' if ks and ks[-1]<len(ls)-1 else '')

def _runs(ls):
    "Each run of identical lines in `ls` as one, with its count (by itertools' grouping, not the library's loop)"
    return [l if k==1 else f'{l} (×{k})' for l,k in ((l, len(list(g))) for l,g in groupby(ls))]

def error_result_before(s, max_toks, enc=None):
    "`error_result` as it was before the speed-up: every line cut, every join counted whole; a recurring diagnostic once"
    if max_toks is None: return compact_result(s, None, enc)
    n,s = max(int(max_toks), 0),clip_ends(s, 4*max_toks, '\n…\n')
    raw = _runs([l.strip() for l in result_lines(s)])
    if len_toks(r := result_line(' ¶ '.join(raw)), enc)<=n: return r
    ls = [head_text(l, max(24, n//3), enc=enc) for l in raw]
    found = [i for i,l in enumerate(ls) if _diag_re.search(l)]
    again = [i for i in found if raw[i] in [raw[j] for j in found if j<i]]
    for i in found:
        k = sum(raw[j]==raw[i] for j in found)
        if k>1 and i not in again: ls[i] += f' (×{k})'
    ds = [i for i in found if i and i not in again]
    picks = list(dict.fromkeys([0] + [j for i in ds for j in (i, i+1) if j<len(ls)] + list(range(1, min(len(ls), 24)))))[:32] if ls else []
    kept,best = [],compact_result(s, n, enc)
    for i in picks:
        if i not in again and len_toks(r := result_line(_join_kept(ls, kept+[i])), enc)<=n: kept,best = kept+[i],r
    return best

words = st.sampled_from(['error', 'Error:', 'FAILED', 'Traceback', 'E', 'assert', 'x', '  ', '¶', '…', '家族', '👩\u200d👧', '12345',
                         'ok', '** (RuntimeError)', 'E\tx', '/usr/lib/x.py', '(foo)', "it's", '\t', '-'*40, 'a'*300, 'no such file'])
lines = st.lists(words, max_size=30).map(' '.join)
err_texts = st.lists(lines, min_size=1, max_size=120).map(lambda ls: 'Error: Exit code 1\n' + '\n'.join(ls))

@given(err_texts, st.integers(0, 400))
@settings(deadline=None)
def test_error_result_as_before(s, n):
    assert error_result(s, n) == error_result_before(s, n)

def test_error_results_of_real_sessions_as_before():
    "Every error result of the real sessions, at several budgets, cut exactly as before"
    from llmsurgery.toks import as_text
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        errs = [t for path in reals for m in read_session(path, whole=True).msgs if m.role=='tool'
                for t in (as_text(p.text) for p in m.content) if is_error_result(t)]
    assert len(errs) >= 10
    for t in errs:
        for n in (0, 30, 180, 600): assert error_result(t, n) == error_result_before(t, n)

# --- a cut call's head: the same search, each probe counting only what follows the last piece start ---
from llmsurgery.toks import enc_toks

def head_text_before(s, n, lead='', mark=' …'):
    "`head_text` as it was before the speed-up: each probe of its search tokenized whole"
    enc = compact_enc()
    h = s[:128*(n+2)]
    fits = lambda r: len_toks(r)<=n
    if len(h)==len(s) and fits(lead+s): return lead+s
    if not fits(lead+mark): return ''
    t = enc_toks(h)
    head = lambda k: enc.decode_bytes(t[:k]).decode('utf-8', 'ignore')
    lo,hi = 0,min(n, len(t))
    while lo<hi:
        k = (lo+hi+1)//2
        if fits(lead+head(k)+mark): lo = k
        else: hi = k-1
    return lead+head(lo)+mark

spacey = st.lists(st.sampled_from(list('ab Z9 .\t\n¶…é家👩\u200d-/(') + ['  ', ' x', 'Traceback']), max_size=200).map(''.join)

@given(spacey, st.integers(0, 80), st.sampled_from(['', '! ', '▶ ']))
@settings(deadline=None)
def test_head_text_as_before(s, n, lead):
    assert head_text(s, n, lead) == head_text_before(s, n, lead)

@pytest.mark.parametrize('path', reals, ids=lambda p: p.name)
def test_cut_calls_of_real_sessions_as_before(path):
    "Every Bash command of the real sessions cut to a head at several budgets, exactly as before"
    from llmsurgery.render import flat_lines
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        cmds = [flat_lines(p.arguments['command']) for m in read_session(path, whole=True).msgs for p in m.content
                if getattr(p, 'name', None)=='Bash' and isinstance(p.arguments, dict) and isinstance(p.arguments.get('command'), str)]
    for c in cmds[:400]:
        for n in (5, 20, 60): assert head_text(c, n, '! ') == head_text_before(c, n, '! ')

# --- the fit sees from the newest turns alone that a whole rendering is over its target, and is right ---
def test_over_only_when_over():
    "The fit's quick look at the newest turns never changes a document: the same fit without it gives the same text"
    from llmsurgery.fit import fit_chat
    for path in [p for p in sessions if p.stat().st_size > 200_000]:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            msgs = read_session(path, whole=True).msgs
        for n in (300, 3000, 30000):
            try: quick = fit_chat(msgs, n)
            except ValueError: continue
            assert quick.text == fit_chat(msgs, n, verbatim=False).text, (path.name, n)

# --- the rule everything above rests on: cut where a piece surely starts, and the counts add up ---
from llmsurgery.toks import piece_cut, last_piece_start
pieces = st.lists(st.sampled_from(list("aZ09 .,!?/\\-_()'\"\t\n\r¶…▶é漢🙂\u0301\u00a0\u2028\u3000\x1c\x0b\x85") + ["'s", '  ', ' \n', '\n ']), min_size=2, max_size=40).map(''.join)

@given(pieces, st.integers(0, 40))
def test_counts_add_up_at_sure_piece_starts(s, i):
    for j in (piece_cut(s, i), last_piece_start(s, i)):
        if j: assert len_toks(s[:j]) + len_toks(s[j:]) == len_toks(s), (s, j)

# --- a preparation by lines prepares only the lines at a long text's ends: the windows, and the cuts, of the whole clip ---
import importlib.util
from llmsurgery.toks import Ends, TokMemo, _line_ends
from llmsurgery.render import result_prep, flat_lines
from llmsurgery.docstyle import doc_prep, runs_counted, _stripped_lines, _least_toks

line_preps = {'result_prep': result_prep, 'doc_prep': doc_prep, 'flat_lines': flat_lines}
def joined(prep, d): return ' ¶ '.join(prep.runs(list(filter(str.strip, d.splitlines()))))   # `prep` over `d`, already dropped
log_lines = st.sampled_from(['', ' ', 'ok', 'ok', 'FAILED test_x', '<warn>', '</warn>', '<system-reminder>', '</system-reminder> ',
                             '<note>x</note>', 'x'*150, '家族 👩\u200d💻', '\t', '¶ …', 'a b c d e f', 'x\r', '\x0b', '  def f(x): return x'])
long_logs = st.lists(log_lines, max_size=600).map('\n'.join)

runny = st.lists(st.sampled_from(['ok', 'ok', 'ok ok', 'o', '', ' ', 'k\r', 'E x']), max_size=40).map('\n'.join)   # runs, and lines that begin others

@given(st.one_of(long_logs, runny), st.integers(1, 4000))
@settings(max_examples=200, deadline=None)
def test_line_prep_ends_begin_and_end_every_longer_text(s, i):
    "What an end of `i` characters settles begins (ends) the preparation of every text that end begins (ends)"
    for prep in line_preps.values():
        d = prep.drop(s)
        assert prep(s) == joined(prep, d)
        for k in ({i} if len(d)>200 else range(1, len(d)+1)):   # a short text: cut at every place
            h,t = prep.head(d, k),prep.tail(d, k)
            for j in {k, k+1, k+7, 2*k, len(d)}: assert joined(prep, d[:j]).startswith(h) and joined(prep, d[-j:]).endswith(t)

def test_a_window_is_looked_for_only_where_the_text_it_ends_is_sure_to_be_long_enough():
    from llmsurgery.toks import _window
    enc,h = compact_enc(),'word '*40
    assert _window(h, 10, enc)[0] == _window(h, 10, enc, least=200)[0] == h[:54]   # ended where ' word' starts
    assert _window(h, 10, enc, least=108) is None   # twice the window is not less than the text may be long
    assert _window(h[:50], 10, enc, least=10**6) is None   # the window would go past what is known of the text

window_texts = st.one_of(long_logs, st.lists(st.sampled_from(['word', ' ', '  ', '\n', '家族', 'é', '👍🏽', '=' * 40, '12345', '.,']),
                                          max_size=400).map(''.join))

@given(window_texts, st.integers(0, 120))
@settings(max_examples=300, deadline=None)
def test_a_window_edged_at_a_piece_start_holds_the_texts_own_tokens(t, n):
    "A window that ends (starts) where a piece surely starts has the whole text's tokens there; two such apart, over `n`"
    from llmsurgery.toks import _window, piece_cut, enc_toks
    enc,whole,edged = compact_enc(),enc_toks(t),[]
    for tail in (False, True):
        if (w := _window(t, n, enc, tail)) is None: continue
        x,toks = w
        j = len(t)-len(x) if tail else len(x)
        if piece_cut(t, j)==j:
            edged.append(j)
            assert len(toks) > n//2 and toks == (whole[len(whole)-len(toks):] if tail else whole[:len(toks)])
        else: assert len(toks) > n   # no piece start near: over `n`, for slack
    if len(edged)==2 and edged[0]<=edged[1]: assert len(whole) > n

def test_a_long_real_result_is_cut_from_short_windows():
    "A long result of the real sessions, cut to 35 tokens, tokenizes two short windows and the cut: under 400 characters"
    from statistics import mean
    from llmsurgery.render import compact_result
    texts = [str(p.text) for f in reals for m in read_claude(f.read_text().splitlines(), whole=True) if m.role=='tool'
             for p in m.content]
    costs = []
    for t in texts:
        if len(result_prep(t)) <= 1000: continue   # long: two ends and a cut; a short one may be counted whole first
        c = Counting()
        assert '…' in (out := compact_result(t, 35, enc=c)) and len_toks(out) <= 35
        costs.append(c.chars)
    assert len(costs) > 100 and mean(costs) < 400, (len(costs), mean(costs))   # windows over 35 tokens each: 488

@given(long_logs, st.integers(0, 60), st.sampled_from(list(line_preps)))
@settings(max_examples=300, deadline=None)
def test_line_ends_are_the_whole_clips(s, n, name):
    "The windows found from the ends' lines are those of the whole clip, prepared; so is every cut"
    prep,enc = line_preps[name],compact_enc()
    e,f = _line_ends(s, n, prep, enc, ' … '),Ends(clip_ends(s, n, ' … ', prep), n, enc)
    if e is not None: assert (e.hx, e.ht, e.tx, e.tt, e.ntoks) == (f.hx, f.ht, f.tx, f.tt, f.ntoks)
    assert fit_text(s, n, result_line, prep) == fit_text(s, n, result_line, lambda t: prep(t))   # a plain function: the whole clip

def test_blocks_across_an_end_are_dropped_as_from_the_whole_clip():
    "A `<warn>` block that opens at a text's start and closes past its first lines, or opens before its last ones: dropped whole"
    body = ''.join(f'line {i}: some words here\n' for i in range(3000))
    for s in ('<warn>\nread the docs\n' + body[:300] + '</warn>\n' + body, body + '<system-reminder>\n' + body[:900] + '</system-reminder>\nend'):
        for n in (10, 35):
            e,f = _line_ends(s, n, result_prep, compact_enc(), ' … '),Ends(clip_ends(s, n, ' … ', result_prep), n, compact_enc())
            assert e is not None and (e.hx, e.ht, e.tx, e.tt) == (f.hx, f.ht, f.tx, f.tt)

def test_results_of_real_sessions_cut_as_from_the_whole_clip():
    "Every result and command of the real sessions, at several budgets, cut as the whole clip prepared cuts it"
    from llmsurgery.toks import as_text
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        texts = [as_text(p.text) for path in reals for m in read_session(path, whole=True).msgs if m.role=='tool' for p in m.content]
    enc,quick = compact_enc(),0
    for t in texts:
        for n in (6, 35, 180):
            for prep in line_preps.values():
                quick += _line_ends(t, n, prep, enc, ' … ') is not None
                assert fit_text(t, n, result_line, prep, enc) == fit_text(t, n, result_line, lambda x: prep(x), enc)
    assert quick > 100   # the quick way was taken, and often

def test_a_token_memo_encodes_as_its_encoding():
    tm,enc = TokMemo(),compact_enc()
    for s in ('a line', 'x '*200, '家族 👩\u200d💻'): assert tm.encode_ordinary(s) == enc.encode_ordinary(s)
    assert 'a line' in tm.short and 'x '*200 not in tm.short   # a short text is kept, a long one not

@given(st.lists(st.lists(st.sampled_from(list('aZ9 .¶…>(×)-=\t家👩') + ['E', '  ', 'error']), max_size=12).map(''.join), max_size=60))
@settings(max_examples=300, deadline=None)
def test_an_error_result_is_over_by_its_lines_alone(ls):
    "Its `>`, each line and each ` ¶` make a piece at least: an error result of more lines than half a budget is over it"
    s = 'Error: x\n' + '\n'.join(ls)
    lines = runs_counted(_stripped_lines(s))
    assert len_toks(result_line(' ¶ '.join(lines))) >= _least_toks(lines)

def test_the_least_an_error_result_can_be_is_reached():
    ls = list('abcdefgh')   # a token a line
    assert len_toks(result_line(' ¶ '.join(ls))) == _least_toks(ls) == 16

from llmsurgery.docstyle import boilerplate, is_boilerplate, _strips_within

def is_boilerplate_before(s):
    "`is_boilerplate` as it was: the text stripped first"
    s = (s or '').strip()
    return len(s)<600 and '\n' not in s[:300] and any(o.fullmatch(s) for o in boilerplate)

blanky = st.lists(st.sampled_from([' ', '\n', '\t', '\u2028', '\x1c', '\xa0', 'a', ' '*300, 'File created successfully at: /w/x.md',
                                   'The file /w/a.py has been updated successfully.']), max_size=40).map(''.join)

@given(blanky, st.integers(-2, 700))
@settings(max_examples=300, deadline=None)
def test_blank_ends_are_looked_at_not_stripped(s, k):
    assert _strips_within(s, k) == (len(s.strip()) < k)
    assert is_boilerplate(s) == is_boilerplate_before(s)

mk = importlib.util.spec_from_file_location('make_examples', root/'examples'/'make_examples.py')
mkex = importlib.util.module_from_spec(mk)
mk.loader.exec_module(mkex)

def test_a_synthetic_session_without_repeats():
    "`synth_claude(repeat=False)` holds exactly the messages asked for, and no result of more than one line twice"
    from collections import Counter
    msgs = read_claude(mkex.synth_claude(2000, seed=3, repeat=False))
    res = Counter(str(p.text) for m in msgs for p in m.content if m.role=='tool')
    assert len(msgs)==2000 and sum(res.values()) > 500
    assert not [t for t,k in res.items() if k>1 and '\n' in t]
    again = Counter(str(p.text) for m in read_claude(mkex.synth_claude(2000, seed=3)) for p in m.content if m.role=='tool')
    assert [t for t,k in again.items() if k>1 and '\n' in t]   # the bundled kind repeats its reads and logs

PASS_EVENTS = [('codex', dict(hook_event_name='UserPromptSubmit', prompt='fix the parser', session_id='s', transcript_path='/nowhere')),
               ('claude', dict(hook_event_name='SessionStart', source='startup', session_id='s', transcript_path='/nowhere')),
               ('claude', dict(hook_event_name='PreCompact', trigger='manual', custom_instructions='keep the tests'))]

HOOK_MODULES = """import json, runpy, sys
sys.argv = ['llmsurgery.hooks', *sys.argv[1:]]
try: runpy.run_module('llmsurgery.hooks', run_name='__main__', alter_sys=True)
except SystemExit as e: status = e.code
print(json.dumps(dict(status=status, modules=sorted(sys.modules))))"""

def hook_args(name, event):
    "`[host, *gate]`: what follows `-m llmsurgery.hooks` in the command `--install-hooks` writes for host `name`'s `event`"
    import shlex
    from llmsurgery.install import hook_group
    from llmsurgery.hosts.base import host_named
    argv = shlex.split(hook_group(host_named(name), event['hook_event_name'])['hooks'][0]['command'])
    return argv[argv.index('llmsurgery.hooks')+1:]

def hook_modules(name, event, tmp_path):
    "Run host `name`'s hook on `event` as the host runs the installed command: (status, modules it imported, stdout)"
    import subprocess, sys
    env = dict(HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path/'state'), PATH='/usr/bin:/bin')
    p = subprocess.run([sys.executable, '-P', '-c', HOOK_MODULES, *hook_args(name, event)], input=json.dumps(event).encode(),
                       capture_output=True, env=env, timeout=60)
    *said, last = p.stdout.decode().splitlines()
    r = json.loads(last)
    return r['status'], set(r['modules']), said

HEAVY = {'tiktoken', 'aidialog', 'llmsurgery.service', 'llmsurgery.sessions', 'llmsurgery.hosts.base', 'llmsurgery.hosts.claude',
         'llmsurgery.hosts.codex', 'llmsurgery.hosts.gemini', 'llmsurgery.jsonl', 'orjson', 'fastcore'}

@pytest.mark.parametrize('name,event', PASS_EVENTS)
def test_a_hook_with_nothing_to_do_imports_nothing_heavy(name, event, tmp_path):
    "An event the hook lets pass is decided before the service, the hosts, aidialog or tiktoken are imported"
    status, mods, said = hook_modules(name, event, tmp_path)
    assert (status, said) == (0, [])
    assert not HEAVY & mods, HEAVY & mods
    assert not (tmp_path/'state'/'llmsurgery'/'hooks.log').exists()

def test_a_hook_with_a_job_imports_the_service(tmp_path):
    "The same run on an event with a job does import the service (so the test above can fail): here it fails and logs"
    ev = dict(hook_event_name='SessionStart', source='compact', session_id='s', transcript_path=str(tmp_path/'gone.jsonl'))
    status, mods, said = hook_modules('codex', ev, tmp_path)
    assert (status, said) == (0, []) and {'llmsurgery.service', 'tiktoken'} <= mods
    assert 'gone.jsonl' in (tmp_path/'state'/'llmsurgery'/'hooks.log').read_text()

# --- Gemini's BeforeAgent hook runs on every prompt: a look at the log's new tail, the exact replay only past a new snapshot ---
GM_LOG = root/'tests'/'data'/'gemini'/'gemini_compressed.jsonl'
GM_STATE = "llmsurgery's state of the part of this session that was just compacted"
GM_TURN = b'{"id":"u9","timestamp":"t","type":"user","content":[{"text":"and the header?"}]}\n'

def gm_prompt(log): return dict(hook_event_name='BeforeAgent', prompt='fix the parser', session_id='s', transcript_path=str(log))

def gm_again(log):
    "The log's last compression written again, its messages under new ids: a new compression"
    rec = [l for l in GM_LOG.read_bytes().splitlines(keepends=True) if b'"$set"' in l and b'<state_snapshot>' in l][-1]
    with open(log, 'ab') as f: f.write(rec.replace(b'"id":"', b'"id":"again-'))

@pytest.fixture
def gm_told(tmp_path):
    "A copy of the genuine Gemini log whose compression the hook has told of (that first run imports the service)"
    log = tmp_path/'session.jsonl'
    log.write_bytes(GM_LOG.read_bytes())
    status, mods, said = hook_modules('gemini', gm_prompt(log), tmp_path)
    assert status == 0 and len(said) == 1 and GM_STATE in said[0] and 'llmsurgery.service' in mods
    return log

def test_gemini_ordinary_prompt_imports_nothing_heavy(gm_told, tmp_path):
    "An ordinary prompt on a log that grew without a compression is let pass having imported nothing heavy"
    with open(gm_told, 'ab') as f: f.write(GM_TURN)
    for _ in range(2):
        status, mods, said = hook_modules('gemini', gm_prompt(gm_told), tmp_path)
        assert (status, said) == (0, []) and not HEAVY & mods, HEAVY & mods
    assert not (tmp_path/'state'/'llmsurgery'/'hooks.log').exists()

def test_gemini_new_compression_told_exactly_once(gm_told, tmp_path):
    "A compression written after the hook looked is told of on the next prompt, once; then the prompts are light again"
    gm_again(gm_told)
    runs = [hook_modules('gemini', gm_prompt(gm_told), tmp_path) for _ in range(3)]
    assert [len(said) for _, _, said in runs] == [1, 0, 0] and GM_STATE in runs[0][2][0]
    assert 'llmsurgery.service' in runs[0][1] and not HEAVY & runs[2][1]
    assert not (tmp_path/'state'/'llmsurgery'/'hooks.log').exists()

def test_gemini_replaced_or_shrunk_log_is_checked_exactly(gm_told, tmp_path):
    "A log replaced by another file, or cut shorter, is replayed (no stale size trusted): told of nothing it was told of"
    new = tmp_path/'new.jsonl'
    new.write_bytes(gm_told.read_bytes()+GM_TURN)
    new.replace(gm_told)
    status, mods, said = hook_modules('gemini', gm_prompt(gm_told), tmp_path)
    assert (status, said) == (0, []) and 'llmsurgery.hosts.gemini' in mods     # the exact check ran, and told nothing
    gm_told.write_bytes(b''.join(GM_LOG.read_bytes().splitlines(keepends=True)[:-1]))   # shorter, in place
    gm_again(gm_told)
    status, mods, said = hook_modules('gemini', gm_prompt(gm_told), tmp_path)
    assert len(said) == 1 and GM_STATE in said[0]
    gm_told.write_bytes(b''.join(l for l in GM_LOG.read_bytes().splitlines(keepends=True) if b'<state_snapshot>' not in l))
    status, mods, said = hook_modules('gemini', gm_prompt(gm_told), tmp_path)
    assert (status, said) == (0, []) and not HEAVY & mods                      # no snapshot at all: no job
