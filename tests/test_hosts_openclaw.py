"""OpenClaw, proven with the real client (2026.9.6 on Node 24) offline against a loopback OpenAI-compatible model.

The genuine session in tests/data/openclaw-genuine (made by make_genuine_openclaw.py with the real CLI: a shell call,
a failing command, an edit, a write, a read, a long output (stored zstd-compressed), OpenClaw's own `sessions compact`, a turn after it) is read from the very
database OpenClaw wrote, read-only: prompts, replies, calls and results, the failed command an error, the compaction a
boundary. A row OpenClaw compressed with zstd reads as the JSON one. The CLI lists it (`--host openclaw`), finds it by
id, searches it and `--show`s a message by number. One turn of the real CLI, made here, reads right too."""
import json, os, shlex, shutil, sqlite3, subprocess
from pathlib import Path
import pytest
from aidialog.msg_parts import ToolUse, ToolResult
from hostkit import compact_in, text
from openclawkit import (install_openclaw, ClawMock, Gateway, claw_config, claw_turn, claw_db, claw_env, clawexec,
                         run_claw, point_at)
from llmsurgery.hosts.openclaw import claw_ack, claw_go, claw_entries
from llmsurgery.hosts.base import host_named
from llmsurgery.sessions import read_session

DATA = Path(__file__).parent/'data'/'openclaw-genuine'
SID = 'claw-work'

def sandbox(tmp, db=DATA/'openclaw-agent.sqlite'):
    "`(home, cwd)`: a home whose OpenClaw store holds `db` (a copy), and the directory its session ran in"
    home = tmp/'home'
    (a := home/'.openclaw'/'agents'/'main'/'agent').mkdir(parents=True)
    shutil.copy(db, a/'openclaw-agent.sqlite')
    return home,Path(json.loads(json.loads((DATA/f'{SID}.events.jsonl').read_text().splitlines()[0])['event_json'])['cwd'])

@pytest.fixture
def claw(tmp_path, monkeypatch):
    home,cwd = sandbox(tmp_path)
    monkeypatch.setenv('HOME', str(home))
    monkeypatch.delenv('OPENCLAW_STATE_DIR', raising=False)
    return host_named('openclaw')

def test_genuine_session_reads_right(claw):
    ref, = claw.session_files()
    assert (str(ref), ref.host) == (SID, 'openclaw') and ref.cwd.endswith('/work') and ref.size > 10_000
    whole,now = claw.read(ref, whole=True),claw.read(ref)
    assert [m.role for m in whole].count('user') == 5 and len(whole) == 22, [m.role for m in whole]
    calls = [p for m in whole for p in m.content if isinstance(p, ToolUse)]
    assert [(c.name, c.arguments.get('command') or c.arguments.get('file_path')) for c in calls] == [
        ('Bash', 'cat notes.txt'), ('Bash', 'ls missing-file'), ('Edit', 'notes.txt'), ('Write', 'plan.md'),
        ('Read', 'plan.md'), ('Bash', 'seq 1 600')]
    res = {p.id: p.text for m in whole for p in m.content if isinstance(p, ToolResult)}
    assert res['call_mock001'] == 'alpha\nbeta\ngamma' and res['call_mock003'].startswith('Error: ls: cannot access')
    assert '-2 beta\n+2 BETA' in res['call_mock005']
    assert 'MOCK-OPENCLAW-SUMMARY' in now.summary and 'which OpenClaw compacted' in now[0].text
    assert [m.text for m in now[1:]] == ['Counted to 600.', 'After the compaction: still there?',
                                         'Still here after the compaction.']
    assert now.meta['model'] == 'mock-model' and not now.dropped

def test_a_compressed_row_reads_as_its_json(claw):
    "OpenClaw stored the long output of `seq 1 600` zstd-compressed (`event_json` NULL): it reads as any other row"
    with sqlite3.connect(f"file:{DATA/'openclaw-agent.sqlite'}?mode=ro&immutable=1", uri=True) as c:
        (js,z), = c.execute('select event_json, event_zstd from transcript_events where session_id=? and seq=33', (SID,))
    c.close()
    assert js is None and len(z) > 1000
    res = {p.id: p.text for m in claw.read(claw.session_at(SID), whole=True) for p in m.content if isinstance(p, ToolResult)}
    assert res['call_mock009'].split() == [str(i) for i in range(1, 601)]

def test_cli_lists_finds_searches_and_shows(tmp_path):
    home,cwd = sandbox(tmp_path)
    cwd.mkdir(parents=True, exist_ok=True)
    try:
        rc,out,err = compact_in(home, cwd, '--list', '--host', 'openclaw')
        assert rc == 0 and out.splitlines()[1].split()[:2] == ['openclaw', SID], (out, err)
        rc,out,err = compact_in(home, tmp_path, '--search', 'missing-file', '--host', 'openclaw')
        assert rc == 0 and any(l.split()[:2] == ['openclaw', 'claw-wor'] and '#13' in l for l in out.splitlines()), (out, err)
        rc,out,err = compact_in(home, tmp_path, '--show', '13', SID)
        assert rc == 0 and out.startswith('#13\n') and 'ls missing-file' in out, (out, err)
        rc,out,err = compact_in(home, tmp_path, SID)
        assert rc == 0 and 'Still here after the compaction.' in out and "OpenClaw's count" in err, (out, err)
    finally: shutil.rmtree(cwd, ignore_errors=True)

