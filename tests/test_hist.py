"Property tests for `llmsurgery.hist`: `fmt2hist` reads back what `hist2fmt` wrote"
from hypothesis import given, settings, strategies as st
from aidialog.msg_parts import Msg, Text, Thinking, ToolUse, ToolResult, hist2fmt
from llmsurgery.hist import pair_tools, fmt2hist

chars = st.one_of(st.characters(codec='utf-8'), st.sampled_from('`\n {}"\\.é😀'))
anytext = st.text(chars, max_size=40)
# Prose may hold backticks anywhere but at the start of a line: a line opening a fence there would need closing
prose = anytext.map(str.strip).filter(lambda t: t and t!='.' and not any(l.startswith('```') for l in t.splitlines()))
names = st.sampled_from(['ls', 'Bash', 'mcp__clikernel__execute', 'ü`x'])
jval = st.one_of(st.none(), st.booleans(), st.integers(), anytext, st.lists(st.integers(), max_size=3))
args = st.dictionaries(anytext, jval, max_size=3)

calls = st.builds(lambda n,a: ToolUse(name=n, arguments=a), names, args)
server = st.builds(lambda n,a,t: ToolUse(name=n, arguments=a, server=True, text=t), names, args, anytext.filter(bool))
asst = st.lists(st.one_of(prose.map(Text), anytext.map(Thinking), calls, server), max_size=4).map(lambda ps: Msg('assistant', ps))
results = st.builds(lambda t,n: ToolResult(text=t, name=n), anytext, st.one_of(st.none(), names))
tool = st.lists(results, min_size=1, max_size=3).map(lambda ps: Msg('tool', ps))
convs = st.lists(st.one_of(asst, tool), max_size=6)

def expected(msgs):
    "Prose, and `(id, name, args, result, server)` per block, as `hist2fmt` writes them"
    texts,tools,todo = [],[],{}
    for m in msgs:
        for p in m.content:
            if isinstance(p, Text): texts.append(p.text)
            elif isinstance(p, ToolUse) and p.server and p.text: tools.append((p.id, p.name, p.arguments, p.text, True))
            elif isinstance(p, ToolUse): todo[p.id] = p
            elif isinstance(p, ToolResult):
                tu = todo.pop(p.id, None)
                tools.append((p.id, p.name, tu.arguments if tu else {}, p.text, False))
    return '\n\n'.join(texts), tools

def recovered(h):
    "The same from `fmt2hist`'s messages, leaving out the placeholder after a final result"
    if h[-1].content==[Text('.')]: h = h[:-1]
    calls = {p.id:p for m in h for p in m.content if isinstance(p, ToolUse)}
    texts,tools = [],[]
    for m in h:
        for p in m.content:
            if isinstance(p, Text): texts.append(p.text)
            elif isinstance(p, ToolUse) and p.server: tools.append((p.id, p.name, p.arguments, p.text, True))
            elif isinstance(p, ToolResult): tools.append((p.id, p.name, calls[p.id].arguments, p.text, False))
    return '\n\n'.join(texts), tools

@settings(max_examples=150, derandomize=True, deadline=None)
@given(convs)
def test_roundtrip(msgs):
    paired = pair_tools(msgs)
    r = hist2fmt(paired, mx=None)
    h = fmt2hist(r)
    assert recovered(h) == expected(paired)
    assert h[-1].role=='assistant' and h[0].role=='assistant'
    for a,t in zip(h, h[1:]):   # each tool message answers exactly the client calls of the assistant message before it
        if t.role=='tool': assert [p.id for p in a.content if isinstance(p, ToolUse) and not p.server] == [p.id for p in t.content]
    rr = hist2fmt(fmt2hist(r), mx=None)   # writing it again gives the same reply, plus the placeholder after a final result
    assert rr == r or rr == (r+'\n\n.' if r else '.')

@settings(max_examples=100, derandomize=True, deadline=None)
@given(convs)
def test_pair_tools(msgs):
    before = [[vars(p).copy() for p in m.content] for m in msgs]
    paired = pair_tools(msgs)
    assert [[vars(p) for p in m.content] for m in msgs] == before   # the input is left alone
    ids = [p.id for m in paired for p in m.content if isinstance(p, ToolUse)]
    assert None not in ids and len(set(ids))==len(ids)
    seen = set()
    for m in paired:
        for p in m.content:
            if isinstance(p, ToolUse): seen.add(p.id)
            elif isinstance(p, ToolResult): assert p.id and (p.id in seen or p.id not in ids)   # an earlier call's id, or a new one
    assert pair_tools(msgs) == paired

# Solveit's own forms: old-form prompts and the `<details>` tool blocks of its replies
import html, json
from hypothesis import assume
from llmsurgery.hist import reply_sep, split_prompt, unrepr, details_parts

@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.text(), st.text())
def test_split_prompt(q, r):
    assume(reply_sep not in q)
    assert split_prompt(q + reply_sep + r) == (q, r)
    assert split_prompt(q) == (q, None)

@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(), st.integers(0, 200), st.sampled_from(['<TRUNCATED>', '…']))
def test_unrepr(s, k, cut):
    assert unrepr(repr(s)) == s
    short = repr(s)[:k] + cut   # Solveit cut the repr short
    r = unrepr(short)
    assert r == short or (r.endswith(' …') and s.startswith(r[:-2])), (short, r)

names = st.from_regex(r'[A-Za-z_][A-Za-z0-9_]{0,10}', fullmatch=True)
jargs = st.dictionaries(st.text(max_size=8), st.one_of(st.text(max_size=20), st.integers(), st.booleans(),
                                                       st.lists(st.integers(), max_size=3)), max_size=3)

def solveit_block(form, id, name, args, result):
    "A `<details>` block's inside, written the way Solveit's generation `form` writes a call and its result"
    if form=='A': return f"\n\n `{name}({json.dumps(args)})`\n  - `{html.escape(repr(result))}`\n\n"
    d = dict(id=id, call=dict(function=name, arguments=args), result=repr(result))
    if form=='D': d = dict(id=id, server=False, call=d['call'], result=d['result'])
    summary = {'B': '', 'C': f'\n<summary>{name}(…)</summary>', 'D': f"\n<summary><code>{html.escape(name)}(…)</code></summary>"}[form]
    return f"{summary}\n\n```json\n{json.dumps(d, indent=2)}\n```\n\n"

@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.sampled_from('ABCD'), names, jargs, st.text())
def test_details_forms(form, name, args, result):
    id = None if form=='A' else 'toolu_01'   # the first form wrote no ids
    parts = details_parts(solveit_block(form, id, name, args, result))
    assert parts == [ToolUse(id=id, name=name, arguments=args), ToolResult(id=id, name=name, text=result)]

def test_details_other():
    "A `<details>` block that holds no tool call shows its text, never its tags or entities"
    assert details_parts('<summary>Why</summary>\n\n<p>Because <code>x &lt; y</code>.</p>') == [Text('Why\n\nBecause x < y.')]
    assert details_parts('<summary></summary>') == []
    assert fmt2hist("Before.\n<details><summary>Aside</summary>\n\n```json\n[1, 2]\n```\n</details>\nAfter.")[0].content == \
        [Text('Before.'), Text('Aside\n\n```json\n[1, 2]\n```'), Text('After.')]
