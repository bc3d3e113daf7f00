"""Finding sessions where the real clients put them, and reading what they wrote.
- Claude Code names a directory's project folder itself: `claude.project_dir` must name the same folder, for awkward
  paths too (dots, spaces, non-ASCII, an emoji, a path over 200 characters, a symlinked directory).
- Codex records the real path of its directory in `session_meta.cwd`: `find_sessions` finds a thread run through a symlink.
- The readers read the genuine files in tests/data/genuine (written by the clients; see tests/make_genuine.py).
Where npm cannot install the clients the tests fail (`install_hosts` raises), never skip."""
import json, os, re, shutil, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pytest
from hostkit import install_hosts, sandbox_env, AnthropicMock, ResponsesMock, run_claude, run_codex, text, codex_rollouts
from llmsurgery import claude, codex
from llmsurgery.sessions import find_sessions, find_session, read_session

GENUINE = Path(__file__).resolve().parent/'data'/'genuine'
EXE = Path(sys.executable).absolute().parent/'llmsurgery-compact'

@pytest.fixture(scope='module')
def hosts():
    "(claude, codex) binaries, installed once into the cache; a RuntimeError (no npm registry) fails the tests, never skips"
    return install_hosts()

def awkward_dirs(root):
    "Directories whose names exercise Claude Code's folder naming, and a symlink to one of them"
    names = ['a.b_c d', 'x~y+z(1)', 'ünï', 'em😀j', 'A-B..C', 'long' + 'x'*230]
    dirs = [root/n for n in names]
    for d in dirs: d.mkdir(parents=True)
    (root/'link').symlink_to(dirs[0])
    return dirs + [root/'link']

def test_claude_names_project_folders_as_we_do(hosts, tmp_path, monkeypatch):
    cl, _ = hosts
    home = tmp_path/'home'
    dirs = awkward_dirs(tmp_path/'w'); (tmp_path/'w'/'solo').mkdir()
    monkeypatch.setenv('CLAUDE_CONFIG_DIR', str(home/'.claude'))
    def one(d):
        with AnthropicMock([text('hi')]) as s: return run_claude(cl, home, d, 'hello', s)
    with ThreadPoolExecutor(8) as ex: results = list(ex.map(one, dirs))
    assert all(rc == 0 for rc, _, _ in results), [e for _, _, e in results]
    made = sorted(p.name for p in (home/'.claude'/'projects').iterdir())
    assert sorted({claude.project_dir(d).name for d in dirs}) == made          # the symlink shares its target's folder
    assert len(made) == len(dirs)-1 and any(len(n) > 200 for n in made)
    for d in dirs:                                                            # each directory finds its own session
        found = find_sessions(d, host='claude')
        assert len(found) == (2 if d.name in ('a.b_c d', 'link') else 1), d
    assert find_sessions(tmp_path/'w'/'solo') == []

def test_codex_threads_found_by_their_directory(hosts, tmp_path, monkeypatch):
    _, cx = hosts
    home, real = tmp_path/'home', tmp_path/'real.dir'; real.mkdir()
    (tmp_path/'link').symlink_to(real)
    with ResponsesMock([text('hi')]) as s:
        rc, _, err = run_codex(cx, home, tmp_path/'link', 'hello', s)
    assert rc == 0, err
    f, = codex_rollouts(home)
    monkeypatch.setenv('CODEX_HOME', str(home/'.codex'))
    monkeypatch.setenv('CLAUDE_CONFIG_DIR', str(home/'.claude'))
    tid = json.loads(f.read_text().splitlines()[0])['payload']['id']
    assert [(o.host, o.id, o.path) for o in find_sessions(tmp_path/'link')] == [('codex', tid, f)]
    assert find_session(tid[:10]) == f and codex.rollout_id(f) == tid
    assert re.fullmatch(r'rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-', f.name[:-len(tid)-6]) and f.name.endswith(f'{tid}.jsonl')
    assert codex.rollout_path(home/'.codex', tid).parent == f.parent          # today's folder, as the client names it
    o, = find_sessions(real)
    assert (o.first_prompt, o.messages) == ('hello', 2)

# ---------------------------------------------------------------- the genuine files (no client needed)

def test_reads_genuine_claude():
    s = read_session(GENUINE/'claude_bash.jsonl')
    assert [m.role for m in s.msgs] == ['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']
    assert s.msgs[0].text == 'What files are here?' and 'notes.txt' in s.msgs[2].content[0].text
    assert s.msgs[1].content[-1].arguments['command'] == 'ls'
    r = read_session(GENUINE/'claude_resumed.jsonl')
    assert r.summary and r.msgs[0].text == r.summary                          # the continuation opens with its document
    assert [m.text for m in r.msgs[1:]] == ['Which file did we find?', 'Yes: notes.txt.']

def test_reads_genuine_codex():
    s = read_session(GENUINE/'codex_exec.jsonl')
    assert [m.role for m in s.msgs] == ['user', 'assistant', 'tool', 'assistant']
    assert s.msgs[0].text == 'What files are here?' and 'notes.txt' in s.msgs[2].content[0].text
    assert s.msgs[1].content[-1].arguments == {'command': 'ls'}
    r = read_session(GENUINE/'codex_resumed.jsonl')
    assert r.summary and r.msgs[0].text == r.summary
    assert [m.text for m in r.msgs[1:]] == ['Which file did we find?', 'Yes: notes.txt.']

def store_of_genuine(tmp_path, work):
    "A Claude Code and a Codex store under `tmp_path` holding the genuine files as sessions of directory `work`"
    env = dict(CLAUDE_CONFIG_DIR=str(tmp_path/'claude'), CODEX_HOME=str(tmp_path/'codex'))
    proj = tmp_path/'claude'/'projects'/claude.project_dirname(work); proj.mkdir(parents=True)
    for n in ('claude_bash', 'claude_resumed'): shutil.copyfile(GENUINE/f'{n}.jsonl', proj/f'{n}.jsonl')
    for n in ('codex_exec', 'codex_resumed'):
        lines = (GENUINE/f'{n}.jsonl').read_text().splitlines()
        meta = json.loads(lines[0]); meta['payload']['cwd'] = str(work)
        p = codex.rollout_path(tmp_path/'codex', meta['payload']['id']); p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text('\n'.join([json.dumps(meta)] + lines[1:]) + '\n')
    return env

def test_list_genuine(tmp_path, monkeypatch):
    work = tmp_path/'work'; work.mkdir()
    env = store_of_genuine(tmp_path, work)
    for k, v in env.items(): monkeypatch.setenv(k, v)
    found = find_sessions(work)
    assert sorted(o.host for o in found) == ['claude', 'claude', 'codex', 'codex']
    prompts = {o.path.name: (o.first_prompt, o.messages) for o in found}
    assert ('What files are here?', 6) in prompts.values() and ('What files are here?', 4) in prompts.values()
    assert {('Which file did we find?', 4), ('Which file did we find?', 2)} <= set(prompts.values())   # a continuation's document is no prompt
    p = subprocess.run([str(EXE), '--list'], cwd=work, env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rows = p.stdout.splitlines()
    assert rows[0].split()[:2] == ['host', 'id'] and len(rows) == 5
    assert {r.split()[1] for r in rows[1:]} == {o.id for o in found}
