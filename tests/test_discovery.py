"""Finding sessions where the real clients put them, and reading what they wrote.
- Claude Code names a directory's project folder itself: `claude.project_dir` must name the same folder, for awkward
  paths too (dots, spaces, non-ASCII, an emoji, a path over 200 characters, a symlinked directory).
- Codex records the real path of its directory in `session_meta.cwd`: `find_sessions` finds a thread run through a symlink.
- The readers read the genuine files in tests/data/genuine (written by the clients; see tests/make_genuine.py).
- `--list` shows what a default compaction reads, the session's first request, and the time of its last record.
Where npm cannot install the clients the tests fail (`install_hosts` raises), never skip."""
import json, os, re, shutil, subprocess, sys, time
from datetime import datetime
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pytest
from hostkit import AnthropicMock, ResponsesMock, run_claude, run_codex, text, codex_rollouts
from llmsurgery.hosts.base import host_named
from llmsurgery.hosts import codex as cxmod
from llmsurgery.hosts.claude import project_dirname
claude,codex = host_named('claude'),host_named('codex')
from llmsurgery.sessions import read_session
from llmsurgery.discover import find_sessions, find_session, session_row

GENUINE = Path(__file__).resolve().parent/'data'/'genuine'
EXE = Path(sys.executable).absolute().parent/'llmsurgery-compact'

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
    assert find_session(tid[:10]) == f and codex.session_id(f) == tid
    assert re.fullmatch(r'rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-', f.name[:-len(tid)-6]) and f.name.endswith(f'{tid}.jsonl')
    assert cxmod.rollout_path(home/'.codex', tid).parent == f.parent          # today's folder, as the client names it
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
    proj = tmp_path/'claude'/'projects'/project_dirname(work); proj.mkdir(parents=True)
    for n in ('claude_bash', 'claude_resumed', 'claude_command'): shutil.copyfile(GENUINE/f'{n}.jsonl', proj/f'{n}.jsonl')
    for n in ('codex_exec', 'codex_resumed'):
        lines = (GENUINE/f'{n}.jsonl').read_text().splitlines()
        meta = json.loads(lines[0]); meta['payload']['cwd'] = str(work)
        p = cxmod.rollout_path(tmp_path/'codex', meta['payload']['id']); p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text('\n'.join([json.dumps(meta)] + lines[1:]) + '\n')
    return env

def test_list_genuine(tmp_path, monkeypatch):
    work = tmp_path/'work'; work.mkdir()
    env = store_of_genuine(tmp_path, work)
    for k, v in env.items(): monkeypatch.setenv(k, v)
    found = find_sessions(work)
    assert sorted(o.host for o in found) == ['claude']*3 + ['codex']*2
    prompts = {o.path.name: (o.first_prompt, o.messages) for o in found}
    assert ('What files are here?', 6) in prompts.values() and ('What files are here?', 4) in prompts.values()
    # a continuation's document is no prompt; its messages are what a default compaction reads: the document, then what followed
    assert [prompts[f'{n}.jsonl'] for n in ('claude_resumed', 'claude_command')] == [('Which file did we find?', 3),
                                                                                      ('/triage the parser drops the last row', 4)]
    assert ('Which file did we find?', 3) in [v for k, v in prompts.items() if k.startswith('rollout-')]
    assert all(o.messages == len(read_session(o.path).msgs) for o in found)
    p = subprocess.run([str(EXE), '--list'], cwd=work, env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rows = p.stdout.splitlines()
    assert rows[0].split()[:2] == ['host', 'id'] and len(rows) == 6 and '/triage the parser drops the last row' in p.stdout
    assert {r.split()[1] for r in rows[1:]} == {o.id for o in found}

REAL = Path(__file__).resolve().parent/'data'/'claude-real'   # real Claude Code sessions, in the repository

def test_list_real(tmp_path, monkeypatch):
    "Real sessions copied into a store (their files' times are now): the listing shows the first request, the default read, the last record's time"
    work = tmp_path/'work'; work.mkdir()
    monkeypatch.setenv('CLAUDE_CONFIG_DIR', str(tmp_path/'claude')); monkeypatch.setenv('CODEX_HOME', str(tmp_path/'codex'))
    proj = claude.project_dir(work); proj.mkdir(parents=True)
    names = ['subagent.jsonl', '258c7280-ae70-4798-800f-63464d01a85d.jsonl']
    for n in names: shutil.copyfile(REAL/n, proj/n)
    found = {o.path.name: o for o in find_sessions(work)}
    sub, big = found[names[0]], found[names[1]]
    assert sub.first_prompt.startswith('/handgemacht:create-beads websearch to learn')   # not `[Request interrupted by user]`
    assert big.first_prompt == 'Implement spotter-gqc' and (big.messages, read_session(REAL/names[1]).msgs.__len__()) == (123, 123)
    last = datetime.fromisoformat('2026-02-11T21:46:25.932Z').timestamp()   # the last stamped record of the big session
    assert big.activity == last and [o.path.name for o in find_sessions(work)] == names[::-1]
    row = session_row(big)
    assert time.strftime('%Y-%m-%d %H:%M', time.localtime(last)) in row and f'{123:>8,}' in row

def test_session_id_prefix_needs_four_characters(tmp_path, monkeypatch):
    work = tmp_path/'work'; work.mkdir()
    env = store_of_genuine(tmp_path, work)
    for k, v in env.items(): monkeypatch.setenv(k, v)
    x = next(o for o in find_sessions(work) if o.host == 'codex')
    for short in (x.id[:1], x.id[:3]):
        with pytest.raises(ValueError, match='too short for a session id: give at least 4 characters'): find_session(short)
    assert find_session(x.id) == x.path and find_session(x.id[:30]) == x.path
    p = subprocess.run([str(EXE), x.id[:2]], cwd=work, env={**os.environ, **env}, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == '' and p.stderr.count('\n') == 1 and 'at least 4 characters' in p.stderr

def test_subagent_file_compacts_as_a_session(tmp_path):
    "A Claude Code 2.1 sub-agent's own file, given directly, is a session: its prompt and its work, not an empty document"
    f = REAL/'258c7280-ae70-4798-800f-63464d01a85d'/'subagents'/'agent-a881341.jsonl'
    p = subprocess.run([str(EXE), str(f)], cwd=tmp_path, env={**os.environ, 'HOME': str(tmp_path)}, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert 'What is the output contract for Claude Code hooks' in p.stdout and 'WebFetch' in p.stdout
