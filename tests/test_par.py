"Rendering on two cores: `fork_map` gives what a plain map gives, whoever computes a chunk, and documents made with a forked child are the pinned ones"
import json, os, select, signal, warnings
import pytest
from llmsurgery import par
from llmsurgery.par import fork_map, can_fork
from doc_pins import inputs, changed, pinned

pytestmark = pytest.mark.skipif(not can_fork(), reason='this process may not fork (not Linux, one core, or other threads)')

def both_start(timeout=60):
    "A map for `fork_map` in which both processes take part: each waits at its first item until the other has begun"
    me,(down_r,down_w),(up_r,up_w) = os.getpid(),os.pipe(),os.pipe()   # down: parent to child, up: child to parent
    begun = []   # each process has its own copy after the fork
    def f(x):
        if not begun:
            begun.append(x)
            mine,theirs = (down_w,up_r) if os.getpid()==me else (up_w,down_r)
            os.write(mine, b'.')
            assert select.select([theirs], [], [], timeout)[0], f'the other process did not begin within {timeout} s'
        return x*3, os.getpid()
    return f, (down_r, down_w, up_r, up_w)

def test_same_as_map_and_shared():
    "The same results as a plain map, and both processes computed some of them (arranged, not hoped for)"
    f,fds = both_start()
    try: res = fork_map(f, range(4000))
    finally:
        for fd in fds: os.close(fd)
    assert [a for a,_ in res] == [x*3 for x in range(4000)]
    assert len({p for _,p in res}) == 2

def test_short_list_stays_here():
    assert {p for p in fork_map(lambda x: os.getpid(), range(par.par_min-1))} == {os.getpid()}

def test_child_killed_midway_its_share_is_done_here():
    me = os.getpid()
    def f(x):
        if os.getpid()!=me and x>=2000: os.kill(os.getpid(), signal.SIGKILL)
        return x+1
    assert fork_map(f, range(4000)) == [x+1 for x in range(4000)]

def test_error_raised_here_no_child_left():
    def f(x):
        if x==3333: raise KeyError('x3333')
        return x
    with pytest.raises(KeyError, match='x3333'): fork_map(f, range(4000))
    with pytest.raises(ChildProcessError): os.waitpid(-1, os.WNOHANG)

def test_documents_made_on_two_cores_are_the_pinned_ones(monkeypatch):
    "Every session of the pins, with the map forked from its 50th item: the same documents, plain and fitted"
    monkeypatch.setattr(par, 'par_min', 50)
    monkeypatch.setattr(par, 'par_chunk', 8)
    pins = pinned()
    big = [p for p in inputs() if p.stat().st_size > 200_000]
    assert big
    for p in big:
        assert changed(p, pins) == [], p.name

CHILD_CODE = '''
import os, signal, sys, time
from pathlib import Path
from llmsurgery.par import fork_map
def stop(s, f): raise KeyboardInterrupt(s)
signal.signal(signal.SIGTERM, stop)
def f(x):
    p = Path(sys.argv[1])/str(os.getpid())
    if not p.exists(): p.write_text('')
    time.sleep(0.005)
    return x
try: fork_map(f, range(4000))
except KeyboardInterrupt: sys.exit(3)
'''

def test_stopped_parent_leaves_no_child(tmp_path):
    "A SIGTERM (Ctrl-C alike) while both processes render: the parent stops, and its child is killed and reaped"
    import subprocess, sys, time
    p = subprocess.Popen([sys.executable, '-c', CHILD_CODE, str(tmp_path)])
    try:
        for _ in range(200):
            if len(list(tmp_path.iterdir()))>=2: break
            time.sleep(0.05)
        pids = [int(o.name) for o in tmp_path.iterdir()]
        assert len(pids) == 2 and p.pid in pids
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=20) == 3
        child = next(o for o in pids if o != p.pid)
        time.sleep(0.2)
        with pytest.raises(ProcessLookupError): os.kill(child, 0)
    finally:   # on a failure, leave nothing running
        if p.poll() is None: p.kill(); p.wait()

