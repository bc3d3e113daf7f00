"Session readers on the bundled example files: what they keep, what they drop, and that they leave the input alone"
import hashlib, importlib.util, json, shutil, warnings
from collections import Counter
from pathlib import Path
import pytest
from aidialog.msg_parts import Text, Thinking, ToolUse, ToolResult, InputImage
from llmsurgery.sessions import read_session, detect_format, SessionWarning
from llmsurgery.hosts.base import host_named, hosts
read_claude = host_named('claude').read_lines

ex = Path(__file__).resolve().parent.parent/'examples'
spec = importlib.util.spec_from_file_location('make_examples', ex/'make_examples.py')
mkex = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mkex)

INJECTED = ('<environment_context>', '<system-reminder>', 'Caveat:', '<command-name>', '<local-command-stdout>',
            '<permissions instructions>', 'AGENTS.md instructions', '<INSTRUCTIONS>', ';base64,')
# The host's compaction summary is not in the list: it is the only trace of what came before the boundary, so it is kept

def strings(m):
    "Every string a message carries into the renderer: texts and tool arguments (media parts carry their data URL)"
    for p in m.content:
        if isinstance(p, InputImage): continue
        if p.text: yield p.text
        if isinstance(p, ToolUse): yield json.dumps(p.arguments, ensure_ascii=False)

def assert_clean(msgs):
    for m in msgs:
        for s in strings(m):
            bad = [o for o in INJECTED if o in s]
            assert not bad, (bad, m)

