"""Gemini CLI's room without the client: the reader never fails on a log it cannot make sense of (Hypothesis), a
Gemini log is told from the other hosts' files by its content, and the store finds a directory's sessions through
`projects.json` and leaves out the strays a `--resume` leaves."""
import json, os
from pathlib import Path
from hypothesis import given, settings, strategies as st
from llmsurgery.hosts.base import host_named
from llmsurgery.hosts.gemini import gm_claim_slug, gm_projects, gm_ack
from llmsurgery.sessions import _claims
from llmsurgery.hosts.base import hosts
gemini = host_named("gemini")
read_gemini = gemini.read_lines
def record_fmt(r): return (_claims(r, hosts()) or [None])[0]
from llmsurgery.sessions import detect_format

GENUINE = Path(__file__).parent/'data'/'gemini'/'gemini_compressed.jsonl'

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))
values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=8), c, max_size=3)),
                      max_leaves=12)
keys = st.sampled_from(['id', 'type', 'content', 'toolCalls', 'thoughts', 'tokens', '$set', '$rewindTo', 'messages',
                        'functionCall', 'functionResponse', 'text', 'thought', 'result', 'args', 'name', 'sessionId'])
types = st.sampled_from(['user', 'gemini', 'info', 'error', 'warning', 'x'])
record = st.one_of(st.dictionaries(keys, values, max_size=5),
                   st.builds(lambda i, t, c: dict(id=i, type=t, content=c), st.sampled_from(['a', 'b', 'c']), types, values),
                   st.builds(lambda ms: {'$set': {'messages': ms}}, st.lists(st.dictionaries(keys, values, max_size=4), max_size=4)))

@settings(max_examples=300, deadline=None)
@given(st.lists(record, max_size=12), st.booleans())
def test_the_reader_never_fails(recs, whole):
    lines = [json.dumps(r) for r in recs] + ['{"torn']
    res = read_gemini(lines, whole=whole)
    assert res.bad_lines >= 1 and len(res.nums) == len(res)

def test_genuine_lines_read_after_junk():
    "Junk in between costs only itself: the genuine log still reads, its task and its compression"
    lines = GENUINE.read_bytes().splitlines()
    junk = [*lines[:5], b'{"id": 3, "type": []}', b'[1, 2]', *lines[5:]]
    a, b = read_gemini(lines, whole=True), read_gemini(junk, whole=True)
    assert [m.text for m in a] == [m.text for m in b] and b.bad_lines == 2 and a.summary == b.summary

def test_gemini_records_are_told_from_the_others():
    assert record_fmt({'sessionId': 'x', 'projectHash': 'y', 'startTime': 't', 'kind': 'main'}) == 'gemini'
    assert record_fmt({'id': 'x', 'timestamp': 't', 'type': 'user', 'content': [{'text': 'hi'}]}) == 'gemini'
    assert record_fmt({'$set': {'lastUpdated': 't'}}) == 'gemini'
    assert record_fmt({'type': 'user', 'message': {'role': 'user', 'content': 'hi'}, 'uuid': 'u', 'sessionId': 's'}) == 'claude'
    assert detect_format(GENUINE) == 'gemini'

def test_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv('GEMINI_CLI_HOME', str(tmp_path))
    work = tmp_path/'My Project'; work.mkdir()
    slug = gm_claim_slug(work, gemini.home())
    assert slug == 'my-project' and gm_projects(gemini.home()) == {str(work.resolve()): 'my-project'}
    chats = tmp_path/'.gemini'/'tmp'/slug/'chats'; chats.mkdir()
    sid = '0123abcd-0000-4000-8000-000000000000'
    meta = json.dumps(dict(sessionId=sid, projectHash='h', startTime='t', lastUpdated='t', kind='main'))
    (chats/'session-2026-01-01T10-00-0123abcd.jsonl').write_text(meta + '\n' + json.dumps(dict(
        id='u', timestamp='t', type='user', content=[dict(text='hi')])) + '\n')
    (chats/'session-2026-01-01T10-05-0123abcd.jsonl').write_text(meta + '\n{"$set":{"sessionId":"%s"}}\n' % sid)   # a stray
    found = gemini.session_files(work)
    assert [p.name for p in found] == ['session-2026-01-01T10-00-0123abcd.jsonl'] and gemini.session_id(found[0]) == sid
    assert gemini.session_files() == found and gemini.session_files(tmp_path) == []
    other = tmp_path/'elsewhere'/'my project'; other.mkdir(parents=True)
    assert gm_claim_slug(other, gemini.home()) == 'my-project-1' and gm_claim_slug(work, gemini.home()) == 'my-project'
