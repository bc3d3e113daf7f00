"""Issue 27: what the SessionStart(compact) hook adds after the host's own compaction, for every input.

The addition (the state, then a document of what a summary loses) stays within the host's cap in the host's own unit
(Claude Code: characters, UTF-16 code units; Codex: UTF-8 bytes), is valid text (never a torn character), and never
fails; on the real sessions it holds the commands, the errors and every typed prompt a summary drops, quickly."""
import copy, json, time, uuid
from pathlib import Path
import pytest
from hypothesis import given, settings, strategies as st
from llmsurgery.hosts.base import host_named
from llmsurgery.hookstate import compacted_state, lost_doc, UnitEnc
claude_host,codex_host = host_named("claude"),host_named("codex")
cc_context_len,cx_context_len = claude_host.context_len,codex_host.context_len

root = Path(__file__).resolve().parent
real = root/'data'/'claude-real'

# ---------------------------------------------------------------- strategies: a Claude Code session file

pieces = st.one_of(st.sampled_from(['a', 'word ', '\n', '\n\n', 'é', '家族', '👩\u200d👩\u200d👧', '𝍁', '\U0001f600', '¶', '§', '»',
                                    '…', '***', '```', '> ', '! ', 'Error: Exit code 1\n', 'error: boom\n', '\r\n', '\x00']),
                   st.text(max_size=8))
def texts(n): return st.lists(pieces, max_size=n).map(''.join)
long_texts = st.one_of(texts(40), st.builds(lambda s, k: s*k, texts(6), st.integers(50, 3000)))

def _rec(typ, content, parent, cwd='/w'):
    u = str(uuid.uuid4())
    return dict(parentUuid=parent, isSidechain=False, type=typ, cwd=cwd, sessionId='s1', uuid=u,
                timestamp='2026-01-01T00:00:00.000Z', message=dict(role=typ, content=content))

@st.composite
def sessions(draw):
    "Records of a Claude Code session: prompts, Bash and Read calls with results (some errors), assistant words"
    recs,parent = [],None
    def add(typ, content):
        nonlocal parent
        recs.append(_rec(typ, content, parent))
        parent = recs[-1]['uuid']
    for i in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(['prompt', 'bash', 'read', 'words']))
        if kind=='prompt': add('user', draw(long_texts) or 'go')
        elif kind=='words': add('assistant', [dict(type='text', text=draw(long_texts) or 'ok')])
        else:
            tid = f'toolu_{i}'
            inp = dict(command=draw(long_texts)) if kind=='bash' else dict(file_path='/w/'+draw(texts(6)))
            add('assistant', [dict(type='tool_use', id=tid, name='Bash' if kind=='bash' else 'Read', input=inp)])
            add('user', [dict(type='tool_result', tool_use_id=tid, content=draw(long_texts), is_error=draw(st.booleans()))])
    return recs

def write(recs, path):
    path.write_text(''.join(json.dumps(r, ensure_ascii=False)+'\n' for r in recs), encoding='utf-8')
    return path

def host_like(cap, size):
    "Claude Code as the reader, with cap `cap` counted by `size` (Codex's bytes, or Claude Code's own units)"
    h = copy.copy(claude_host)
    h.context_cap,h.context_len = cap,size
    return h

caps = st.one_of(st.sampled_from([10_000, 3_000]), st.integers(0, 2_500))

@settings(max_examples=150)
@given(sessions(), caps, st.sampled_from([cc_context_len, cx_context_len]))
def test_hook_addition_within_the_cap(tmp_path_factory, recs, cap, size):
    "What the hook adds is within the host's cap in its unit, valid UTF-8, and never an exception"
    p = write(recs, tmp_path_factory.mktemp('s')/'s1.jsonl')
    text = compacted_state(p, host_like(cap, size))
    assert size(text) <= cap, (size(text), cap)
    text.encode('utf-8')   # strict: no lone surrogate, no half of a pair

@given(long_texts, st.integers(0, 400))
def test_unit_enc_counts_as_the_host(s, k):
    "`UnitEnc` counts what each host counts; a head of its units decodes to whole characters only"
    for size in (cc_context_len, cx_context_len):
        e = UnitEnc(size)
        t = e.encode_ordinary(s)
        assert len(t) == size(s)
        head = e.decode_bytes(t[:k]).decode('utf-8', 'ignore')
        assert s.startswith(head) and size(head) <= k

def test_codex_unit_is_bytes():
    assert (codex_host.context_cap, codex_host.context_len('é𝍁')) == (10_000, 6)
    assert (claude_host.context_cap, claude_host.context_len('é𝍁')) == (10_000, 3)

# ---------------------------------------------------------------- the real sessions

def cases():
    "`(name, lines before the host's compaction, its summary)` of each real session that holds one"
    res = []
    for fn in sorted(real.glob('*.jsonl')):
        lines = fn.read_text(encoding='utf-8').splitlines(keepends=True)
        at = [i for i,l in enumerate(lines) if '"compact_boundary"' in l]
        if at: res.append((fn.name, lines[:at[0]], next(json.loads(l) for l in lines[at[0]:] if '"isCompactSummary":true' in l)))
    return res