def read(name, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', SessionWarning)
        return read_session(ex/name, **kw)

def paired(msgs):
    "Ids of calls and of results"
    calls = {p.id for m in msgs for p in m.content if isinstance(p, ToolUse)}
    res = {p.id for m in msgs for p in m.content if isinstance(p, ToolResult)}
    return calls, res

def test_examples_match_generator():
    "The bundled files are exactly what the seeded generator writes"
    assert (ex/'claude_short.jsonl').read_text() == '\n'.join(mkex.claude_short())
    assert (ex/'codex_short.jsonl').read_text() == '\n'.join(mkex.codex_short()) + '\n'
    with open(ex/'claude_long.jsonl') as f: assert all(a == b+'\n' for a,b in zip(f, mkex.synth_claude(3000), strict=True))

def test_claude_short():
    s = read('claude_short.jsonl')
    assert (s.fmt, s.bad_lines) == ('claude', 1)
    assert Counter(m.role for m in s.msgs) == dict(user=5, assistant=7, tool=6)
    assert_clean(s.msgs)
    users = [m.text for m in s.msgs if m.role=='user']
    assert users[0] == s.summary and s.summary.startswith('This session is being continued')   # the host's summary opens the rest
    users = users[1:]
    assert users[0] == 'Fix the reader, then show me the failing test output.'
    assert users[1].startswith('Base directory for this skill:')               # kept, for the renderer's skill marker
    assert users[-1] == 'that failure is the old fixture; ignore it and finish up'
    assert s.msgs[-1].role == 'assistant' and s.msgs[-1].text.startswith('Done: `read_rows` now returns every row.')
    assert not any('No response requested' in m.text for m in s.msgs)       # the host's synthetic reply
    assert s.summary.startswith('This session is being continued')
    calls, res = paired(s.msgs)
    assert calls == res and len(calls) == 6
    first = s.msgs[2].content                                               # three records of one API message, joined
    assert [type(p) for p in first] == [Thinking, Text, ToolUse]
    assert isinstance(s.msgs[1].content[1], InputImage)
    assert not any(p.text.startswith('Only `read_rows` and') for m in s.msgs for p in m.content if p.text)  # the sub-agent's own reply
    results = {p.name: p.text for m in s.msgs if m.role=='tool' for p in m.content}
    assert results['Bash'].startswith('Error: Exit code 1') and results['Bash'].endswith('<media input_image image/png>')
    assert results['Read'].startswith('     1\t"""Reader')

def test_claude_short_all_and_sidechains():
    s, a, sc = read('claude_short.jsonl'), read('claude_short.jsonl', whole=True), read('claude_short.jsonl', sidechains=True)
    assert [m.text for m in a.msgs[:2]] == ['The reader drops the last row of every file. Where does that happen?',
                                            'In `read_rows`: the loop runs to `n-1`. I can fix it once you confirm.']
    assert a.msgs[2:] == s.msgs[1:]                                       # the history itself, instead of its summary
    assert_clean(a.msgs)
    assert len(sc.msgs) == len(s.msgs) + 2
    assert any(m.text == 'Only `read_rows` and `sniff_header` do.' for m in sc.msgs)

def test_codex_short():
    s = read('codex_short.jsonl')
    assert (s.fmt, s.bad_lines) == ('codex', 0)
    assert Counter(m.role for m in s.msgs) == dict(user=2, assistant=6, tool=5)
    assert_clean(s.msgs)
    assert s.msgs[0].text == s.summary                                      # the host's summary opens what follows
    assert s.msgs[1].text == 'Fix it and run the date tests.'
    assert s.msgs[-1].text.startswith('`parse_date` now takes the format')
    assert s.summary.startswith('The user reported that --day-first is ignored')
    calls, res = paired(s.msgs)
    assert calls == res and len(calls) == 5
    tools = [p for m in s.msgs for p in m.content if isinstance(p, ToolUse)]
    assert [t.name for t in tools] == ['Bash', 'apply_patch', 'Bash', 'update_plan', 'Bash']
    assert tools[0].arguments == {'command': 'sed -n 1,80p csvtidy/dates.py'}
    assert tools[2].arguments == {'command': 'pytest -q tests/test_dates.py'}   # the local_shell_call
    out = [p for m in s.msgs for p in m.content if isinstance(p, ToolResult)]
    assert out[1].text == 'Success. Updated the following files:\nM csvtidy/dates.py\n'
    assert out[2].text.startswith('Exit code: 1\n')

def test_codex_short_all():
    a = read('codex_short.jsonl', whole=True)
    assert [m.text for m in a.msgs if m.role=='user'] == ['Dates like 03/04/2024 come out as March 4th even with --day-first. Find where.',
                                                         'Fix it and run the date tests.']
    assert_clean(a.msgs)

def test_claude_long():
    s = read('claude_long.jsonl')
    assert (s.fmt, s.bad_lines, len(s.msgs)) == ('claude', 0, 3000)
    roles = Counter(m.role for m in s.msgs)
    assert roles['user'] > 300 and roles['tool'] > 1000
    assert_clean(s.msgs)
    calls, res = paired(s.msgs)
    assert calls == res
    assert max(len(p.text) for m in s.msgs if m.role=='tool' for p in m.content) > 20_000
    assert s.msgs[-1].role == 'assistant' and s.msgs[-1].text

def test_input_unchanged(tmp_path):
    for name in ('claude_short.jsonl', 'codex_short.jsonl'):
        f = shutil.copy2(ex/name, tmp_path/name)
        before = (hashlib.sha256(Path(f).read_bytes()).hexdigest(), Path(f).stat().st_mtime_ns, Path(f).stat().st_size)
        read_session(f, whole=True, warn=False)
        after = (hashlib.sha256(Path(f).read_bytes()).hexdigest(), Path(f).stat().st_mtime_ns, Path(f).stat().st_size)
        assert before == after
    assert sorted(o.name for o in tmp_path.iterdir()) == ['claude_short.jsonl', 'codex_short.jsonl']

def test_torn_line_warns_once(tmp_path):
    f = tmp_path/'s.jsonl'
    lines = (ex/'claude_short.jsonl').read_text().split('\n')
    f.write_text('\n'.join(lines[:5] + ['{"type":"user","mess'] + lines[5:]))    # a second torn line, mid-file
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        s = read_session(f, whole=True)
    assert [str(w.message).endswith('skipped 2 torn or malformed line(s)') for w in ws] == [True]
    assert s.bad_lines == 2 and s.msgs == read('claude_short.jsonl', whole=True).msgs
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter('always')
        assert read_session(f, whole=True, warn=False).bad_lines == 2
        s = read_session(f, warn=False)   # by default the history before the last compaction (and its torn line) is not read
    assert not ws
    assert s.bad_lines == 1 and s.msgs == read('claude_short.jsonl').msgs

def test_detect_by_content(tmp_path):
    shutil.copy(ex/'claude_short.jsonl', tmp_path/'session.txt')
    shutil.copy(ex/'codex_short.jsonl', tmp_path/'rollout.jsonl')
    shutil.copy(ex/'codex_short.jsonl', tmp_path/'rollout.ipynb')
    assert [detect_format(tmp_path/n) for n in ('session.txt', 'rollout.jsonl', 'rollout.ipynb')] == ['claude', 'codex', 'codex']
    (tmp_path/'empty.jsonl').write_text('')
    (tmp_path/'nb.jsonl').write_text('{\n "cells": [],\n "metadata": {},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n')
    assert detect_format(tmp_path/'nb.jsonl') == 'ipynb'
    assert read_session(tmp_path/'nb.jsonl').dlg.messages == []
    (tmp_path/'bad.ipynb').write_text('{\n "cells": 5\n}\n')
    with pytest.raises(ValueError, match='not a readable aidialog notebook'): read_session(tmp_path/'bad.ipynb')
    with pytest.raises(ValueError, match='known formats'): read_session(tmp_path/'empty.jsonl')
    with pytest.raises(OSError): read_session(tmp_path/'nope.jsonl')
    with pytest.raises(OSError): read_session(tmp_path)

def test_lone_surrogates(tmp_path):
    f = tmp_path/'s.jsonl'
    rec = dict(type='user', sessionId='s', message=dict(role='user', content='cut emoji: \ud83d and a whole one: \U0001F600'))
    f.write_text(json.dumps(rec) + '\n')                                     # ensure_ascii: the lone half is a \ud83d escape
    s = read_session(f)
    assert s.msgs[0].text == 'cut emoji: \ufffd and a whole one: \U0001F600'
    s.msgs[0].text.encode('utf-8')

def test_invalid_utf8(tmp_path):
    f = tmp_path/'s.jsonl'
    f.write_bytes(b'{"type":"user","sessionId":"s","message":{"role":"user","content":"caf\xe9 latin-1"}}\n')
    assert read_session(f).msgs[0].text == 'caf\ufffd latin-1'

def test_10k_session_reads_completely():
    msgs = read_claude(mkex.synth_claude(10_000, seed=3, big=False))
    assert (len(msgs), msgs.bad_lines) == (10_000, 0)
    calls, res = paired(msgs)
    assert calls == res
    assert msgs[-1].role == 'assistant'

from hypothesis import given, strategies as st  # example counts come from the profile in conftest.py

_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(['type', 'text', 'content', 'id', 'name', 'input']), c, max_size=3),
                     max_leaves=12)
