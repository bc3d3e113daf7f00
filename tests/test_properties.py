"""Property tests for `llmsurgery.compact`: budgets, intact text, cost bounded by the budget, fitting a target, determinism.

As CI runs them (the `ci` profile: fixed examples, about a minute):
    .venv/bin/python -m pytest -q tests/test_properties.py
Exploring (the `long` profile: fresh random examples, 20x as many; about half an hour on 2 cores):
    HYPOTHESIS_PROFILE=long .venv/bin/python -m pytest tests/test_properties.py
"""
import math, os, re, subprocess, sys
import pytest
from fastcore.basics import AttrDict
from hypothesis import example, given, settings, strategies as st
from aidialog.msg_parts import Msg, Text, Thinking, Refusal, InputImage, ToolUse, ToolResult, mk_msg
from llmsurgery.compact import (compact_enc, len_toks, trunctoks_mid, compact_text, compact_result, bash_call, generic_call,
    fenced_code, fence_min, compact_call, compact_user, compact_user_part, compact_asst, compact_asst_part, compact_tool,
    compact_msg, compact_chat, compact_doc, compact_content, continuation_doc, fit_chat, policy_chat)
from llmsurgery.inject import is_plumbing, skill_marker
from llmsurgery.render import Budgets, Policy
from llmsurgery.docstyle import doc_call, doc_result, error_result, err_toks, head_cap
from llmsurgery.toks import head_text
from llmsurgery.document import covers_clause
from llmsurgery.state import state_facts, render_state, render_fact, first_prompt

MARK = ' … '
def toks(s): return len_toks(s)
def clip_threshold(n): return 2*128*(n+2)

def scaled(n):
    "`n` examples under the `ci` profile, proportionally more under `long`"
    return settings(max_examples=max(1, n*settings().max_examples//100))

# ---------------------------------------------------------------- strategies: text

# Pieces that stress tokenizers, Unicode handling, Markdown fences and the DSL's own syntax
tricky = st.sampled_from([
    'a', 'Z', 'word ', '  ', ' ', '\n', '\n\n', '\r\n', '\r', '\t', 'é', 'e\u0301', 'n\u0303\u0301', '家族', '漢字かな', 'ß',
    '👩\u200d👩\u200d👧', '👍🏽', '🇫🇷🇯🇵', '\x00', '\u200b', '\u200d', '\ufeff', '\u2028', '`', '``', '```', '\n```', '\r```', '\r```\r', '\n````py\n',
    '\n  ```\n', '§', '»', '¶', '▶', '>', '!', '…', MARK, '***', '\n\n***\n\n', '𝍁', '<warn>', '</warn>', '<note>', '</note>',
    '<system-reminder>', '</system-reminder>', '<|endoftext|>', 'x = 1\n', 'def f(a):\n    return a\n', '12345', '"\'\\'])
chunks = st.one_of(tricky, st.text(max_size=6))      # st.text: any code point but surrogates
def joined(max_chunks, min_chunks=0): return st.lists(chunks, min_size=min_chunks, max_size=max_chunks).map(''.join)
def repeated(lo, hi): return st.builds(lambda s, k: s*k, joined(12, 1), st.integers(lo, hi))

short_texts = joined(12)
# Short, medium (a few hundred chars), long (thousands) and, for the budget properties, very long (up to megabytes)
texts = st.one_of(short_texts, joined(150), repeated(20, 600))
any_texts = st.one_of(texts, repeated(2_000, 60_000))
# Tag soup: doc-state and reminder blocks, opened and closed in any order around long stretches of filler
fillers = st.builds(lambda w, k: w*k, st.sampled_from(['a ', 'word\n', '家族 ', 'x', '\n\n']),
                    st.one_of(st.integers(0, 40), st.sampled_from([300, 1_000, 3_000])))
tags = st.sampled_from(['warn', 'note', 'system-reminder'])
tag_soup = st.lists(st.one_of(tags.map('<{}>'.format), tags.map('</{}>'.format), fillers, short_texts), max_size=8).map(''.join)
def _one_tag_blocks(tag):
    "Opening and closing tags of one kind, in any order, each followed by filler and a little text"
    return st.lists(st.builds(lambda close, f, t: f'<{"/"*close}{tag}>{f}{t}', st.booleans(), fillers, short_texts),
                    min_size=1, max_size=4).map(''.join)
blocky_texts = st.one_of(tag_soup, tags.flatmap(_one_tag_blocks))
budgets = st.one_of(st.integers(0, 50), st.sampled_from([64, 100, 150, 400, 2000]))

# ---------------------------------------------------------------- strategies: tool calls and messages

values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), short_texts, st.binary(max_size=16)),
                      lambda v: st.one_of(st.lists(v, max_size=4), st.dictionaries(short_texts, v, max_size=3)), max_leaves=8)
arg_values = st.one_of(values, texts, any_texts)
dict_args = st.dictionaries(short_texts, arg_values, max_size=4)
any_args = st.one_of(dict_args, st.none(), texts, st.lists(values, max_size=4), st.integers(), st.binary(max_size=32))
tool_names = st.one_of(st.sampled_from(['py', 'mcp__clikernel__execute', 'tools.mcp__clikernel__execute', 'Bash', 'bash',
    'tools.Bash', 'Skill', 'inspect', 'Read', '', 'ü`x']), short_texts)
payload_calls = st.one_of(                       # calls with the payload their registered renderer expects ...
    st.builds(lambda n, c: ToolUse(name=n, arguments={'code': c}), st.sampled_from(['py', 'mcp__clikernel__execute', 'x.py']), any_texts),
    st.builds(lambda c: ToolUse(name='Bash', arguments={'command': c, 'description': 'run it'}), any_texts),
    st.builds(lambda c: ToolUse(name='bash', arguments={'cmd': c}), any_texts))