@pytest.fixture(scope='module')
def openclaw(): return install_openclaw()

def test_real_cli_turn_reads_right(openclaw, tmp_path, monkeypatch):
    node,js = openclaw
    home,cwd = tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    with ClawMock([clawexec('echo CLAW-ECHO'), text('It printed CLAW-ECHO.')]) as s:
        claw_config(home, s, cwd)
        got = claw_turn(node, js, home, cwd, 'one-turn', 'Echo something', s)
    assert got['meta']['agentMeta']['sessionId'] == 'one-turn' and claw_db(home).is_file()
    monkeypatch.setenv('HOME', str(home))
    log = read_session(host_named("openclaw").session_at("one-turn")).msgs
    assert [m.role for m in log] == ['user', 'assistant', 'tool', 'assistant'], log
    assert log[1].content[0].arguments == {'command': 'echo CLAW-ECHO'} and log[2].content[0].text.strip() == 'CLAW-ECHO'

# ---------------------------------------------------------------- continuing

def claw_cli(home, cwd, node, js, *args):
    "`llmsurgery-compact ARGS` in `cwd` with the sandbox's HOME and `openclaw` (on Node 24) first on PATH"
    from hostkit import EXE, sandbox_env
    env = claw_env(home, node) | {k:v for k,v in os.environ.items() if k=='PYTHONPATH'}
    env['PATH'] = f"{Path(js).parent.parent/'.bin'}{os.pathsep}{env['PATH']}"
    p = subprocess.run([str(EXE), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    return p.returncode,p.stdout,p.stderr

def test_resume_is_continued_by_openclaw_and_to_claude(openclaw, tmp_path):
    """`--resume` of the genuine session adds a session the printed command continues with the document; a Claude Code
    session goes `--to openclaw`, the genuine one `--to claude`"""
    node,js = openclaw
    home,cwd = sandbox(tmp_path)
    cwd = tmp_path/'work'
    cwd.mkdir()
    with ClawMock() as s0: claw_config(home, s0, cwd)   # the config's model; the mock's address is set at the turn
    cfg = (home/'.openclaw'/'openclaw.json').read_bytes()
    rc,out,err = claw_cli(home, cwd, node, js, SID, '--resume')
    argv = shlex.split(out.splitlines()[-1])
    assert rc==0 and argv[:5] == ['openclaw', 'agent', '--local', '--agent', 'main'], (out, err)
    sid = argv[argv.index('--session-id')+1]
    assert (home/'.openclaw'/'openclaw.json').read_bytes() == cfg   # the import leaves the config as it was
    assert not list((home/'.openclaw'/'agents'/'main'/'sessions').glob('*'))
    with ClawMock([text('REPLY-IN-OPENCLAW')]) as s:
        point_at(home, s)
        rc,got,err = run_claw(node, js, home, cwd, argv[1:])   # the very command printed
        body = s.main_requests()[-1]['body']
    said = [m['content'] if isinstance(m['content'], str) else ''.join(c.get('text', '') for c in m['content'])
            for m in body['messages']]
    assert rc == 0 and 'REPLY-IN-OPENCLAW' in got, (got[-2000:], err[-2000:])
    assert 'CLAW-TASK: show me the notes' in said[1] and 'compacted into the following summary' in said[1], said[1][:300]
    assert said[2] == claw_ack and claw_go in said[3]
    src = Path(__file__).parent/'data'/'genuine'/'claude_bash.jsonl'   # another host's session, continued here
    rc,out,err = claw_cli(home, cwd, node, js, src, '--to', 'openclaw')
    argv = shlex.split(out.splitlines()[-1])
    assert rc == 0 and argv[:5] == ['openclaw', 'agent', '--local', '--agent', 'main'], (out, err)
    es = claw_entries(claw_db(home), argv[argv.index('--session-id')+1])
    assert src.name in next(e for _,e in es if e.get('type')=='compaction')['summary']   # the document, read back
    rc,out,err = claw_cli(home, cwd, node, js, SID, '--to', 'claude')
    assert rc==0 and out.startswith('claude --resume '), (out, err)
    new = next((home/'.claude'/'projects').rglob(f"{out.split()[-1]}.jsonl"))
    assert 'CLAW-TASK: show me the notes' in read_session(new).summary

# ---------------------------------------------------------------- llmsurgery inside OpenClaw

def test_install_merges_the_plugin_and_gives_the_config_back(tmp_path, monkeypatch):
    "The install names the plugin in the user's config (theirs kept), twice is once; the uninstall gives the bytes back"
    from llmsurgery.install import install_hooks, uninstall_hooks
    monkeypatch.setenv('HOME', str(tmp_path)); monkeypatch.setenv('XDG_STATE_HOME', str(tmp_path/'state'))
    monkeypatch.delenv('OPENCLAW_STATE_DIR', raising=False); monkeypatch.delenv('OPENCLAW_CONFIG_PATH', raising=False)
    (oc := tmp_path/'.openclaw').mkdir()
    mine = dict(plugins=dict(load=dict(paths=['/theirs'])), agents=dict(defaults=dict(model=dict(primary='m/x'))))
    (cfg := oc/'openclaw.json').write_text(json.dumps(mine, indent=4))
    before = cfg.read_bytes()
    lines = install_hooks('openclaw')
    d = json.loads(cfg.read_text())
    assert d['plugins']['load']['paths'] == ['/theirs', str(oc/'llmsurgery'/'llmsurgery.mjs')]
    assert d['agents']['defaults']['compaction'] == {'provider': 'llmsurgery'} and d['plugins']['entries']['llmsurgery']
    assert json.loads((oc/'llmsurgery'/'openclaw.plugin.json').read_text())['activation'] == {'onStartup': True}
    assert 'as its compactor' in lines[0] and cfg.read_text().startswith('{\n    "')
    assert install_hooks('openclaw') == lines
    cfg.write_text(json.dumps(d | {'meta': {'lastTouchedVersion': '2026.9.6'}}, indent=2))   # OpenClaw stamps it
    undo = uninstall_hooks('openclaw')
    assert cfg.read_bytes() == before and not (oc/'llmsurgery').exists(), undo
    cfg.write_text(json.dumps(dict(agents=dict(defaults=dict(compaction=dict(provider='lossless'))))))
    with pytest.raises(ValueError, match="provider is 'lossless'"): install_hooks('openclaw')

def test_llmsurgery_makes_openclaws_compaction(openclaw, tmp_path):
    """With `--install-hooks openclaw`, the real Gateway's `sessions compact` of the genuine session stores llmsurgery's
    document, with no model call, and the model's next request carries it; the uninstall gives the config back"""
    node,js = openclaw
    home,_ = sandbox(tmp_path)
    cwd = tmp_path/'work'
    cwd.mkdir()
    with ClawMock([text('REPLY-AFTER-OURS')]) as s:
        cfg = claw_config(home, s, cwd)
        before = cfg.read_bytes()
        rc,out,err = claw_cli(home, cwd, node, js, '--install-hooks', 'openclaw')
        assert rc == 0 and 'as its compactor' in out, (out, err)
        with Gateway(node, js, home, cwd) as g: got = g.compact(f'agent:main:explicit:{SID}')
        rc,out,err = run_claw(node, js, home, cwd, ['agent', '--local', '--agent', 'main', '--session-id', SID,
                                                    '--message', 'NEXT-TURN', '--json'])
        assert rc == 0, (out[-2000:], err[-3000:])
        said = ''.join(c.get('text', '') for c in s.main_requests()[-1]['body']['messages'][1]['content'])
    assert got['compacted'] and not s.summaries(), got   # no model call for the summary
    stored = got['result']['summary']
    assert 'CLAW-TASK: show me the notes' in stored and 'Counted to 600.' in stored and '--show' in stored, stored[:500]
    assert 'compacted into the following summary' in said and 'CLAW-TASK: show me the notes' in said, said[:500]
    rc,out,err = claw_cli(home, cwd, node, js, '--uninstall-hooks', 'openclaw')
    assert rc == 0 and cfg.read_bytes() == before and not (home/'.openclaw'/'llmsurgery').exists(), (out, err)

def test_the_hook_answers_a_summary_or_nothing(tmp_path):
    "The plugin's hook on the genuine store: the document as JSON; on what it can't use nothing, status 0, a log line"
    import sys
    home,_ = sandbox(tmp_path)
    env = claw_env(home, sys.executable) | {k:v for k,v in os.environ.items() if k=='PYTHONPATH'}
    def hook(inp):
        p = subprocess.run([sys.executable, '-P', '-m', 'llmsurgery.hooks', 'openclaw'], input=inp, env=env,
                           capture_output=True, text=True, timeout=60)
        return p.returncode,p.stdout
    stamps = [json.loads(r['event_json'] or '{}').get('message', {}).get('timestamp')
              for r in map(json.loads, (DATA/f'{SID}.events.jsonl').read_text().splitlines()) if r['event_json']]
    ev = lambda **kw: json.dumps(dict(hook_event_name='summarize', **kw))
    rc,out = hook(ev(transcript_path=SID, timestamps=[t for t in stamps if t]))
    got = json.loads(out)
    assert rc == 0 and 'CLAW-TASK: show me the notes' in got['summary'] and got['budget'] == 2_000, out[:300]
    for bad in ('', ev(), ev(transcript_path='nope'), ev(transcript_path=SID, timestamps=[1])):
        assert hook(bad) == (0, ''), bad
    log = (home/'.local'/'state'/'llmsurgery'/'hooks.log').read_text().splitlines()
    assert len(log) == 4 and 'openclaw summarize' in log[-1] and 'none of the messages' in log[-1], log
