"A read shared with a forked helper (`sessions.helped_read`) is the read of every line here: same messages, numbers, notes and skipped lines, whatever the helper does"
import json, os, signal
from pathlib import Path
import pytest
from llmsurgery import sessions
from llmsurgery.sessions import helped_read, read_start, read_session, _read_from
from llmsurgery.claude import claude_host, cc_skips
from llmsurgery.par import can_fork
from doc_pins import real_dir, changed, pinned

pytestmark = pytest.mark.skipif(not can_fork(), reason='this process may not fork (not Linux, one core, or other threads)')

def seen(log):
    "What a read made of a file, all of it"
    return ([m.content for m in log], log.nums, log.aside, log.meta, log.cwd, log.dropped, log.agents, log.host_toks,
            log.summary, log.boundary, log.line)

def both(path, all=True, sidechains=False):
    "`(plain, helped)` reads of `path`"
    at,line = read_start(path, claude_host, all)
    return seen(_read_from(path, claude_host, at, line, all, sidechains)),seen(helped_read(path, claude_host, at, line, all, sidechains))

@pytest.fixture
def small_chunks(monkeypatch): monkeypatch.setattr(sessions, '_help_chunk', 4096)   # many chunks, runs across them

def hostile(tmp):
    "The real sessions one after another, with what a helper must not lose: a torn progress line mid-file, a sidechain's progress, a last line cut short"
    lines = [l for f in sorted(real_dir.glob('*.jsonl')) for l in f.read_bytes().splitlines(keepends=True)]
    prog = [i for i,l in enumerate(lines) if cc_skips(l)]
    assert len(prog) > 1000
    side = json.loads(lines[prog[500]]) | {'isSidechain': True, 'uuid': 'side-uuid', 'cwd': '/elsewhere'}
    lines[prog[100]] = lines[prog[100]][:-40] + b'\n'
    lines[prog[500]] = json.dumps(side, separators=(',', ':')).encode() + b'\n'
    (p := tmp/'hostile.jsonl').write_bytes(b''.join(lines) + lines[prog[-1]][:-25])
    return p

@pytest.mark.parametrize('name', sorted(f.name for f in real_dir.glob('*.jsonl')))
def test_real_sessions_read_the_same(name, small_chunks):
    for all_ in (False, True):
        for side in (False, True):
            plain,helped = both(real_dir/name, all_, side)
            assert helped == plain, (name, all_, side)

def test_torn_and_sidechain_lines_and_a_cut_last_line(tmp_path, small_chunks):
    plain,helped = both(hostile(tmp_path))
    assert helped == plain
    assert plain[5] == {'torn or malformed line(s)': 2} and plain[3]['leafUuid'] != 'side-uuid'

def test_the_helper_reads_in_the_child(tmp_path, monkeypatch, small_chunks):
    "The lines it leaves are sorted in another process: the skips are counted there, through a pipe of our own"
    r,w = os.pipe()
    me = os.getpid()
    def skips(ln):
        if os.getpid()!=me: os.write(w, b'.')
        return cc_skips(ln)
    monkeypatch.setattr(claude_host, 'skips', skips)
    p = hostile(tmp_path)
    plain,helped = both(p)
    os.close(w)
    with os.fdopen(r, 'rb') as f: n = len(f.read())
    assert helped == plain and n == p.read_bytes().count(b'\n') + 1

def test_a_line_that_holds_more_is_read_here(tmp_path, small_chunks):
    "A record naming its type twice looks like a progress line at its start: the helper says so, and every line is read here"
    lines = (real_dir/'tool_heavy.jsonl').read_bytes().splitlines(keepends=True)
    twice = b'{"type":"progress","data":{},"type":"user","message":{"role":"user","content":"the hidden prompt"}}\n'
    (p := tmp_path/'twice.jsonl').write_bytes(b''.join(lines[:5] + [twice] + lines[5:]))
    plain,helped = both(p)
    assert helped == plain and any('the hidden prompt' in str(c) for c in plain[0])

@pytest.mark.parametrize('when', [1, 3])
def test_a_helper_killed_midway_leaves_the_read_here(tmp_path, monkeypatch, small_chunks, when):
    me,calls = os.getpid(),[]
    notes = claude_host.notes
    def dies(*a, **kw):
        calls.append(1)
        if os.getpid()!=me and len(calls)>=when: os.kill(os.getpid(), signal.SIGKILL)
        return notes(*a, **kw)
    monkeypatch.setattr(claude_host, 'notes', dies)
    plain,helped = both(hostile(tmp_path))
    assert helped == plain
    with pytest.raises(ChildProcessError): os.waitpid(-1, os.WNOHANG)   # no child left behind

def test_what_is_appended_meanwhile_is_not_read(tmp_path, monkeypatch):
    "Both read up to the size the file had when they began: a host's appending then reaches neither"
    p = hostile(tmp_path)
    first = p.read_bytes()
    with open(p, 'ab') as f: f.write(b'\n' + (real_dir/'short.jsonl').read_bytes())
    real_size = os.path.getsize
    monkeypatch.setattr(os.path, 'getsize', lambda q: len(first) if Path(q)==p else real_size(q))
    helped = seen(helped_read(p, claude_host, 0, 1, True))
    (q := tmp_path/'first.jsonl').write_bytes(first)
    assert helped == seen(_read_from(q, claude_host, 0, 1, True))

def test_documents_read_with_a_helper_are_the_pinned_ones(monkeypatch):
    "Every pinned session, its reads helped however short: the same documents"
    monkeypatch.setattr(sessions, 'help_bytes', 0)
    monkeypatch.setattr(sessions, '_help_chunk', 1<<14)
    pins = pinned()
    for p in sorted(real_dir.glob('*.jsonl')): assert changed(p, pins) == [], p.name
