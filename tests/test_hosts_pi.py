"""Pi, proven with the real client (`@mariozechner/pi-coding-agent@0.73.1`) offline against a loopback model (pikit):
genuine sessions Pi writes (tool calls, a failing command, an edit, an extension's message, Pi's own compaction, a
branch left by `/tree`) read as Pi replays them; `--resume` and `--to pi` write sessions `pi --session` continues with
the document, and `--to claude` continues a Pi session in Claude Code; with the extension installed, Pi's automatic
compaction and `/compact` are llmsurgery's document with no model call, the agent's shell names its session, and a
failing or slow llmsurgery leaves Pi to compact as it would. A 3 MB session is compacted through the extension."""
import json, os, re, shutil, subprocess
from pathlib import Path
import pytest
from hostkit import EXE, text, sha, one_turn, run_claude, AnthropicMock, claude_sessions, request_with
from pikit import (install_pi, PiMock, PiRpc, pi_config, pi_env, point_at, run_pi, pi_sessions, pibash, piedit, prompt,
                   wait_for, work_session, agent_dir, pi_session_from, pi_cut, WORK_SUMMARY)
from llmsurgery.sessions import read_session
from llmsurgery.document import split_compaction, compact_body
from llmsurgery.install import hook_command
from llmsurgery.hosts.base import host_named
from llmsurgery.hosts.pi import pi_ack

WRAP = 'The conversation history before this point was compacted into the following summary:\n\n<summary>\n'

@pytest.fixture(scope='session')
def pi(): return install_pi()