calls = st.one_of(payload_calls, st.builds(lambda n, a: ToolUse(name=n, arguments=a), tool_names, any_args))   # ... and anything else
server_calls = st.builds(lambda c, t: ToolUse(name=c.name, arguments=c.arguments, server=True, text=t), calls, any_texts)
images = st.just(InputImage(text='data:image/png;base64,iVBORw0KGgo=', mime='image/png'))
skill_texts = texts.map(lambda t: 'Base directory for this skill: /skills/x\n\n' + t)
plumbing = st.sampled_from(['<command-name>/compact</command-name>\n<command-message>compact</command-message>',
    '<local-command-stdout>Compacted</local-command-stdout>', '  <system-reminder>\nTodo list is empty.</system-reminder>'])

user_parts = st.one_of(any_texts.map(Text), skill_texts.map(Text), plumbing.map(Text), images, any_texts.map(lambda t: ToolResult(text=t)))
asst_parts = st.one_of(any_texts.map(Text), texts.map(Thinking), texts.map(Refusal), calls, server_calls, images,
                       st.just(Text('.')), any_texts.map(lambda t: ToolResult(text=t)))
tool_parts = st.one_of(any_texts.map(lambda t: ToolResult(text=t)), texts.map(Thinking))
user_msgs = st.lists(user_parts, max_size=4).map(lambda ps: Msg('user', ps))
asst_msgs = st.lists(asst_parts, max_size=4).map(lambda ps: Msg('assistant', ps))
tool_msgs = st.lists(tool_parts, min_size=1, max_size=3).map(lambda ps: Msg('tool', ps))

# ---------------------------------------------------------------- what the docs promise, restated

def kept_whole(result):
    "A `𝍁`-wrapped tool result is exempt from budgets"
    w = ('' if result is None else str(result)).strip()
    return len(w) > 1 and w[0] == w[-1] == '𝍁'

def renders_as_fence(name, args):
    "`compact_call`'s dispatch for code: clikernel and `py` (a dotted name by its last component too) with text `code`"
    registered = ('mcp__clikernel__execute', 'py', 'Bash', 'bash')
    name = '?' if name is None else str(name)
    key = name if name in registered else name.rsplit('.', 1)[-1]
    return key in ('mcp__clikernel__execute', 'py') and isinstance(args, dict) and isinstance(args.get('code'), str)

def cut_cost(*forms): return max(map(toks, forms))
CALL_CUT = cut_cost('!  … ', '▶  … ')             # the empty cut forms of the non-fenced call renderers

def is_middle_cut(s, out):
    "Is `out` == `s[:i] + ' … ' + s[j:]` for some `i < j`?"
    return any(s.startswith(out[:p]) and s.endswith(out[p+len(MARK):]) and len(out)-len(MARK) < len(s)
               for p in marks_in(out))

def marks_in(s):
    "Positions of ' … ' in `s`, overlapping ones included"
    return [m.start() for m in re.finditer(f'(?={re.escape(MARK)})', s)]

def no_new_fffd(src, out): return '\ufffd' not in out or '\ufffd' in src

def assert_within(out, n, cut_form):
    "`out` has at most `n` tokens, and is empty only when `n` is below the cost of the renderer's empty cut form"
    assert toks(out) <= n, (toks(out), n, out[:300])
    if out == '': assert n < toks(cut_form), (n, cut_form)
    if n >= toks(cut_form): assert out != ''

def fence_parts(out):
    "`(fence, body)` of a fenced rendering"
    m = re.match(r'(`{3,})python\n', out)
    assert m and out.endswith('\n' + m[1]), out[:200]
    return m[1], out[m.end():len(out)-len(m[1])-1]

# ---------------------------------------------------------------- 1. budgets, and 2. intact text, per renderer

@given(any_texts, budgets)
def test_trunctoks_mid_within_budget(s, n):
    "Budget: trunctoks_mid fits n tokens; '' only below the cost of the cut mark alone (or for empty input)"
    out = trunctoks_mid(s, n)
    assert toks(out) <= n
    if out == '' and s: assert n < toks(MARK)

@given(any_texts, budgets)
def test_trunctoks_mid_keeps_the_ends(s, n):
    "Intact text: the output is the input, '', or a head and tail of it around ' … ', never with a new U+FFFD"
    out = trunctoks_mid(s, n)
    assert no_new_fffd(s, out)
    assert out in (s, '') or is_middle_cut(s, out), (s[:200], out)
    if len(s) > clip_threshold(n) and out:                     # a huge input keeps only what n tokens can reach
        head, _, tail = out.partition(MARK)
        assert len(head) <= 128*(n+2) and len(out) <= 2*128*(n+2) + len(MARK)

marks = st.sampled_from(['§', '»', ''])

@given(any_texts, marks, budgets)
def test_compact_text_within_budget(s, mark, n):
    "Budget: compact_text fits n tokens; '' only below the cost of its empty cut form"
    out = compact_text(s, mark, n)
    if mark: assert_within(out, n, f'{mark} {MARK} {mark}')
    else: assert toks(out) <= n and (out or not s or n < toks(MARK))

@given(texts, marks, budgets)
def test_compact_text_keeps_the_ends(s, mark, n):
    "Intact text: compact_text is the whole text between its marks, or a head and tail of it around ' … '"
    out = compact_text(s, mark, n)
    assert no_new_fffd(s, out)
    wrap = (lambda b: f'{mark} {b} {mark}') if mark else (lambda b: b)
    if out in ('', wrap(s)): return
    pre, post = (f'{mark} ', f' {mark}') if mark else ('', '')
    assert out.startswith(pre) and out.endswith(post)
    assert is_middle_cut(s, out[len(pre):len(out)-len(post)]), (s[:200], out)

@given(any_texts, budgets)
def test_compact_result_within_budget(s, n):
    "Budget: compact_result fits n tokens unless the result is 𝍁-wrapped; '' only below the cost of '>  … '"
    out = compact_result(s, n)
    if kept_whole(s): assert out.startswith('>')
    else: assert_within(out, n, '>  … ')

STRADDLING = '<{0}>' + 'a '*1000 + '</{0}>KEY<{0}>' + 'a '*1000 + '</{0}>'   # blocks whose ends fall either side of the clip

