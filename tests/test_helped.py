"A read shared with a forked helper (`sessions.helped_read`) is the read of every line here: same messages, numbers, notes and skipped lines, whatever the helper does"
import errno, json, os, signal
from array import array
from pathlib import Path
import pytest
from llmsurgery.hosts import base as sessions
from llmsurgery.sessions import read_session
from llmsurgery.hosts.base import helped_read, log_start as read_start, ReadAgain, read_from as _read_from, _runs, _blanked, host_named
from llmsurgery.hosts.claude import cc_skips
claude_host = host_named("claude")
from llmsurgery.par import can_fork
from doc_pins import real_dir, changed, pinned

pytestmark = pytest.mark.skipif(not can_fork(), reason='this process may not fork (not Linux, one core, or other threads)')

def seen(log):
    "What a read made of a file, all of it"
    return ([m.content for m in log], log.nums, log.aside, log.meta, log.cwd, list(log.dropped.items()), log.agents,
            log.host_toks, log.summary, log.boundary, log.line)

plain_read = _read_from

def both(path, all=True, sidechains=False):
    "`(plain, helped)` reads of `path`"
    at,line = read_start(path, claude_host, all)
    return seen(plain_read(path, claude_host, at, line, all, sidechains)),seen(helped_read(path, claude_host, at, line, all, sidechains))

@pytest.fixture
def small_chunks(monkeypatch): monkeypatch.setattr(sessions, '_help_chunk', 4096)   # many chunks, runs across them

@pytest.fixture
def read_again(monkeypatch):
    "How many times a helped read fell back to reading every line here"
    n = []
    monkeypatch.setattr(sessions, 'read_from', lambda *a, **kw: n.append(1) or plain_read(*a, **kw))
    return n

def hostile(tmp):
    "The real sessions one after another, with what a helper must not lose: a sidechain's progress first and last (not the chain's notes), a torn progress line, one ending in CRLF, blank lines among them, a last line cut short"
    lines = [l for f in sorted(real_dir.glob('*.jsonl')) for l in f.read_bytes().splitlines(keepends=True)]
    prog = [i for i,l in enumerate(lines) if cc_skips(l)]
    assert len(prog) > 1000
    side = json.dumps(json.loads(lines[prog[500]]) | {'isSidechain': True, 'uuid': 'side-uuid', 'cwd': '/elsewhere', 'version': '9.9'},
                      separators=(',', ':')).encode() + b'\n'
    lines[prog[100]] = lines[prog[100]][:-40] + b'\n'
    lines[prog[200]] = lines[prog[200]][:-1] + b'\r\n'
    lines[prog[300]:prog[300]] = [b'\n', b'  \n']
    (p := tmp/'hostile.jsonl').write_bytes(side + b''.join(lines) + side + lines[prog[-1]][:-25])
    assert cc_skips(side) and cc_skips(lines[prog[200]+2])
    return p

@pytest.mark.parametrize('name', sorted(f.name for f in real_dir.glob('*.jsonl')))
def test_real_sessions_read_the_same(name, small_chunks, read_again):
    for all_ in (False, True):
        for side in (False, True):
            plain,helped = both(real_dir/name, all_, side)
            assert helped == plain, (name, all_, side)
    assert not read_again   # the helper's read, not the fallback

def test_torn_crlf_blank_and_sidechain_lines_and_a_cut_last_line(tmp_path, small_chunks, read_again):
    plain,helped = both(hostile(tmp_path))
    assert helped == plain and not read_again
    assert plain[5] == [('torn or malformed line(s)', 2)] and plain[3]['leafUuid'] != 'side-uuid'
    assert plain[3]['version'] != '9.9' and plain[4] != '/elsewhere'

def test_the_helper_reads_in_the_child(tmp_path, monkeypatch, small_chunks):
    "The lines are sorted in another process: each is counted there, into a file of our own"
    tally,me = tmp_path/'tally',os.getpid()
    def skips(ln):
        if os.getpid()!=me:
            with open(tally, 'ab') as f: f.write(b'.')
        return cc_skips(ln)
    monkeypatch.setattr(claude_host, 'skips', skips)
    p = hostile(tmp_path)
    plain,helped = both(p)
    assert helped == plain and tally.read_bytes().count(b'.') == p.read_bytes().count(b'\n') + 1