_block = st.fixed_dictionaries({'type': st.sampled_from(['text', 'thinking', 'tool_use', 'tool_result', 'image', 'input_text', 'output_text'])},
                               optional={'text': _json, 'thinking': _json, 'id': _json, 'name': _json, 'input': _json, 'content': _json,
                                         'tool_use_id': _json, 'is_error': _json, 'source': _json})
_content = st.lists(_block, min_size=1, max_size=4) | st.lists(_block | _json, max_size=3) | st.text(max_size=30) | _json
_cc_rec = st.fixed_dictionaries({'type': st.sampled_from(['user', 'assistant', 'system', 'summary'])},
                                optional={'message': st.fixed_dictionaries({'content': _content}, optional={'id': _json, 'model': _json}) | _json,
                                          'isMeta': _json, 'isSidechain': _json, 'subtype': st.sampled_from(['compact_boundary', 'x'])})
_cx_payload = st.fixed_dictionaries({'type': st.sampled_from(['message', 'function_call', 'function_call_output', 'custom_tool_call',
                                                              'custom_tool_call_output', 'local_shell_call', 'web_search_call', 'reasoning'])},
                                    optional={'role': st.sampled_from(['user', 'assistant', 'developer']), 'content': _content, 'call_id': _json,
                                              'name': _json, 'arguments': _json, 'output': _json, 'input': _json, 'action': _json})
_cx_rec = st.fixed_dictionaries({'type': st.sampled_from(['response_item', 'compacted', 'event_msg'])}, optional={'payload': _cx_payload | _json})

def _well_formed(msgs):
    for m in msgs:
        assert m.role in ('user', 'assistant', 'tool') and m.content
        for p in m.content: assert p.text is None or isinstance(p.text, str), p

