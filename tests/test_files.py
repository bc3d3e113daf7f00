"""`--out` to every kind of target (issue 22). A regular or new file is replaced whole or not at all: 0600 when new,
keeping its mode when replaced. A device, a FIFO, a socket, `/dev/stdout` and a process substitution are written through
and stay what they were. A symlink keeps pointing where it did. A folder or a missing folder is one line and exit 2.
Nothing here writes to a real device: the device nodes are made in a temporary folder."""
import gzip, os, socket, stat, subprocess
from pathlib import Path
import pytest
from test_cli import ex, cmd, env, run, one_error, files

SRC = ex/'claude_short.jsonl'

def mode(p): return stat.S_IMODE(Path(p).stat().st_mode)

@pytest.fixture(scope='module')
def doc(tmp_path_factory):
    "The short example's document, as a new regular file gets it"
    p = tmp_path_factory.mktemp('doc')/'doc.md'
    rc,_,err = run(SRC, '--out', p)
    assert rc == 0, err
    return p.read_bytes()

def test_new_file_is_private(tmp_path, doc):
    "A new file holds the session's content: 0600 whatever the umask lets through"
    rc,_,err = run(SRC, '--out', tmp_path/'doc.md', preexec_fn=lambda: os.umask(0o022))
    assert rc == 0, err
    out = tmp_path/'doc.md'
    assert out.read_bytes() == doc and mode(out) == 0o600 and files(tmp_path) == ['doc.md']

def test_replaced_file_keeps_its_mode(tmp_path, doc):
    out = tmp_path/'doc.md'
    out.write_text('old')
    out.chmod(0o644)
    rc,_,err = run(SRC, '--out', out)
    assert rc == 0, err
    assert out.read_bytes() == doc and mode(out) == 0o644 and files(tmp_path) == ['doc.md']

def test_symlink_keeps_pointing_where_it_did(tmp_path, doc):
    real,link = tmp_path/'real.md',tmp_path/'link.md'
    real.write_text('old')
    real.chmod(0o640)
    link.symlink_to('real.md')
    rc,_,err = run(SRC, '--out', link)
    assert rc == 0, err
    assert link.is_symlink() and os.readlink(link) == 'real.md' and real.read_bytes() == doc and mode(real) == 0o640
    assert files(tmp_path) == ['link.md', 'real.md']

def test_folder_and_missing_folder(tmp_path):
    "One line, exit 2, and nothing left behind"
    (tmp_path/'folder').mkdir()
    one_error(*run(SRC, '--out', tmp_path/'folder')[::2], 'a folder')
    one_error(*run(SRC, '--out', tmp_path/'missing'/'doc.md')[::2], 'no such folder')
    assert files(tmp_path) == ['folder'] and files(tmp_path/'folder') == []

def device(path, major, minor):
    "A character device node at `path` for driver (`major`, `minor`), or a skip where this process may not make one"
    if os.geteuid() != 0: pytest.skip('making a device node needs root')
    try: os.mknod(path, stat.S_IFCHR|0o666, os.makedev(major, minor))
    except PermissionError: pytest.skip('this machine may not make device nodes (no CAP_MKNOD)')
    return path

def test_device_stays_a_device(tmp_path):
    "`--out` to a copy of /dev/null's node: written through, and still the same character device"
    dev = device(tmp_path/'null', 1, 3)
    before = dev.stat()
    rc,_,err = run(SRC, '--out', dev)
    assert rc == 0, err
    after = dev.stat()
    same = lambda st: (st.st_rdev, st.st_ino, st.st_mode)
    assert stat.S_ISCHR(after.st_mode) and same(after) == same(before)
    assert files(tmp_path) == ['null']

def test_device_is_written_to(tmp_path):
    "A copy of /dev/full's node refuses every write: the error proves the document went to the device, not beside it"
    dev = device(tmp_path/'full', 1, 7)
    one_error(*run(SRC, '--out', dev)[::2], 'No space left on device', str(dev))
    assert stat.S_ISCHR(dev.stat().st_mode) and files(tmp_path) == ['full']

def test_fifo_reader_gets_the_document(tmp_path, doc):
    fifo = tmp_path/'fifo'
    os.mkfifo(fifo)
    reader = subprocess.Popen(['cat', str(fifo)], stdout=subprocess.PIPE)
    try:
        rc,_,err = run(SRC, '--out', fifo, timeout=60)
        got,_ = reader.communicate(timeout=60)
    finally:
        if reader.poll() is None: reader.kill(); reader.wait()
    assert rc == 0, err
    assert got == doc and stat.S_ISFIFO(fifo.stat().st_mode) and files(tmp_path) == ['fifo']

def test_dev_stdout_into_a_pipe(doc):
    rc,out,err = run(SRC, '--out', '/dev/stdout')
    assert rc == 0, err
    assert out == doc

def test_dev_stdout_appends_where_the_shell_points_it(tmp_path, doc):
    "`--out /dev/stdout >> log`: the descriptor is written at its place, so what the log held stays"
    log = tmp_path/'log'
    log.write_bytes(b'before\n')
    rc,_,err = run(SRC, '--out', '/dev/stdout', redirect=f'>> {log}')
    assert rc == 0, err
    assert log.read_bytes() == b'before\n' + doc and files(tmp_path) == ['log']

def test_process_substitution(tmp_path, doc):
    "`--out >(gzip > doc.gz)`: the command gets /dev/fd/63, a pipe, and gzip the whole document"
    script = '"$@" --out >(gzip > doc.gz); rc=$?; wait $!; exit $rc'
    p = subprocess.run(['bash', '-c', script, '_', *cmd(SRC)], cwd=tmp_path, capture_output=True, timeout=120,
                       env=env())
    assert p.returncode == 0, p.stderr
    assert gzip.decompress((tmp_path/'doc.gz').read_bytes()) == doc and files(tmp_path) == ['doc.gz']

def test_unix_socket_gets_the_document(tmp_path, doc):
    "A listening Unix socket on disk takes a connection and the document; it stays a socket"
    path = tmp_path/'sock'
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as srv:
        srv.bind(str(path))
        srv.listen(1)
        srv.settimeout(60)
        p = subprocess.Popen(cmd(SRC, '--out', path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
        try:
            conn,_ = srv.accept()
            with conn, conn.makefile('rb') as f:
                conn.settimeout(60)
                got = f.read()
            _,err = p.communicate(timeout=60)
        finally:
            if p.poll() is None: p.kill(); p.wait()
    assert p.returncode == 0, err
    assert got == doc and stat.S_ISSOCK(path.stat().st_mode) and files(tmp_path) == ['sock']