@given(st.one_of(texts, blocky_texts), budgets)
@example(STRADDLING.format('warn'), 5).via('a regression: the mark was swallowed by a block spanning the clip')
def test_compact_result_marks_every_cut(s, n):
    "Intact text: a result that lost anything shows ' … ', and below the clip size is a head and tail of the whole rendering"
    out, whole = compact_result(s, n), compact_result(s, None)
    assert no_new_fffd(s, out)
    if out in ('', whole): return
    assert MARK in out, (s[:300], out)
    if len(s) <= clip_threshold(n): assert out.startswith('> ') and is_middle_cut(whole[2:], out[2:]), (s[:300], out)

@given(st.one_of(texts, blocky_texts), budgets)
@example('Fix it.' + STRADDLING.format('system-reminder'), 8).via('a regression: user text lost silently')
def test_compact_user_marks_every_cut(s, n):
    "Intact text: a user message that lost anything (beyond its system reminders) shows ' … '"
    m = mk_msg(s)
    out, whole = compact_user(m, n), compact_user(m, None)
    assert no_new_fffd(s, out)
    assert out in ('', whole) or MARK in out, (s[:300], out)

@given(any_texts, budgets)
def test_bash_call_within_budget(s, n):
    "Budget: bash_call fits n tokens; '' only below the cost of '!  … '"
    assert_within(bash_call(s, n), n, '!  … ')

@given(texts, budgets)
def test_bash_call_marks_every_cut(s, n):
    "Intact text: a command that lost anything shows ' … ', and below the clip size is a head and tail of the whole rendering"
    out, whole = bash_call(s, n), bash_call(s, None)
    assert no_new_fffd(s, out)
    if out in ('', whole): return
    assert out.startswith('! ') and MARK in out
    if len(s) <= clip_threshold(n): assert is_middle_cut(whole[2:], out[2:]), (s[:300], out)

@given(tool_names, any_args, budgets)
def test_generic_call_within_budget(name, args, n):
    "Budget: generic_call fits n tokens for dict and non-dict arguments; '' only below the cost of '▶  … '"
    assert_within(generic_call(name, args, n), n, '▶  … ')

@given(tool_names, st.one_of(dict_args, texts), budgets)
def test_generic_call_marks_every_cut(name, args, n):
    "Intact text: a call that lost anything shows ' … '"
    out, whole = generic_call(name, args, n), generic_call(name, args, None)
    assert no_new_fffd(whole, out)
    assert out in ('', whole) or (out.startswith('▶ ') and MARK in out), (whole[:300], out)

@given(any_texts, budgets)
def test_fenced_code_within_budget(code, n):
    "Budget: fenced_code fits n tokens, and raises a ValueError naming fence_min() exactly when n is below it"
    fm = fence_min()
    try: out = fenced_code(code, n)
    except ValueError as e:
        assert n < fm and str(fm) in str(e), (n, fm, e)
        return
    assert n >= fm and toks(out) <= n, (n, toks(out))

@given(texts, st.integers(6, 60))
def test_fenced_code_keeps_the_ends(code, n):
    "Intact text: the fenced body is the whole code, or a head and tail of it around ' … '"
    out = fenced_code(code, n)
    _, body = fence_parts(out)
    assert no_new_fffd(code, out)
    assert body == code.rstrip('\n') or is_middle_cut(code.rstrip('\n'), body), (code[:200], out)

def line_endings(s): return re.split(r'\r\n|\r|\n', s)      # CommonMark's line endings

@given(texts, st.one_of(st.none(), st.integers(6, 80)))
@example('a\r```\rb', None).via('a regression: a bare CR starts a line')
def test_fence_cannot_be_closed_from_inside(code, n):
    "Intact text: no line of the body is a closing fence for the fence chosen (CommonMark: <= 3 spaces, the run, spaces)"
    fence, body = fence_parts(fenced_code(code, n))
    closers = [l for l in line_endings(body) if re.fullmatch(r' {0,3}`{%d,}[ \t]*' % len(fence), l)]
    assert not closers, (fence, closers, code[:200])

@given(st.one_of(calls, server_calls), budgets)
def test_compact_call_within_budget(p, n):
    "Budget: compact_call fits n tokens; a fenced call raises ValueError naming fence_min() iff n is below it, others give '' only below their cut form"
    fm, fenced = fence_min(), renders_as_fence(p.name, p.arguments)
    try: out = compact_call(p, n)
    except ValueError as e:
        assert fenced and n < fm and str(fm) in str(e), (p.name, n, e)
        return
    assert not (fenced and n < fm), 'a fence below fence_min() must raise'
    assert toks(out) <= n, (p.name, toks(out), n)
    if out == '': assert not fenced and n < CALL_CUT

# ---------------------------------------------------------------- budgets per message: each part within its class budget

def check_part(r, n, cut_form):
    assert toks(r) <= n, (toks(r), n, r[:300])
    if r == '': assert n < toks(cut_form)

@given(user_msgs, budgets)
def test_compact_user_within_budget(m, n):
    "Budget: each part of a user message renders within user_toks, and so does the whole message: its parts joined with newlines, or, when those overrun, one block cut in the middle"
    rs = [compact_user_part(p, n) for p in m.content]
    for p, r in zip(m.content, rs):
        if isinstance(p, ToolResult) and kept_whole(p.text): continue
        if isinstance(p, Text) and (not p.text.strip() or is_plumbing(p.text)): assert r == ''
        elif isinstance(p, ToolResult): check_part(r, n, '>  … ')
        else: check_part(r, n, '§  …  §')
    joined, out = '\n'.join(r for r in rs if r), compact_user(m, n)
    if any(isinstance(p, ToolResult) and kept_whole(p.text) for p in m.content): return
    if toks(joined) <= n: assert out == joined
    else:   # one block: the parts' words together, whole if that fits (one pair of marks fewer), else cut in the middle
        block = '§ ' + '\n'.join(p.user_words() for p in m.content if p.says('user')) + ' §'
        assert toks(out) <= n and (out == '' or out == block or (out.startswith('§ ') and out.endswith(' §') and ' … ' in out)), (n, out[:300])

