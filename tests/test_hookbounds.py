"""A hook's work is bounded in bytes as well as time: given a 2 GB transcript that holds no newline, a FIFO that never
closes, or a transcript still being written, the hook as the host runs it exits 0 well within the host's timeout, prints
nothing but JSON, and says why in one line of its log; the faulthandler watchdog never fires."""
import json, os, random, shlex, subprocess, sys, threading, time
from pathlib import Path
import pytest
from hypothesis import given, settings, strategies as st
from hostkit import sandbox_env
from llmsurgery.jsonl import last_boundary, records, LogMsgs
from llmsurgery.hookgate import job_timeouts
from llmsurgery.install import hook_group
from llmsurgery.hosts.base import host_named

DATA = Path(__file__).parent/'data'
GB2 = 2<<30

def naive_boundary(log, mark, is_boundary, end=None):
    "The offset of the last line of `log` before `end` that holds `mark` and parses to a boundary, else 0: line by line"
    log, at, found = log[:end], 0, 0
    for ln in log.split(b'\n'):
        if mark in ln and (r := next(records([ln], LogMsgs()), None)) is not None and is_boundary(r): found = at
        at += len(ln)+1
    return found

def is_b(r): return r.get('type') == 'boundary'

lines = st.one_of(st.just(b'{"type":"boundary"}'), st.just(b'{"type":"a","t":"boundary"}'), st.just(b'{"type":"a"}'),
                  st.binary(max_size=40).map(lambda b: b.replace(b'\n', b' ')),
                  st.integers(1, 300).map(lambda n: b'{"type":"boundary","pad":"' + b'x'*n + b'"}'),
                  st.integers(1, 300).map(lambda n: b'x'*n))

@settings(max_examples=300, deadline=None)
@given(st.lists(lines, max_size=12), st.booleans(), st.integers(1, 64), st.data())
def test_last_boundary_is_the_naive_scan(ls, nl_end, block, data):
    "Any log, any block size, any end: the scan from the end finds what a read of every line finds"
    import io
    log = b'\n'.join(ls) + (b'\n' if nl_end and ls else b'')
    end = data.draw(st.one_of(st.none(), st.integers(0, len(log))))
    want = naive_boundary(log, b'boundary', is_b, end)
    assert last_boundary(io.BytesIO(log), b'boundary', is_b, block=block, end=end) == want
    limit = data.draw(st.integers(1, len(log)+2))
    stop = len(log) if end is None else end
    try: got = last_boundary(io.BytesIO(log), b'boundary', is_b, block=block, end=end, limit=limit)
    except ValueError as e: got = e
    if isinstance(got, ValueError): assert stop - limit > 0 and 'in the last' in str(got)   # gave up only past the limit
    else: assert got == want

# ---------------------------------------------------------------- the hook as the host runs it

def hook_argv(name, event):
    "The command `--install-hooks` writes for host `name`'s `event`, with this Python"
    argv = shlex.split(hook_group(host_named(name), event['hook_event_name'])['hooks'][0]['command'])
    return [sys.executable, *argv[argv.index('-P'):]]

def run_hook(name, event, home, timeout=60):
    "(status, stdout, stderr, seconds, log lines) of host `name`'s installed hook on `event`"
    t = time.monotonic()
    p = subprocess.run(hook_argv(name, event), input=json.dumps(event).encode(), capture_output=True,
                       env=sandbox_env(home), timeout=timeout)
    log = Path(home)/'.local/state/llmsurgery/hooks.log'
    return p.returncode, p.stdout, p.stderr, time.monotonic()-t, log.read_text().splitlines() if log.exists() else []

def state_event(name, path):
    "The event on which host `name`'s hook gives the state, with the transcript at `path`"
    if name == 'gemini': return dict(hook_event_name='BeforeAgent', prompt='go on', session_id='s', transcript_path=str(path))
    return dict(hook_event_name='SessionStart', source='compact', session_id='s', transcript_path=str(path), cwd='/')

def only_json(out):
    "Is stdout empty, or JSON lines only?"
    for ln in out.decode().splitlines(): json.loads(ln)
    return True