@given(st.lists(_cc_rec.map(json.dumps) | st.text(max_size=30), max_size=8))
def test_claude_reader_never_raises(lines):
    msgs = read_claude(lines)
    _well_formed(msgs)
    assert msgs.bad_lines <= len(lines)

@given(st.lists(_cx_rec.map(json.dumps) | st.text(max_size=30), max_size=8))
def test_codex_reader_never_raises(lines):
    read_codex = host_named('codex').read_lines
    msgs = read_codex(lines)
    _well_formed(msgs)
    assert msgs.bad_lines <= len(lines)

@given(st.lists(_cc_rec.map(json.dumps) | _cx_rec.map(json.dumps) | _json.map(json.dumps) | st.text(max_size=30), max_size=5))
def test_detect_format_is_a_format_or_valueerror(lines):
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        f = Path(d)/'x'
        f.write_text('\n'.join(lines), encoding='utf-8', errors='surrogatepass')
        try: assert detect_format(f) in ('claude', 'codex', 'ipynb')
        except ValueError as e: assert 'known formats' in str(e)

# ---------------------------------------------------------------- issue 18: what holds for the whole session, on real and genuine files

GENUINE = Path(__file__).resolve().parent/'data'/'genuine'
REAL = Path(__file__).resolve().parent/'data'/'claude-real'   # real Claude Code sessions, in the repository
BIG = '258c7280-ae70-4798-800f-63464d01a85d'   # a host compaction mid-session, and a Claude Code 2.1 sub-agent in its own file

def real(name): return REAL/name