@given(asst_msgs, budgets, budgets)
def test_compact_asst_parts_within_budget(m, text_n, call_n):
    "Budget: prose within asst_toks, each call (and a server call's result) within call_toks, joined with newlines; fences below fence_min() raise"
    fenced = any(isinstance(p, ToolUse) and renders_as_fence(p.name, p.arguments) for p in m.content)
    if fenced and call_n < fence_min():
        with pytest.raises(ValueError, match=str(fence_min())): compact_asst(m, text_n, call_n)
        return
    rs = [compact_asst_part(p, text_n, call_n) for p in m.content]
    for p, r in zip(m.content, rs):
        if isinstance(p, Thinking) or (isinstance(p, Text) and p.text == '.'): assert r == ''
        elif isinstance(p, ToolUse):
            c = compact_call(p, call_n)
            check_part(c, call_n, '!  … ' if c.startswith('!') else '▶  … ')
            if p.server and p.text:
                res = compact_result(p.text, call_n)
                if not kept_whole(p.text): check_part(res, call_n, '>  … ')
                assert r == '\n'.join(o for o in (c, res) if o)
            else: assert r == c
        elif isinstance(p, ToolResult):
            if not kept_whole(p.text): check_part(r, call_n, '>  … ')
        elif isinstance(p, (Text, Refusal)) and not p.text.strip(): assert r == ''
        else: check_part(r, text_n, '»  …  »')
    assert compact_asst(m, text_n, call_n) == '\n'.join(r for r in rs if r)

@given(tool_msgs, budgets)
def test_compact_tool_parts_within_budget(m, n):
    "Budget: each result of a tool message renders within result_toks (𝍁-wrapped ones exempt), thinking is left out"
    rs = [compact_result(p.text, n) for p in m.content if isinstance(p, ToolResult)]
    for p, r in zip([p for p in m.content if isinstance(p, ToolResult)], rs):
        if not kept_whole(p.text): check_part(r, n, '>  … ')
    assert compact_tool(m, n) == '\n'.join(r for r in rs if r)

@given(st.one_of(user_msgs, asst_msgs, tool_msgs), st.tuples(budgets, budgets, st.integers(6, 60), budgets))
def test_compact_msg_uses_the_class_budget(m, b):
    "Budget: compact_msg renders each role with its own class budget (user, asst+call, result)"
    u, a, c, r = b
    expect = {'user': lambda: compact_user(m, u), 'assistant': lambda: compact_asst(m, a, c), 'tool': lambda: compact_tool(m, r)}
    assert compact_msg(m, u, a, c, r) == expect[m.role]()

def test_compact_msg_names_an_unknown_role():
    "Budget: a role compact_msg has no class for is an error naming it"
    with pytest.raises(ValueError, match="'system'"): compact_msg(Msg('system', [Text('x')]), 10, 10, 10, 10)

# ---------------------------------------------------------------- 3. cost bounded by the budget, not by the input

class CountingEnc:
    "The compact encoding, counting how many calls encode how many characters"
    def __init__(self): self.enc, self.calls, self.chars = compact_enc(), 0, 0
    def encode_ordinary(self, s):
        self.calls += 1; self.chars += len(s)
        return self.enc.encode_ordinary(s)
    def encode_ordinary_batch(self, ss, num_threads=1): return [self.encode_ordinary(s) for s in ss]
    def decode_bytes(self, toks): return self.enc.decode_bytes(toks)