def test_a_progress_bar_sees_every_byte(tmp_path, small_chunks):
    "A progress wrapper is given the bytes of the lines the helper took too: the bar moves with the file, and ends at its end"
    p,seen_ = hostile(tmp_path),[]
    def progress(lines):
        for l in lines:
            seen_.append(len(l))
            yield l
    at,line = read_start(p, claude_host, False)
    helped_read(p, claude_host, at, line, False, progress=progress)
    assert sum(seen_) == p.stat().st_size - at and len(seen_) < p.read_bytes().count(b'\n')   # the left lines as a few items

def test_a_line_that_holds_more_is_read_here(tmp_path, small_chunks, read_again):
    "A record naming its type twice looks like a progress line at its start: the helper says so, and every line is read here"
    lines = (real_dir/'tool_heavy.jsonl').read_bytes().splitlines(keepends=True)
    twice = b'{"type":"progress","data":{},"type":"user","message":{"role":"user","content":"the hidden prompt"}}\n'
    (p := tmp_path/'twice.jsonl').write_bytes(b''.join(lines[:5] + [twice] + lines[5:]))
    plain,helped = both(p)
    assert helped == plain and any('the hidden prompt' in str(c) for c in plain[0]) and read_again

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

def test_what_is_appended_meanwhile_is_not_read(tmp_path, monkeypatch, read_again):
    "Both read up to the size the file had when they began: a host's appending then reaches neither"
    p = hostile(tmp_path)
    first = p.read_bytes()
    real_fstat = os.fstat
    def fstat(fd):   # the size when the read began; what follows is appended as the helper starts
        s = real_fstat(fd)
        if s.st_size==len(first):
            with open(p, 'ab') as f: f.write(b'\n' + (real_dir/'short.jsonl').read_bytes())
        return s
    monkeypatch.setattr(os, 'fstat', fstat)
    helped = seen(helped_read(p, claude_host, 0, 1, True))
    monkeypatch.undo()
    assert p.stat().st_size > len(first)
    (q := tmp_path/'first.jsonl').write_bytes(first)
    assert helped == seen(plain_read(q, claude_host, 0, 1, True)) and not read_again

def test_a_file_changed_under_the_read_is_read_again(tmp_path):
    "Runs that no longer match the file (it shrank, or its lines moved) are not read as lines: the read says so, to be done again"
    (p := tmp_path/'s.jsonl').write_bytes(b'{"a":1}\n{"b":2}\n')
    def lines(runs, end):
        with open(p, 'rb') as f: return list(_blanked(_runs(f, iter([array('q', runs), None]), 0, end, [])))
    assert lines([0, 8, 0, 8, 8, 1], 16) == [b'{"a":1}\n', b'', b'{"b":2}\n']
    with pytest.raises(ReadAgain): lines([0, 40, 0], 40)     # it shrank
    with pytest.raises(ReadAgain): lines([0, 5, 0], 16)      # a run ending inside a line

def test_a_file_replaced_under_the_read_is_read_again(tmp_path, monkeypatch, read_again):
    "The helper opens the file by its name: if that is another file by then, it stops, and the reader reads the file it opened"
    p = hostile(tmp_path)
    first = p.read_bytes()
    real_plan = sessions._plan
    def plan(path, *a):
        (tmp_path/'new').write_bytes((real_dir/'short.jsonl').read_bytes()); os.replace(tmp_path/'new', path)
        return real_plan(path, *a)
    monkeypatch.setattr(sessions, '_plan', plan)
    helped = seen(helped_read(p, claude_host, 0, 1, True))
    assert read_again and helped == seen(plain_read(p, claude_host, 0, 1, True))   # the fallback reads what the name holds now
    assert len(first) != p.stat().st_size

@pytest.mark.parametrize('fails', ['fork', 'pipe'])
def test_no_process_to_be_had_reads_here(tmp_path, monkeypatch, small_chunks, fails):
    "A system that gives no process or pipe (a limit reached): the helper's work is done here, the same read"
    def no(*a): raise OSError(errno.EAGAIN, 'Resource temporarily unavailable')
    p = hostile(tmp_path)
    monkeypatch.setattr(os, fails, no)
    plain,helped = both(p)
    assert helped == plain

def test_documents_read_with_a_helper_are_the_pinned_ones(monkeypatch):
    "Every pinned session, its reads helped however short: the same documents"
    monkeypatch.setattr(sessions, 'help_bytes', 0)
    monkeypatch.setattr(sessions, '_help_chunk', 1<<14)
    pins = pinned()
    for p in sorted(real_dir.glob('*.jsonl')): assert changed(p, pins) == [], p.name