def test_queue_too_big_for_the_pipe_runs_here(monkeypatch):
    "A queue the pipe can't hold without waiting is refused, and the map runs in this process"
    assert par._queue(10**5) is None
    q = par._queue(10)
    assert os.read(q, 100) == bytes(__import__('array').array('I', range(10)))
    os.close(q)
    monkeypatch.setattr(par, 'par_chunk', 1)
    monkeypatch.setattr(par, '_most_chunks', 10**6)
    assert {p for p in fork_map(lambda x: os.getpid(), range(10**5))} == {os.getpid()}

def test_no_fork_beside_a_thread_python_does_not_count():
    "A thread `threading` does not know of (started by `_thread`, as a C library's would be): the map stays here, no fork"
    import _thread, threading
    hold = _thread.allocate_lock(); hold.acquire()
    started = threading.Event()
    _thread.start_new_thread(lambda: (started.set(), hold.acquire()), ())
    try:
        assert started.wait(10) and threading.active_count() == 1
        assert not can_fork()
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            assert {p for p in fork_map(lambda x: os.getpid(), range(4000))} == {os.getpid()}
    finally: hold.release()

FORKED_CODE = '''
import os, sys, time
from llmsurgery.par import forked, can_fork
assert can_fork(), 'a fresh interpreter may fork'
with forked(lambda a: (a, os.getpid()), 7) as later: got = later()
assert got[0]==7 and got[1]!=os.getpid(), got   # made in the child
def f(): raise KeyError('k9')
with forked(f) as later:
    try: later(); raise SystemExit('no error')
    except KeyError as e: assert 'k9' in str(e)   # the child failed: made here, its error raised here
t = time.monotonic()
with forked(time.sleep, 60): pass   # never waited for
try: os.waitpid(-1, os.WNOHANG); raise SystemExit('a child is left')
except ChildProcessError: pass      # killed and reaped, not waited 60 s for
assert time.monotonic()-t < 30
print('ok')
'''

def test_forked_call_in_a_child():
    "`forked` in a fresh process (an earlier test's threads, tiktoken's pool, would keep this one from forking): made in the child, a failed child's error raised here, a child not waited for stopped"
    import subprocess, sys
    p = subprocess.run([sys.executable, '-c', FORKED_CODE], capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stdout.strip()) == (0, 'ok'), p.stderr[-2000:]

@pytest.mark.parametrize('fails', ['fork', 'pipe'])
def test_no_process_to_be_had_works_here(monkeypatch, fails):
    "A system that gives no process or pipe (a limit on processes reached): each way of forking does its work here, the same"
    import errno
    def no(*a): raise OSError(errno.EAGAIN, 'Resource temporarily unavailable')
    monkeypatch.setattr(os, fails, no)
    assert {p for p in fork_map(lambda x: os.getpid(), range(4000))} == {os.getpid()}
    with par.forked(os.getpid) as later: assert later() == os.getpid()
    with par.fork_iter(lambda: iter([os.getpid()])) as items: assert list(items) == [os.getpid()]

def test_fork_iter_streams_from_the_child_and_stops_it():
    "Items made in the child, taken one by one; leaving early stops it, and nothing is left behind"
    def made(n):
        for i in range(n): yield i, os.getpid()
    with par.fork_iter(made, 5) as items: got = list(items)
    assert [i for i,_ in got] == list(range(5)) and {p for _,p in got} != {os.getpid()}
    with par.fork_iter(made, 10**9) as items: assert next(items)[0] == 0   # then left: the child is stopped
    with pytest.raises(ChildProcessError): os.waitpid(-1, os.WNOHANG)

def test_fork_iter_a_child_killed_midway_is_lost():
    def dies():
        yield 1
        os.kill(os.getpid(), signal.SIGKILL)
        yield 2
    with par.fork_iter(dies) as items:
        assert next(items) == 1
        with pytest.raises(par.HelperLost): next(items)