def cli(home, cwd, *args, env=None):
    "`llmsurgery-compact ARGS` in `cwd` with the sandbox's HOME, XDG folders and agent folder: (rc, stdout, stderr)"
    env = (env or pi_env(home)) | {k:v for k,v in os.environ.items() if k=='PYTHONPATH'}
    p = subprocess.run([str(EXE), *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return p.returncode,p.stdout,p.stderr

def hooks_log(home): return Path(home)/'.local'/'state'/'llmsurgery'/'hooks.log'

def first_user(body):
    "The text of the first user message a chat request carries"
    m = next(m for m in body['messages'] if m['role']=='user')
    return m['content'] if isinstance(m['content'], str) else ''.join(c.get('text', '') for c in m['content'])

def compactions(f): return [json.loads(l) for l in Path(f).read_text().splitlines() if '"type":"compaction"' in l]

@pytest.fixture(scope='module')
def work(pi, tmp_path_factory):
    "The genuine session of `pikit.work_session`, and a copy of its file before `/back`: (home, cwd, file, before)"
    d = tmp_path_factory.mktemp('pi')
    home,cwd = d/'home',d/'work'
    cwd.mkdir()
    src,_ = work_session(pi, home, cwd, before=d/'before.jsonl')
    return home,cwd,src,d/'before.jsonl'

# ---------------------------------------------------------------- reading what Pi wrote

def test_the_path_is_the_conversation(work):
    "The newest session of the directory, as Pi replays it: the branch `/back` left is not the conversation"
    home,cwd,src,_ = work
    h = sha(src)
    rc,out,err = cli(home, cwd, '--host', 'pi', '--report')
    assert rc==0, err
    state,conv = out.split('## Conversation')
    assert '§ PI-TASK: show me the notes §' in state and 'A new direction from here' in state
    assert '[Pi: summary of a branch this conversation came back from]' in conv and 'On the new branch now.' in conv
    assert 'List missing-file please' not in out and WORK_SUMMARY not in state   # the abandoned branch, its compaction
    assert "(Pi's count)" in err and sha(src)==h

def test_compaction_is_the_boundary(work):
    "Before `/back`: Pi's compaction on the path opens the read, what it kept is conversation; `--all` reads all of it"
    home,cwd,_,before = work
    rc,out,err = cli(home, cwd, before)
    assert rc==0, err
    state,conv = out.split('## Conversation')
    assert f"Earlier conversation (the host's summary): § {WORK_SUMMARY}" in state
    assert 'PI-TASK' in state and 'PI-TASK' not in conv and 'EXTENSION-NOTE: the build is green' in conv
    assert '[Pi: the user ran `echo USER-RAN-THIS`]' in conv and 'After the compaction: still there?' in conv
    rc,whole,err = cli(home, cwd, before, '--all')
    assert rc==0, err
    for said in ('! cat notes.txt', '> Error: ls: cannot access', '-2 beta ¶ +2 BETA', "▶ Write(file_path='plan.md'",
                 'That file does not exist.'):
        assert said in whole, said
    turns = [int(l.split('#')[1].split()[0]) for l in whole.splitlines() if l.startswith('*** #')]
    assert turns==sorted(turns) and turns[0]==4
    rc,got,err = cli(home, cwd, before, '--grep', 'BETA')
    n = int(got.splitlines()[0].split(':')[0].lstrip('#'))
    rc,shown,err = cli(home, cwd, before, '--show', n)
    assert rc==0 and shown.startswith(f'#{n}\n') and 'BETA' in shown

def test_list_ids_and_errors(work, tmp_path):
    home,cwd,src,_ = work
    sid = json.loads(src.read_text().splitlines()[0])['id']
    rc,out,err = cli(home, cwd, '--list')
    assert rc==0 and f'pi        {sid}' in out and 'PI-TASK: show me the notes' in out, out+err
    rc,out,err = cli(home, cwd, sid[:13], '--show', '4')
    assert rc==0 and '§ PI-TASK: show me the notes §' in out
    rc,out,err = cli(home, tmp_path, '--host', 'pi')
    assert rc==2 and 'no session of' in err and str(agent_dir(home)/'sessions') in err and 'Traceback' not in err

def test_flat_store(work, tmp_path):
    "With PI_CODING_AGENT_SESSION_DIR Pi keeps every session in one folder: a directory's are those its header names"
    home,cwd,src,_ = work
    flat = tmp_path/'flat'
    flat.mkdir()
    shutil.copy(src, flat/src.name)
    env = pi_env(home) | dict(PI_CODING_AGENT_SESSION_DIR=str(flat))
    rc,out,err = cli(home, cwd, '--list', env=env)
    assert rc==0 and out.count('\npi ')==1 and 'PI-TASK' in out, out+err
    rc,out,err = cli(home, tmp_path, '--list', '--host', 'pi', env=env)
    assert rc==0 and 'PI-TASK' not in out

# ---------------------------------------------------------------- continuing

def test_resume_is_continued_by_pi(pi, work):
    "`--resume` writes a session `pi --session ID` opens with the document; the chain's numbers reach the original"
    home,cwd,src,_ = work
    rc,out,err = cli(home, cwd, src, '--resume')
    assert rc==0, err
    cmd = out.splitlines()[-1]
    assert cmd.startswith('pi --session '), out
    sid = cmd.split()[-1]
    new, = [p for p in pi_sessions(home) if sid in p.name]
    assert oct(new.stat().st_mode & 0o777)=='0o644' and new.parent==src.parent
    doc = read_session(new).summary
    with PiMock([text('REPLY-ONE'), text('REPLY-TWO')]) as s:
        rc,o,e = run_pi(pi, home, cwd, ['CONTINUE-ONE', 'CONTINUE-TWO'], s, '--session', sid)
        assert rc==0 and 'REPLY-TWO' in o, e
        for r in s.main_requests():
            assert first_user(r['body'])==f'{WRAP}{doc}\n</summary>'
            assert [m['content'] for m in r['body']['messages'] if m['role']=='assistant'][0]==pi_ack
    assert 'PI-TASK: show me the notes' in doc and 'REPLY-TWO' in new.read_text()
    rc,shown,err = cli(home, cwd, sid, '--show', '4')
    assert rc==0 and 'PI-TASK: show me the notes' in shown   # #4 is in the transcript it continues
    rc,o,err = cli(home, cwd, sid)
    assert rc==0 and 'CONTINUE-TWO' in o and 'kept the earlier document' in err

def test_to_pi_from_claude_and_back(pi, hosts, work, tmp_path):
    "A real Claude Code session continues in Pi (`--to pi`); a Pi session continues in Claude Code (`--to claude`)"
    home,cwd,src,_ = work
    cl = hosts[0]
    csrc = one_turn('claude', cl, home, cwd, 'CLAUDE-TASK-5150: rename the parser')
    rc,out,err = cli(home, cwd, csrc, '--to', 'pi')
    assert rc==0, err
    sid = out.split()[-1]
    doc = read_session(next(p for p in pi_sessions(home) if sid in p.name)).summary
    assert 'CLAUDE-TASK-5150' in doc and f'transcript is `{csrc}`' in doc
    with PiMock([text('REPLY-IN-PI')]) as s:
        rc,o,e = run_pi(pi, home, cwd, 'PROMPT-IN-PI', s, '--session', sid)
        assert rc==0 and 'REPLY-IN-PI' in o, e
        assert first_user(s.main_requests()[0]['body'])==f'{WRAP}{doc}\n</summary>'
    rc,out,err = cli(home, cwd, src, '--to', 'claude')
    assert rc==0 and out.startswith('claude --resume '), err
    new = out.split()[-1]
    with AnthropicMock([text('REPLY-IN-CLAUDE')]) as s:
        rc,o,e = run_claude(cl, home, cwd, 'PROMPT-IN-CLAUDE', s, '--resume', new)
        assert rc==0 and 'REPLY-IN-CLAUDE' in o, e
        assert request_with(s, 'A new direction from here') is not None

def test_exec_needs_pi_on_path(work):
    home,cwd,src,_ = work
    n = len(pi_sessions(home))
    rc,out,err = cli(home, cwd, src, '--exec', env=pi_env(home) | dict(PATH='/usr/bin:/bin'))
    assert rc==2 and '--exec runs pi, which is not on PATH: nothing was written' in err and len(pi_sessions(home))==n

# ---------------------------------------------------------------- llmsurgery as Pi's compactor

DECOY = '2099-01-01T00:00:00.000Z'
GENUINE = Path(__file__).parent/'data'/'genuine'/'pi'

def decoy(home, cwd):
    "A session of `cwd` newer than any other (its records stamped in 2099), asking something else"
    lines = [json.loads(l) for l in (GENUINE/'a_one_tool_call.jsonl').read_text().splitlines()]
    lines[0] |= dict(id='0decoy00-0000-7000-8000-000000000000', cwd=str(cwd.resolve()))
    for r in lines: r['timestamp'] = DECOY
    f = pi_sessions(home)[0].parent/'decoy.jsonl'
    f.write_text(''.join(json.dumps(r)+'\n' for r in lines))

@pytest.fixture(scope='module')
def hooked(pi, tmp_path_factory):
    """A session of Pi with llmsurgery's extension: a threshold compaction after the third turn, a turn, `/compact` with
    words (RPC), then the agent runs `llmsurgery-compact --show 4` in its shell: (home, cwd, file, mock, rpc events)"""
    d = tmp_path_factory.mktemp('pihook')
    home,cwd = d/'home',d/'work'
    cwd.mkdir()
    (cwd/'notes.txt').write_text('alpha\nbeta\ngamma\n')
    rc,out,err = cli(home, cwd, '--install-hooks', 'pi')
    assert rc==0 and 'as its compactor' in out, err
    replies = [pibash('wc -l notes.txt'), text('Three lines.'), pibash('ls nowhere'), text('It failed.'),
               piedit('notes.txt', 'beta', 'BETA'), dict(text('Edited.'), prompt_tokens=3500),
               text('Carrying on with the notes. '*20),
               pibash(f'{EXE} --show 4'), text('Shown.')]
    with PiMock(replies) as s:
        pi_config(home, s, context=4000, reserve=1000, keep=50, cwd=cwd)
        with PiRpc(pi, home, cwd) as rpc:
            for words in ('HOOK-TASK-7: count the notes', 'Break something', 'Make beta upper case'):
                prompt(rpc, words)
            src, = pi_sessions(home)
            wait_for(lambda: compactions(src))
            prompt(rpc, 'After the compaction: what now?')
            r = rpc.send(dict(type='compact', customInstructions='KEEP-NOTE-OMEGA'), timeout=60)
            assert r['success'], r
            decoy(home, cwd)
            prompt(rpc, 'Show me message 4')
    return home,cwd,src,s,rpc.events

def test_every_compaction_is_the_document_with_no_model_call(hooked):
    home,cwd,src,s,_ = hooked
    auto,manual = compactions(src)
    assert s.summaries()==[] and auto['fromHook'] and manual['fromHook']
    for c in (auto, manual):
        sp = split_compaction(c['summary'])
        assert sp and not sp[0].strip() and f'transcript is `{src}`' in c['summary']
        facts = c['details']['llmsurgery']
        assert facts['tokens']<=facts['budget']==1000 and c['tokensBefore']>0
    assert 'HOOK-TASK-7' in auto['summary'] and '! ls nowhere' in auto['summary']
    assert '## Notes\n\nKEEP-NOTE-OMEGA' in manual['summary']
    assert compact_body(auto['summary']).strip() in manual['summary']   # the earlier document's body, kept verbatim
    assert '(after the earlier document)' in manual['summary']
    assert 'After the compaction: what now?' in manual['summary']
    at = next(n for n,l in enumerate(src.read_text().splitlines(), 1) if manual['id'] in l and '"compaction"' in l)
    turns = [int(n) for n in re.findall(r'^\*\*\* #(\d+)', manual['summary'], re.M)]
    assert turns==sorted(turns) and turns[0]==4 and turns[-1]<at   # the file's lines, not after the earlier document's
    assert not hooks_log(home).exists()

def test_the_next_request_carries_the_document(hooked):
    home,cwd,src,s,_ = hooked
    auto,manual = compactions(src)
    after = request_with(s, 'After the compaction: what now?')
    assert first_user(after['body'])==f'{WRAP}{auto["summary"]}\n</summary>'
    last = request_with(s, 'Show me message 4')
    assert first_user(last['body'])==f'{WRAP}{manual["summary"]}\n</summary>'

def test_the_agents_shell_names_its_session(hooked):
    "The agent's `llmsurgery-compact --show 4` reads the session it runs in, though its directory has a newer one"
    home,cwd,src,s,_ = hooked
    rc,out,err = cli(home, cwd, '--show', '4')
    assert 'say hello' in out   # from outside: the newest, the decoy
    shown = [json.loads(l)['message'] for l in src.read_text().splitlines() if '"toolResult"' in l][-1]
    said = shown['content'][0]['text']
    assert said.startswith('#4\n§ HOOK-TASK-7: count the notes §') and not shown['isError'], said

def test_uninstall_removes_exactly_it(pi, tmp_path):
    home,cwd = tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    ext = agent_dir(home)/'extensions'
    rc,out,err = cli(home, cwd, '--install-hooks', 'pi')
    assert rc==0 and (ext/'llmsurgery.ts').is_file(), err
    assert f'const HOOK = {json.dumps(hook_command("pi"))};' in (ext/'llmsurgery.ts').read_text()
    rc,out,err = cli(home, cwd, '--uninstall-hooks', 'pi')
    assert rc==0 and not ext.exists(), out+err   # the folder the install made goes too
    ext.mkdir(parents=True)
    (ext/'mine.ts').write_text('export default function (pi) {}\n')
    cli(home, cwd, '--install-hooks', 'pi')
    cli(home, cwd, '--install-hooks', 'pi')   # twice is once
    rc,out,err = cli(home, cwd, '--uninstall-hooks', 'pi')
    assert rc==0 and sorted(p.name for p in ext.iterdir())==['mine.ts']
    (ext/'llmsurgery.ts').write_text('// my own\n')
    rc,out,err = cli(home, cwd, '--install-hooks', 'pi')
    assert rc==2 and "not llmsurgery's" in err and (ext/'llmsurgery.ts').read_text()=='// my own\n'

# ---------------------------------------------------------------- failing open

def compacted_without_us(pi, tmp_path, hook, timeout):
    "A `/compact` in Pi whose extension runs `hook` for at most `timeout` s: (compaction entry, model summaries, log)"
    home,cwd = tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    ext = agent_dir(home)/'extensions'
    ext.mkdir(parents=True)
    (ext/'llmsurgery.ts').write_text(host_named('pi').plugin_text(hook, timeout))
    with PiMock([text('First answer.'), text('Second answer.')]) as s:
        pi_config(home, s, context=4000, reserve=1000, keep=20, cwd=cwd)
        with PiRpc(pi, home, cwd) as rpc:
            prompt(rpc, 'FIRST PROMPT')
            prompt(rpc, 'SECOND PROMPT')
            assert rpc.send(dict(type='compact'), timeout=60)['success']
    src, = pi_sessions(home)
    return compactions(src)[-1],len(s.summaries()),hooks_log(home).read_text().splitlines()

def test_a_slow_llmsurgery_leaves_pi_to_compact(pi, tmp_path):
    comp,calls,log = compacted_without_us(pi, tmp_path, 'sleep 20', 1)
    assert (comp['fromHook'], calls>0, len(log))==(False, True, 1) and 'passed its time limit (1 s)' in log[0]

def test_a_failing_llmsurgery_leaves_pi_to_compact(pi, tmp_path):
    comp,calls,log = compacted_without_us(pi, tmp_path, 'echo broken; exit 3', 30)
    assert (comp['fromHook'], calls>0, len(log))==(False, True, 1) and 'printed no JSON' in log[0]

def test_the_hook_job_fails_open(tmp_path):
    "llmsurgery's side: an input it cannot do prints nothing, exits 0 and says why in one line of the log"
    inp = dict(hook_event_name='session_before_compact', session_id='s1', transcript_path=str(tmp_path/'gone.jsonl'),
               first_kept_entry_id='abcd1234')
    p = subprocess.run(hook_command('pi'), shell=True, input=json.dumps(inp), capture_output=True, text=True,
                       env=pi_env(tmp_path), timeout=60)
    line, = hooks_log(tmp_path).read_text().splitlines()
    assert (p.returncode, p.stdout) == (0, '') and 'pi session_before_compact s1: FileNotFoundError' in line

def test_the_hook_job_reads_only_a_regular_file(tmp_path):
    "A FIFO as the transcript, a writer holding it open: refused at once, nothing printed, one line in the log"
    fifo = tmp_path/'t.jsonl'
    os.mkfifo(fifo)
    holder = os.open(fifo, os.O_RDWR|os.O_NONBLOCK)   # a writer that never writes nor closes
    inp = dict(hook_event_name='session_before_compact', session_id='s2', transcript_path=str(fifo),
               first_kept_entry_id='abcd1234')
    try: p = subprocess.run(hook_command('pi'), shell=True, input=json.dumps(inp), capture_output=True, text=True,
                            env=pi_env(tmp_path), timeout=60)
    finally: os.close(holder)
    line, = hooks_log(tmp_path).read_text().splitlines()
    assert (p.returncode, p.stdout) == (0, '') and 'not a regular file' in line, line

# ---------------------------------------------------------------- 3 MB, through the extension

REAL = Path(__file__).parent/'data'/'claude-real'

def test_a_3mb_session_compacts_through_the_extension(pi, tmp_path):
    """A 3 MB session shaped as Pi writes them: the extension's job gives a document within Pi's cap, and `/compact`
    through it writes the document with no model call (bench/pi_compaction.py times it beside Pi's own)"""
    home,cwd = tmp_path/'home',tmp_path/'work'
    cwd.mkdir()
    msgs = [m for f in ('258c7280-ae70-4798-800f-63464d01a85d.jsonl', '8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl')
            for m in read_session(REAL/f, whole=True, warn=False).msgs]
    lines = pi_session_from(msgs, cwd.resolve(), 3_000_000)
    inp = dict(hook_event_name='session_before_compact', session_id='big', transcript_path=str(tmp_path/'big.jsonl'),
               first_kept_entry_id=pi_cut(lines), leaf_id=json.loads(lines[-1])['id'], context_window=200_000,
               reserve_tokens=16_384)
    (tmp_path/'big.jsonl').write_text(''.join(lines))
    p = subprocess.run(hook_command('pi'), shell=True, input=json.dumps(inp), capture_output=True, text=True,
                       env=pi_env(home), timeout=60)   # the job as the extension runs it
    got = json.loads(p.stdout)
    assert got['tokens']<=got['budget']==13_107 and split_compaction(got['summary']), got['tokens']
    rc,out,err = cli(home, cwd, '--install-hooks', 'pi')
    f = agent_dir(home)/'sessions'/'big.jsonl'
    f.parent.mkdir(parents=True)
    f.write_text(''.join(lines))
    with PiMock([]) as s:
        pi_config(home, s, context=200_000, cwd=cwd)
        with PiRpc(pi, home, cwd, '--session', str(f)) as rpc:
            rpc.send(dict(type='get_state'), timeout=120)
            r = rpc.send(dict(type='compact'), timeout=120)
    comp, = compactions(f)
    assert r['success'] and comp['fromHook'] and s.model_requests()==[], r   # in the extension's time: no fallback
    assert len(f.read_bytes())>3_000_000 and split_compaction(comp['summary'])