def test_real_sessions_hold_a_host_compaction():
    assert len(cases()) >= 2

@pytest.mark.parametrize('name', [c[0] for c in cases()])
def test_real_addition_keeps_what_the_summary_loses(name, tmp_path):
    "On a real session, before the host's compaction: within the cap, every typed prompt, the commands and errors"
    _,lines,summ = next(c for c in cases() if c[0]==name)
    p = tmp_path/name
    p.write_text(''.join(lines), encoding='utf-8')
    t = time.perf_counter()
    text = compacted_state(p, claude_host)
    took = time.perf_counter()-t
    assert claude_host.context_len(text) <= claude_host.context_cap
    recs = [json.loads(l) for l in lines if l.strip()]
    calls = [b for r in recs if r.get('type')=='assistant' for b in r['message'].get('content') or []
             if isinstance(b, dict) and b.get('type')=='tool_use']
    cmds = {c['input']['command'].splitlines()[0] for c in calls if c['name']=='Bash' and c['input'].get('command', '').strip()}
    held = [c for c in cmds if c[:60] in text]
    assert len(held) >= 0.7*len(cmds), (len(held), len(cmds))
    assert '> Error: ' in text and '*** #' in text and 'Earlier conversation' not in text
    assert took < 5   # generous: the bench measures it (well under 0.5 s on these files); this only catches a blow-up

@pytest.mark.parametrize('name', [c[0] for c in cases()])
def test_real_whole_file_addition_is_quick(name):
    "On the real 3 MB file, as the hook reads it (from its last compaction on): within the cap"
    text = compacted_state(real/name, claude_host)
    assert 0 < claude_host.context_len(text) <= claude_host.context_cap

# ---------------------------------------------------------------- lost_doc alone, with what a host kept

from aidialog.msg_parts import Msg, Text, ToolUse, ToolResult

@st.composite
def parts(draw):
    "A part just compacted, as messages, and the text a host kept word for word (some of its prompts)"
    msgs,kept = [],[]
    for i in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(['prompt', 'call', 'words']))
        if kind=='prompt':
            msgs.append(Msg('user', [Text(t := draw(long_texts) or 'go')]))
            if draw(st.booleans()): kept.append(t)
        elif kind=='words': msgs.append(Msg('assistant', [Text(draw(long_texts) or 'ok')]))
        else:
            name = draw(st.sampled_from(['Bash', 'Read', 'Edit', 'TodoWrite', 'Grep']))
            msgs += [Msg('assistant', [ToolUse(id=f't{i}', name=name, arguments=dict(command=draw(long_texts)))]),
                     Msg('tool', [ToolResult(id=f't{i}', name=name, text=draw(long_texts))])]
    return msgs, '\n'.join(kept)

@settings(max_examples=150)
@given(parts(), st.integers(0, 10_000), st.sampled_from([cc_context_len, cx_context_len]))
def test_lost_doc_within_its_room(part, room, size):
    "The document of what a summary loses is within its room by the host's count, or None; never a torn character"
    msgs, kept = part
    doc = lost_doc(msgs, room, size, '/w', kept)
    if doc is None: return
    assert size(doc) <= room
    doc.encode('utf-8')

# ---------------------------------------------------------------- how Claude Code counts its cap (the real client)

from hostkit import AnthropicMock, one_turn, run_claude, text, summary, compact_claude, write_recorder, hook_group, claude_hooks

@pytest.mark.parametrize('n,whole', [(5_000, True), (5_001, False)])
def test_claude_counts_utf16_units(hosts, tmp_path, n, whole):
    """Claude Code counts its 10,000-character cap on a hook's additionalContext in UTF-16 code units: 5,000 `𝍁` (one
    character beyond U+FFFF each, two units) go in whole, 5,001 are replaced by a preview; `cc_context_len` counts so"""
    cl, home, cwd = hosts[0], tmp_path/'home', tmp_path/'work'
    cwd.mkdir()
    src = one_turn('claude', cl, home, cwd, 'first question', 'first answer')
    ctx = '𝍁'*n
    claude_hooks(home, SessionStart=[hook_group(write_recorder(tmp_path, 'start', context=ctx), matcher='compact')])
    with AnthropicMock([summary('HOST-SUMMARY')]) as s: assert compact_claude(cl, home, cwd, src.stem, s)[0] == 0
    with AnthropicMock([text('after')]) as s: assert run_claude(cl, home, cwd, 'NEXT', s, '--resume', src.stem)[0] == 0
    system = json.dumps([m['content'] for m in s.model_requests()[0]['body']['messages'] if m['role'] == 'system'],
                        ensure_ascii=False)
    assert (ctx in system, 'persisted-output' in system) == (whole, not whole)
    assert (cc_context_len(ctx) <= claude_host.context_cap) == whole