def adversarial(kind, size):
    "`size` characters of a pathological tool output"
    unit = {'one char, no spaces': 'x', 'whitespace': ' \t ', 'CJK and emoji': '家族漢字👩\u200d👩\u200d👧🇫🇷',
            'newlines': 'ok\n\n', 'only newlines': '\n', 'unclosed warn tags': '<warn> failing <note>\n',
            'warn blocks': '<warn>x</warn>\n<system-reminder>r</system-reminder> y\n'}[kind]
    return (unit*(size//len(unit)+1))[:size]
KINDS = ['one char, no spaces', 'whitespace', 'CJK and emoji', 'newlines', 'only newlines', 'unclosed warn tags', 'warn blocks']
MB = 1_000_000

def result_cost(s, n=35):
    enc = CountingEnc()
    out = compact_result(s, n, enc=enc)
    assert len_toks(out) <= n
    return enc.chars

@pytest.mark.parametrize('kind', KINDS)
def test_result_cost_does_not_grow_with_the_input(kind):
    "Cost: compact_result(11 MB, 35) encodes under 100k characters, no more than for 1 MB of the same"
    small, big = result_cost(adversarial(kind, MB)), result_cost(adversarial(kind, 11*MB))
    assert big < 100_000, big
    assert big <= 2*small + 1_000, (small, big)

RENDERERS = {'trunctoks_mid': lambda s, n, e: trunctoks_mid(s, n, e), 'compact_text': lambda s, n, e: compact_text(s, '§', n, e),
    'bash_call': lambda s, n, e: bash_call(s, n, e), 'generic_call': lambda s, n, e: generic_call('write', {'path': 'a', 'text': s}, n, e),
    'fenced_code': lambda s, n, e: fenced_code(s, n, e), 'compact_user': lambda s, n, e: compact_user(mk_msg(s), n, e)}

@pytest.mark.parametrize('kind', KINDS)
@pytest.mark.parametrize('name', RENDERERS)
def test_renderer_cost_is_bounded_by_the_budget(name, kind):
    "Cost: every renderer encodes under 100k characters of an 11 MB input for a budget of 60, and stays within it"
    enc = CountingEnc()
    out = RENDERERS[name](adversarial(kind, 11*MB), 60, enc)
    assert enc.chars < 100_000, enc.chars
    assert len_toks(out) <= 60

@pytest.mark.parametrize('n', [35, 400, 2000])
@pytest.mark.parametrize('body', ['x = 1\n', 'def f(a):\n    return "héllo 👩\u200d👩\u200d👧"  # 家族\n', '```\n', ' '])
def test_fenced_code_search_is_logarithmic(body, n):
    "Cost: fencing a long body takes O(log budget) encodes (at most 2*log2(n)+6), not a step down per token"
    enc = CountingEnc()
    out = fenced_code(body*200_000, n, enc=enc)
    assert enc.calls <= 2*math.log2(n) + 6, enc.calls
    assert len_toks(out) <= n

# ---------------------------------------------------------------- 4. budgets too small to render anything

@given(st.dictionaries(st.sampled_from(['user_toks', 'asst_toks', 'call_toks', 'result_toks']), st.integers(0, 12), min_size=1))
def test_compact_chat_names_a_class_budget_that_is_too_small(budgets):
    "Too small: compact_chat checks the policy before rendering and names the class whose budget is below its smallest rendering"
    call = max(fence_min(), CALL_CUT)
    smallest = dict(user_toks=max(toks('§  …  §'), call), asst_toks=toks('»  …  »'), result_toks=toks('>  … '), call_toks=call)   # a user message may carry a call
    low = [k for k, v in budgets.items() if v < smallest[k]]
    msgs = [mk_msg('hi')]
    if not low:
        assert compact_chat(msgs, **budgets).startswith('§ hi §')
        return
    with pytest.raises(ValueError) as e: compact_chat(msgs, **budgets)
    assert any(f'{k}={budgets[k]}' in str(e.value) for k in low) and 'too small' in str(e.value), (budgets, e.value)
    with pytest.raises(ValueError): compact_chat([], **budgets)    # up front: even with nothing to render

def test_compact_chat_rejects_call_toks_2():
    "Too small: the issue's own example"
    with pytest.raises(ValueError, match='call_toks'): compact_chat([mk_msg('hi')], call_toks=2)

# ---------------------------------------------------------------- 5. fitting a target size

user_texts = texts.map(lambda t: t.replace('<system-reminder>', '<sr>'))
results = st.one_of(texts, repeated(500, 3_000))

@st.composite
def sessions(draw):
    "A session from the spec's message kinds; each ordinary user message starts with the tag `U<index>:`"
    kinds = draw(st.lists(st.sampled_from(['user', 'user', 'skill', 'plumbing', 'asst', 'asst', 'tool', 'tool']), min_size=2, max_size=16))
    msgs = []
    for k in kinds:
        i = len(msgs)
        if k == 'user': msgs.append(mk_msg(f'U{i}: ' + draw(user_texts)))
        elif k == 'skill': msgs.append(mk_msg(draw(skill_texts)))
        elif k == 'plumbing': msgs.append(mk_msg(draw(plumbing)))
        elif k == 'tool': msgs.append(Msg('tool', [ToolResult(text=draw(results))]))
        else:
            call = st.one_of(st.builds(lambda c: ToolUse(name='Bash', arguments={'command': c}), short_texts),
                             st.builds(lambda c: ToolUse(name='py', arguments={'code': c}), texts),
                             st.builds(lambda a: ToolUse(name='inspect', arguments=a), st.dictionaries(short_texts, st.one_of(values, texts), max_size=3)),
                             st.sampled_from(['project-files', 'tests']).map(lambda s: ToolUse(name='Skill', arguments={'skill': s})))
            msgs.append(Msg('assistant', draw(st.lists(st.one_of(texts.map(Text), call, texts.map(Thinking)), min_size=1, max_size=3))))
    return msgs

TARGETS = [0, 4, 12, 30, 80, 200, 600, 2_000, 8_000, 10**6]

def is_user_text(m): return m.role == 'user' and m.content[0].text.startswith('U')
def turns_of(msgs): return [i for i, m in enumerate(msgs) if m.role == 'user' and not m.content[0].text.lstrip().startswith('<')]

def all_dropped(msgs):
    "The marker for every message left out: the least any fitted rendering can be"
    nt, nm = len(turns_of(msgs)), len(msgs)
    return f'… {nt} earlier turn{"s"*(nt!=1)} ({nm} message{"s"*(nm!=1)}) left out …'

def fits(f, msgs, floor):
    "`{N: doc}` over TARGETS, after checking each: within N, or 'too small' and N below the all-dropped rendering"
    docs = {}
    for n in TARGETS:
        try: docs[n] = f(msgs, n)
        except ValueError as e:
            assert 'too small' in str(e) and n < toks(floor), (n, toks(floor), e)
            continue
        assert toks(docs[n]) <= n, (n, toks(docs[n]))
    return docs

chat_fit = lambda msgs, n: fit_chat(msgs, n).text   # the fit keeps the last 5 messages whole where it can
doc_fit = lambda msgs, n: compact_doc(msgs, '/s.jsonl', notes='Resume here.', max_toks=n)
FLOOR_BUDGETS = Budgets(24, 12, 12, toks('>  … '))   # fit_floors; in a document a result may go down to its least form

def doc_turns_of(msgs):
    "Where turns start in a document: injected user records (here, skill texts) join the turn they interrupt"
    return [i for i in turns_of(msgs) if not msgs[i].content[0].text.startswith(('Base directory for this skill:', '[Request interrupted'))]

def doc_floor(msgs, nums=None):
    "The least document: the state section at the floors, every turn left out (numbered `nums`: their numbers said)"
    nt, nm = len(doc_turns_of(msgs)), len(msgs)
    marker = f'… {nt} earlier turn{"s"*(nt!=1)} ({nm} message{"s"*(nm!=1)}) left out …'
    if nums: marker = marker[:-2] + f': #{nums[0]}' + f'–#{nums[-1]}'*(len(nums)>1) + ' …'
    state = render_state(state_facts(msgs), FLOOR_BUDGETS)
    return compact_content(marker, '/s.jsonl', 'Resume here.', covers_clause(msgs), state, bool(nums))

def some_nums(msgs): return list(range(1001, 1001+3*len(msgs), 3))   # transcript lines, four digits: as a real one's
numbered_fit = lambda msgs, n: compact_doc(msgs, '/s.jsonl', notes='Resume here.', max_toks=n, nums=some_nums(msgs))

@scaled(40)
@given(sessions())
def test_fit_chat_within_target(msgs):
    "Fitting: compact_chat(max_toks=N) is within N, or says 'too small' only when N is below the all-dropped rendering"
    assert fits(chat_fit, msgs, all_dropped(msgs))

@scaled(25)
@given(sessions())
def test_fit_doc_within_target(msgs):
    "Fitting: compact_doc(max_toks=N) (legend, notes and skill list included) is within N, or says 'too small' only below the all-dropped document"
    assert fits(doc_fit, msgs, doc_floor(msgs))

@scaled(25)
@given(sessions())
def test_numbered_doc_within_target(msgs):
    "Fitting: a document whose turns are numbered (`nums`) is within N too, or says 'too small' only below its floor"
    docs = fits(numbered_fit, msgs, doc_floor(msgs, some_nums(msgs)))
    for d in docs.values():   # the first turn kept opens with its number; or the line for those left out says theirs
        conv = d.partition('## Conversation\n\n')[2]
        assert conv.startswith('*** #1') or re.match(r'… [^\n]*: #\d+(–#\d+)? …(\n\n\*\*\* #|\n\n## )', conv), conv[:80]

def user_fate(body, text):
    "'whole' if `body` holds user `text` rendered whole, 'cut' if a head (with its tag) and a tail around ' … ', else None"
    if f'§ {text} §' in body: return 'whole'
    tag = text.split(':', 1)[0] + ':'
    p = body.find(f'§ {tag}')
    if p < 0: return None
    rest = body[p+2:]
    lcp = len(os.path.commonprefix([rest[:len(text)], text]))
    for i in marks_in(rest[:lcp+len(MARK)]):
        if i < len(tag): continue
        after = rest[i+len(MARK):]
        for q in [m.start() for m in re.finditer(' §', after)][:50]:
            if text.endswith(after[:q]) and q <= len(text)-i: return 'cut'
    return None

@scaled(40)
@given(sessions())
def test_fit_loses_no_user_message_silently(msgs):
    "Fitting: every user message is counted whole, cut or dropped; only the earliest are dropped, behind a marker that counts them"
    users = [i for i, m in enumerate(msgs) if is_user_text(m)]
    skills = [i for i in turns_of(msgs) if i not in users]
    for n in TARGETS:
        try: doc = chat_fit(msgs, n)
        except ValueError: continue
        r = AttrDict(fit_chat(msgs, n).stats)
        assert r.turns == len(turns_of(msgs)) and r.user_whole + r.user_cut + r.user_dropped == r.turns
        dropped = r.dropped_msgs
        assert r.user_dropped == sum(i < dropped for i in turns_of(msgs))
        marker = re.match(r'… (\d+) earlier turns? \((\d+) messages?\) left out …', doc)
        assert bool(marker) == (dropped > 0), doc[:200]
        if marker: assert (int(marker[1]), int(marker[2])) == (r.user_dropped, dropped)
        fates = {i: user_fate(doc, msgs[i].content[0].text) for i in users}
        for i in users: assert (fates[i] is None) == (i < dropped), (n, i, dropped, fates[i])
        whole_skills = doc.count(f'§ {skill_marker} §')
        kept_skills = sum(i >= dropped for i in skills)
        assert r.user_whole == sum(f == 'whole' for f in fates.values()) + whole_skills, (n, r)
        assert r.user_cut == sum(f == 'cut' for f in fates.values()) + kept_skills - whole_skills, (n, r)

def nondecreasing(xs): return all(a <= b for a, b in zip(xs, xs[1:]))

@pytest.mark.parametrize('fit,floor', [(chat_fit, all_dropped), (doc_fit, doc_floor)], ids=['compact_chat', 'compact_doc'])
@scaled(30)
@given(msgs=sessions())
def test_fit_grows_with_the_target(fit, floor, msgs):
    "Fitting: the token count never decreases as max_toks grows, and 'too small' happens only below every success"
    docs = fits(fit, msgs, floor(msgs))
    assert list(docs) == TARGETS[len(TARGETS)-len(docs):]
    assert nondecreasing([toks(d) for d in docs.values()]), [(n, toks(d)) for n, d in docs.items()]

# ---------------------------------------------------------------- 6. determinism

@scaled(40)
@given(sessions(), st.sampled_from([None, 30, 300, 3000]))
def test_same_input_same_output(msgs, n):
    "Determinism: rendering a session twice gives the same text and the same stats"
    a, b = compact_chat(msgs, max_toks=n), compact_chat(list(msgs), max_toks=n)
    stats = lambda: (fit_chat(msgs, n) if n else policy_chat(msgs)).stats
    assert a == b and stats() == stats()

_render_script = '''
import random, hashlib
from aidialog.msg_parts import Msg, ToolResult, ToolUse, Text, mk_msg
from llmsurgery.compact import compact_chat, compact_doc
rnd = random.Random(7)
words = ['alpha', 'β', '家族', '👩\\u200d👩\\u200d👧', '\\n', '```', '<warn>', '</warn>', 'x = 1', '§', ' … ']
say = lambda k: ' '.join(rnd.choice(words) for _ in range(k))
msgs = []
for i in range(40):
    msgs += [mk_msg(f'U{i}: ' + say(30)), Msg('assistant', [Text(say(60)), ToolUse(name=rnd.choice(['Bash', 'inspect', 'Skill']),
             arguments={'command': say(20), 'skill': f's{i%3}', 'n': [i, {'k': say(3)}]})]), Msg('tool', [ToolResult(text=say(400))])]
out = [compact_chat(msgs), compact_chat(msgs, max_toks=900)] + [compact_doc(msgs, '/s', max_toks=n) for n in (400, 3000)]
print(hashlib.sha256('\\x00'.join(out).encode()).hexdigest())
'''

def test_output_does_not_depend_on_hash_seed():
    "Determinism: a fresh interpreter with a different PYTHONHASHSEED renders the same session identically"
    run = lambda seed: subprocess.run([sys.executable, '-c', _render_script], capture_output=True, text=True, check=True,
                                      env=dict(os.environ, PYTHONHASHSEED=seed)).stdout
    assert run('1') == run('2') != ''

# ---------------------------------------------------------------- 7. the continuation document: state, priorities, errors, growth

from fastcore.basics import noop
from llmsurgery.fit import _Fitter
from llmsurgery.render import turn_starts
from llmsurgery.docstyle import is_error_result
from llmsurgery.document import compact_body

def _work(i):
    "Tool work a session's state section reads: an edit, a todo list, a commit and its result, an error"
    return [Msg('assistant', [ToolUse(id=f'e{i}', name='Edit', arguments={'file_path': f'/w/src/f{i}.py', 'replace_all': False}),
                              ToolUse(id=f't{i}', name='TodoWrite', arguments={'todos': [{'content': f'step {i}', 'status': 'in_progress'}]}),
                              ToolUse(id=f'c{i}', name='Bash', arguments={'command': f'git commit -m "step {i}"'})]),
            Msg('tool', [ToolResult(id=f'c{i}', name='Bash', text=f'[main {i:07x}] step {i}\n 1 file changed')]),
            Msg('tool', [ToolResult(id=f'x{i}', name='Bash', text=f'Error: Exit code 1\n' + 'noise\n'*i*40 + f'AssertionError: step {i} failed')]),
            mk_msg('[Request interrupted by user for tool use]' + ' and why'*i)]

work_sessions = st.builds(lambda ms, k, at: ms[:at] + _work(k) + ms[at:], sessions(), st.integers(0, 300), st.integers(0, 16))

@scaled(25)
@given(work_sessions)
def test_doc_state_is_never_dropped(msgs):
    "The document: every fitted document holds the state section before the conversation, the first typed prompt in it"
    for n, doc in fits(doc_fit, msgs, doc_floor(msgs)).items():
        state = doc[:doc.index('\n\n## Conversation\n\n')]
        assert '\n\n## State\n\n' in state, (n, doc[:300])
        if first_prompt(msgs): assert '- Task (the first prompt typed): § U' in state, (n, state[-600:])
        assert '- Files changed (edit calls): /w/src/f' in state or 'Files changed' not in render_state(state_facts(msgs), Budgets.unlimited())
        r = continuation_doc(msgs, '/s.jsonl', notes='Resume here.', max_toks=n).stats   # an injected record opens no turn, and is not counted as a user message of one
        assert r['turns'] == len(doc_turns_of(msgs)) and min(r['user_whole'], r['user_cut'], r['user_dropped']) >= 0
        assert r['user_whole'] + r['user_cut'] + r['user_dropped'] == r['turns'], r

@scaled(40)
@given(work_sessions, st.tuples(budgets, budgets, budgets, budgets))
def test_state_facts_within_their_budgets(msgs, b):
    "The state section: each fact on one line, within the budget its kind takes from the conversation's budgets"
    b = Budgets(*b)
    limits = dict(said=b.user_toks, user=b.user_toks, asst=4*b.asst_toks, summary=b.user_toks, error=err_toks(b.result_toks),
                  **{k: b.user_toks for k in ('prompts', 'paths', 'commands', 'errors')})   # a list: within the user budget
    for label, s, kind in state_facts(msgs, '/w'):
        out = render_fact(s, kind, b)
        assert '\n' not in out and no_new_fffd(s, out)
        if kind: assert toks(out) <= limits[kind], (label, kind, toks(out), limits[kind])

@scaled(40)
@given(sessions())
@example([mk_msg('<command-name>/compact</command-name>\n<command-message>compact</command-message>'), mk_msg('U1: ' + 'é'*20)])   # dropping the plumbing costs a marker: start 0 is smaller
def test_fit_uses_its_target(msgs):
    "Fitting (issue 11, defect 5): no document under N/2 while a rendering between N/2 and N exists, unless it shows everything at the policy; the renderings checked are the fit's own of the most turns at the floors"
    starts = [0] + [i for i in turn_starts(msgs) if i > 0]
    for n in TARGETS:
        try: doc = chat_fit(msgs, n)
        except ValueError: continue
        f = _Fitter(msgs, Policy(), None, noop, n)
        if toks(doc) >= n/2 or (fit_chat(msgs, n).stats['dropped_msgs'] == 0 and toks(doc) >= toks(compact_chat(msgs))): continue   # or it shows all there is
        assert not any(n/2 <= f.toks(0, s) <= n for s in starts), (n, toks(doc), [f.toks(0, s) for s in starts])

@scaled(30)
@given(sessions())
def test_a_roomy_target_grows_the_budgets(msgs):
    "Fitting: a target with room gives at least the policy's rendering, and grows past it where budgets cut"
    plain, roomy = compact_chat(msgs), chat_fit(msgs, 10**6)
    assert toks(plain) <= toks(roomy) <= 10**6
    if 'U' in plain and ' … ' not in plain: assert roomy == plain    # nothing was cut: nothing to grow

safe_lines = st.text(alphabet='abcdxyz 0123=./', max_size=30)

@scaled(60)
@given(st.lists(safe_lines, max_size=30), safe_lines, st.integers(0, 400), budgets)
@example(['0', '0', '0'], '', 396, 64)   # the diagnostic line after the 400th line
def test_error_cut_keeps_the_diagnosis(before, diag, pad, n):
    "Errors: within budget, no broken characters; the diagnostic line survives whole whenever it and the first line fit"
    line = f'FAILED {diag}'.strip()
    s = 'Error: Exit code 1\n' + '\n'.join(before) + '\n' + 'x\n'*pad + line + '\n' + 'y\n'*pad
    out = error_result(s, n)
    assert toks(out) <= n and no_new_fffd(s, out)
    if toks(f'> Error: Exit code 1 … {line} …') <= n and toks(line) <= max(24, n//3): assert line in out, (n, out)

@scaled(60)
@given(any_texts, budgets)
def test_head_text_within_budget_keeps_the_head(s, n):
    "A document's cut call keeps the head: within budget, no broken characters, a prefix of the text and a closing mark"
    out = head_text(s, n, '! ')
    assert toks(out) <= n and no_new_fffd(s, out)
    if out and out != f'! {s}': assert out.endswith(' …') and s.startswith(out[2:-2]), (out[:100], s[:100])

@scaled(60)
@given(calls, budgets)
def test_doc_call_within_budget(p, n):
    "A document's call: within budget, or its head's (up to `head_cap`), no broken characters (a fence needs its least size)"
    if renders_as_fence(p.name, p.arguments) and n < fence_min(): return
    out = doc_call(p, n, '/w')
    assert toks(out) <= max(n, head_cap) and no_new_fffd(str(p.arguments), out), (toks(out), n, out[:200])

@scaled(60)
@given(st.one_of(any_texts, any_texts.map(lambda t: 'Error: ' + t), any_texts.map(lambda t: f'𝍁{t}𝍁')), budgets)
def test_doc_result_within_budget(t, n):
    "A document's result: within its budget (an error's larger one); a `𝍁` result whole only when it is within the target"
    out = doc_result(ToolResult(id='r1', text=t), n, 300)
    assert no_new_fffd(t, out)
    if kept_whole(t) and toks(t.strip()[1:-1].strip()) <= 300: return   # within the target: whole, as the spec keeps it
    assert toks(out) <= (err_toks(n) if is_error_result(t) else n), (toks(out), n, out[:200])

def test_a_whole_marked_result_too_big_keeps_the_request():
    "Issue 11, defect 7: a `𝍁` result bigger than the target is cut behind a mark naming it; the request and the turn stay"
    msgs = [mk_msg('Please look at the log'), Msg('assistant', [ToolUse(id='t1', name='Read', arguments={'file_path': '/w/log'})]),
            Msg('tool', [ToolResult(id='t1', name='Read', text='𝍁' + 'line of the log\n'*60_000 + '𝍁')]), mk_msg('Thanks', role='assistant')]
    for n in (600, 2_000, 8_000):
        d = continuation_doc(msgs, '/s.jsonl', max_toks=n, cwd='/w')
        doc, body = d.text, compact_body(d.text)
        assert toks(doc) <= n and body.startswith('§ Please look at the log §') and "▶ Read(file_path='log')" in body
        assert 'marked whole' in body and 'tool result t1' in body and d.stats['dropped_msgs'] == 0, body[:500]

@pytest.fixture
def tokenized(monkeypatch):
    "The lengths of the texts o200k encodes from here on, through any entry point (and all of it in this process)"
    import tiktoken
    from llmsurgery import par
    monkeypatch.setattr(par, 'par_min', 10**9)   # no forked helper: what it encoded would not be counted here
    seen = []
    def counting(f):
        def encode(self, text, *args, **kw):
            seen.append(sum(map(len, text)) if isinstance(text, list) else len(text))
            return f(self, text, *args, **kw)
        return encode
    names = ('encode', 'encode_ordinary', 'encode_batch', 'encode_ordinary_batch', 'encode_to_numpy',
             'encode_with_unstable')
    for name in names:
        monkeypatch.setattr(tiktoken.Encoding, name, counting(getattr(tiktoken.Encoding, name)))
    return seen

def test_a_huge_last_result_is_counted_once(tokenized):
    "Issue 11, defect 6: a fit's cost is bounded by its budget, not by a huge last result: it encodes what cuts reach"
    big = ' '.join(['alpha beta', 'x = 1', 'path/to/file.py', '12345\n'] * 600_000)   # about 24 million characters
    msgs = [mk_msg('Read the log'), Msg('assistant', [ToolUse(id='t1', name='Bash', arguments={'command': 'cat log'})]),
            Msg('tool', [ToolResult(id='t1', name='Bash', text=big)])]
    assert len(compact_doc(msgs, '/s.jsonl')) > len(big) and sum(tokenized) < 1_000   # the plain run: whole, uncounted
    for n in (2_000, 32_000):
        tokenized.clear()
        doc = compact_doc(msgs, '/s.jsonl', max_toks=n)
        cost = sum(tokenized)
        assert toks(doc) <= n and 0 < cost <= clip_threshold(n) < len(big), (n, cost, len(tokenized))

# ---------------------------------------------------------------- issue 11: a document's sections, and --since, cannot be fooled by content
from llmsurgery.document import since_start, covered_by, msg_fingerprint

section_bits = st.sampled_from(['\n\n## Notes\n\n', '\n\n## Skills\n\n', '\n\n## Transcript\n\n', '\n\n## Conversation\n\n',
    '\n\n## State\n\n', '## Notes\n', '\n\n', 'Skill texts were compacted away. Before relying on a skill, re-invoke it: Skill(x).',
    "▶ Skill(skill='x')", ' Notes for the continuation follow the conversation.', 'The complete, authoritative transcript is `/s.jsonl`.',
    ' This document covers it through message 2 (0123456789ab).'])
forging = st.lists(st.one_of(section_bits, chunks), max_size=12).map(''.join)

@scaled(100)
@given(forging, forging, forging, forging)
def test_sections_cannot_be_forged(chat, notes, user, asst):
    "compact_body gives back exactly the conversation, whatever headings the conversation, the notes or the state quote (defect 13)"
    state = render_state(state_facts([mk_msg(user), mk_msg(asst, role='assistant')]), Policy().budgets)
    doc = compact_content(chat, '/s.jsonl', notes, 'message 2 (0123456789ab)', state)
    assert compact_body(doc) == chat

generic = st.sampled_from([mk_msg('[Request interrupted by user for tool use]'), mk_msg('ok', role='assistant'), mk_msg('continue')])

@scaled(50)
@given(sessions(), sessions(), st.lists(generic, min_size=1, max_size=3))
def test_since_refuses_another_session(a, b, tail):
    "A document of one session never splices into another that ends alike: refused unless it holds the same messages at the same place (defect 2)"
    a,b = a+tail, b+tail+[mk_msg('more')]
    doc = compact_doc(a, '/x/a.jsonl')
    n,fp = covered_by(doc)
    if n <= len(b) and msg_fingerprint(b, n) == fp: return   # the same history at the same place: a fork, accepted
    with pytest.raises(ValueError, match='another session'): since_start(b, doc, '/y/b.jsonl')