def quiet(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', SessionWarning)
        return read_session(path, **kw)

def results(msgs): return [p for m in msgs if m.role=='tool' for p in m.content]

def test_a_slash_command_with_arguments_is_the_request():
    "The real session that opens with `/handgemacht:create-beads …`: the command is the user's first message and the task"
    s = quiet(real('subagent.jsonl'))
    first = s.msgs[0]
    assert first.role == 'user' and first.text.startswith('/handgemacht:create-beads websearch to learn how to fastest setup credo')
    assert first.text.endswith('Maybe there are igniter scripts?') and s.task == first.text
    assert not any('This skill ONLY creates beads' in m.text for m in s.msgs)   # the expansion the host wrote (isMeta) stays out

def test_genuine_custom_command():
    "A custom command run by Claude Code 2.1.328 itself: the request is kept, its expansion (the command file's text) is not"
    f = GENUINE/'claude_command.jsonl'
    assert '<command-args>the parser drops the last row</command-args>' in f.read_text()   # what the host wrote
    s = read_session(f)
    assert [m.text for m in s.msgs if m.role=='user'] == ['/triage the parser drops the last row', 'Which cause first?']
    assert s.task == '/triage the parser drops the last row' and [m.role for m in s.msgs] == ['user', 'assistant']*2
    assert not any('List the likely causes first' in m.text for m in s.msgs)

@pytest.mark.parametrize('name', [BIG, '8463c716-a2ea-4c14-9efa-87158ebd9f20'])
def test_task_and_directory_are_the_sessions_own(name):
    "After a host compaction the default read starts past the first request and the directory the session began in; both still hold"
    p = real(f'{name}.jsonl')
    s, a = quiet(p), quiet(p, whole=True)
    began = next(json.loads(l)['cwd'] for l in p.open() if '"cwd"' in l)
    assert s.cwd == a.cwd == began and not began.endswith('/assets')
    assert s.task == a.task == a.msgs[0].text and s.task not in [m.text for m in s.msgs]   # from before the boundary
    assert s.msgs[0].text == s.summary

def test_codex_task_and_directory_come_from_before_the_boundary(tmp_path):
    "The genuine Codex rollout after a compaction that moved to another directory: its `session_meta` still says where it began"
    lines = (GENUINE/'codex_exec.jsonl').read_text().splitlines()
    meta = json.loads(lines[0])['payload']
    moved = [json.dumps(dict(timestamp=meta['timestamp'], type='compacted', payload=dict(message='Listed the files.', replacement_history=[]))),
             json.dumps(dict(timestamp=meta['timestamp'], type='turn_context', payload=dict(cwd='/elsewhere')))]
    f = tmp_path/'rollout.jsonl'; f.write_text('\n'.join(lines + moved) + '\n')
    s = read_session(f)
    assert (s.cwd, s.task, s.msgs[0].text) == (meta['cwd'], 'What files are here?', 'Listed the files.')
    assert s.meta['id'] == meta['id']

def test_host_trailers_are_stripped():
    "Claude Code's `<usage>` after a sub-agent's result and WebSearch's reminder to cite say nothing to a continuing model"
    rs = [p for n in ('subagent.jsonl', 'tool_heavy.jsonl', f'{BIG}.jsonl', '8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl')
          for p in results(quiet(real(n), whole=True).msgs)]
    tasks, searches = [p for p in rs if p.name=='Task'], [p for p in rs if p.name=='WebSearch']
    assert len(tasks) >= 3 and len(searches) >= 6
    assert all(p.text.rstrip().endswith("(for resuming to continue this agent's work if needed)") for p in tasks)   # the agent id stays
    assert not [p for p in rs if p.text.rstrip().endswith(('</usage>', 'sources above in your response to the user using markdown hyperlinks.'))]
    assert any('REMINDER: You MUST include the sources' in p.text for p in rs if p.name=='Read')   # a file quoting one keeps it
    assert all(p.text.strip() for p in searches)

def test_codex_exec_header_is_stripped():
    "Codex 0.169 writes `Chunk ID`, `Wall time`, `Process exited with code 0`, `Original token count`, `Output:` before the output"
    r, = results(read_session(GENUINE/'codex_exec.jsonl').msgs)
    assert 'Chunk ID:' in (GENUINE/'codex_exec.jsonl').read_text() and r.text == 'notes.txt\n'

def test_sidechains_read_the_subagents_folder():
    "Claude Code 2.1 logs a sub-agent in `<session>/subagents/agent-<id>.jsonl`: --sidechains puts it where its Task call ran"
    p = real(f'{BIG}.jsonl')
    s, sc = quiet(p), quiet(p, sidechains=True)
    sub = quiet(p.with_suffix('')/'subagents'/'agent-a881341.jsonl')
    assert len(sub.msgs) >= 4 and sub.task == sub.msgs[0].text and sub.cwd == s.cwd   # read directly: a session of its own
    i = sc.msgs.index(sub.msgs[0])
    assert sc.msgs[i:i+len(sub.msgs)] == sub.msgs and len(sc.msgs) == len(s.msgs) + len(sub.msgs)
    call = next(q for q in sc.msgs[i-1].content if isinstance(q, ToolUse) and q.name=='Task')
    assert [q.id for q in sc.msgs[i+len(sub.msgs)].content] == [call.id]   # then the result that ended it
    assert not any(m.text.startswith('Your task is to create a detailed summary') for m in sc.msgs)   # the host's compaction call is no sub-agent

def test_all_counts_the_largest_context_held():
    "Read whole, the host's count is the largest context it sent, not the pre- and post-compaction counts added up"
    p = real(f'{BIG}.jsonl')
    counts = []
    for r in map(json.loads, p.open()):
        u = (r.get('message') or {}).get('usage') if r.get('type')=='assistant' and not r.get('isSidechain') else None
        if isinstance(u, dict) and r['message'].get('model')!='<synthetic>':
            counts.append(sum(u.get(k) or 0 for k in ('input_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens')))
    a, s = quiet(p, whole=True), quiet(p)
    assert a.host_toks == max(counts) < 299_742 and s.host_toks == counts[-1]

def test_list_columns_line_up_for_every_host():
    "`--list` rows of every registered host, `opencode` the longest name, start their id in the header's id column"
    from types import SimpleNamespace
    from llmsurgery.discover import session_table
    host_registry = [h.name for h in hosts()]
    infos = [SimpleNamespace(host=h, sid=f'{h[:2]}-id', activity=0, size=1, messages=1, first_prompt='hi') for h in host_registry]
    head, *rows = session_table(infos).splitlines()
    assert 'opencode' in host_registry and len(rows) == len(host_registry)
    assert {r.index(f'{h[:2]}-id') for r,h in zip(rows, host_registry)} == {head.index('id')}