@pytest.fixture(scope='module')
def sparse(tmp_path_factory):
    "A 2 GB file of zero bytes, no newline anywhere; for Gemini, its snapshot's tag at the very end"
    d = tmp_path_factory.mktemp('sparse')
    files = {}
    for name, tail in (('plain', b''), ('tagged', b'<state_snapshot>')):
        f = d/f'{name}.jsonl'
        with open(f, 'wb') as o:
            o.truncate(GB2 - len(tail))
            o.seek(GB2 - len(tail))
            o.write(tail)
        files[name] = f
    return files

@pytest.mark.parametrize('name', ['claude', 'codex', 'gemini'])
def test_a_2gb_line_ends_the_hook_by_its_own_bound(name, sparse, tmp_path):
    "2 GB, no newline: the state hook gives up within its byte bound, exits 0, prints nothing, logs one line"
    f = sparse['tagged' if name == 'gemini' else 'plain']
    rc, out, err, secs, log = run_hook(name, state_event(name, f), tmp_path)
    assert (rc, out, err) == (0, b'', b''), err[-2000:]
    assert len(log) == 1 and ('more than a hook reads' in log[0] or 'in the last' in log[0]), log
    assert secs < job_timeouts['state']

@pytest.mark.parametrize('name,event', [('claude', 'state'), ('codex', 'state'), ('gemini', 'state'),
                                        ('claude', 'resume')])
def test_a_fifo_that_never_closes_is_refused_at_once(name, event, tmp_path):
    "A FIFO as the transcript, a writer holding it open and writing nothing: refused without blocking, one log line"
    fifo = tmp_path/'t.jsonl'
    os.mkfifo(fifo)
    holder = os.open(fifo, os.O_RDWR|os.O_NONBLOCK)   # a writer that never writes nor closes, while the hook runs
    try:
        ev = state_event(name, fifo) if event == 'state' else dict(
            hook_event_name='PreCompact', custom_instructions='llmsurgery', trigger='manual', session_id='s',
            transcript_path=str(fifo), cwd=str(tmp_path))
        rc, out, err, secs, log = run_hook(name, ev, tmp_path)
    finally: os.close(holder)
    assert (rc, err) == (0, b'') and only_json(out), err[-2000:]
    if name != 'gemini': assert len(log) == 1 and 'not a regular file' in log[0], log
    else: assert (out, log) == (b'', [])   # Gemini's gate looks only at a regular file: nothing to tell of
    assert secs < job_timeouts['state']

def test_a_transcript_still_being_written_gives_its_state(tmp_path):
    "A writer appends to the transcript while the hook runs (a few MB a second): the hook reads what was there, and ends"
    src = DATA/'claude-real'/'258c7280-ae70-4798-800f-63464d01a85d.jsonl'
    f = tmp_path/'growing.jsonl'
    f.write_bytes(src.read_bytes())
    more = [ln for ln in src.read_bytes().splitlines(keepends=True) if b'"type":"user"' in ln][:50]
    stop, wrote = threading.Event(), [0]
    def write():
        with open(f, 'ab') as o:
            t = time.monotonic()
            while not stop.is_set() and time.monotonic()-t < 60:
                o.write(random.choice(more))
                o.flush()
                wrote[0] += 1
                time.sleep(0.0005)
    w = threading.Thread(target=write)
    w.start()
    try: rc, out, err, secs, log = run_hook('claude', state_event('claude', f), tmp_path)
    finally:
        stop.set()
        w.join(10)
    assert (rc, err, log) == (0, b'', []), (err[-2000:], log)
    said = json.loads(out)['hookSpecificOutput']['additionalContext']
    assert "llmsurgery's state" in said and wrote[0] > 0
    assert secs < job_timeouts['state']

def test_a_broken_install_still_exits_0_and_says_why(tmp_path):
    "A package the job imports fails to import (a partial install): the hook exits 0, prints nothing, logs one line"
    (broken := tmp_path/'broken'/'aidialog').mkdir(parents=True)
    (broken/'__init__.py').write_text('raise ImportError("aidialog is half installed")\n')
    event = state_event('claude', DATA/'claude-real'/'short.jsonl')
    env = dict(sandbox_env(tmp_path), PYTHONPATH=str(broken.parent))
    p = subprocess.run(hook_argv('claude', event), input=json.dumps(event).encode(), capture_output=True, env=env, timeout=60)
    log = (tmp_path/'.local/state/llmsurgery/hooks.log').read_text().splitlines()
    assert (p.returncode, p.stdout, p.stderr) == (0, b'', b''), p.stderr[-2000:]
    assert len(log) == 1 and 'aidialog is half installed' in log[0], log
