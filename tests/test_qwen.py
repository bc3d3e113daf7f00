"""Qwen Code's room without the client, on the sessions the real CLI wrote (tests/data/genuine/qwen): the reader never
fails on records it cannot make sense of (Hypothesis) and keeps the prompt or tool result that triggered an automatic
compression; a Qwen session is told from the other hosts' by its content; the store finds a directory's sessions by
their first record; a continuation written for Qwen reads back as the document; the hooks decide their jobs (through
the gate the installed command carries), stay within Qwen's caps, and never fail the host."""
import io, json, os, shlex, shutil, stat, subprocess, sys, time
from pathlib import Path
from hypothesis import given, settings, strategies as st
from llmsurgery.hosts.base import host_named, hosts
from llmsurgery.hosts.qwen import qw_project_key, qw_resume_records
from llmsurgery.jsonl import jsonl
from llmsurgery.sessions import detect_format, read_session, write_resume, _claims
from llmsurgery.discover import find_session, find_sessions
from llmsurgery.hookstate import summary_facts
from llmsurgery.inject import summary_prefix
from llmsurgery.install import hook_groups
from llmsurgery.hooks import run_hook

qwen = host_named('qwen')
DATA = Path(__file__).parent/'data'/'genuine'/'qwen'
Q1, C, A = DATA/'q1-compressions.jsonl', DATA/'c-manual-and-auto-compaction.jsonl', DATA/'a-one-tool-call.jsonl'
def record_fmt(r): return (_claims(r, hosts()) or [None])[0]

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12))
values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=8), c, max_size=3)),
                      max_leaves=10)
part = st.one_of(st.dictionaries(st.sampled_from(['text', 'thought', 'functionCall', 'functionResponse', 'inlineData']), values, max_size=2),
                 st.builds(lambda i, n, a: dict(functionCall=dict(id=i, name=n, args=a)), st.sampled_from(['c1', 'c2']),
                           st.sampled_from(['run_shell_command', 'edit', 'x']), values),
                 st.builds(lambda i, r: dict(functionResponse=dict(id=i, name='run_shell_command', response=r)),
                           st.sampled_from(['c1', 'c2']), values))
history = st.lists(st.builds(lambda r, ps: dict(role=r, parts=ps), st.sampled_from(['user', 'model']), st.lists(part, max_size=3)),
                   max_size=3)
payload = st.one_of(values, st.builds(lambda h, why: dict(compressedHistory=h, info=dict(triggerReason=why)), history,
                                      st.sampled_from(['manual', 'token_limit', None])))
record = st.builds(lambda u, p, t, sub, ps, pay, extra: dict(uuid=u, parentUuid=p, sessionId='s1', type=t, provenance='x',
                                                             subtype=sub, message=dict(role='user', parts=ps), systemPayload=pay, **extra),
                   st.sampled_from(['a', 'b', 'c', 'd']), st.sampled_from([None, 'a', 'b', 'c', 'zz']),
                   st.sampled_from(['user', 'assistant', 'tool_result', 'system', 'other']),
                   st.sampled_from([None, 'chat_compression', 'ui_telemetry', 'session_artifact_event']),
                   st.one_of(st.lists(part, max_size=3), values), payload,
                   st.dictionaries(st.sampled_from(['toolCallResult', 'usageMetadata', 'cwd']), values, max_size=2))

@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(record, st.dictionaries(st.sampled_from(['uuid', 'parentUuid', 'type', 'message', 'provenance']), values)),
                max_size=10), st.booleans())
def test_the_reader_never_fails(recs, whole):
    res = qwen.read_lines([json.dumps(r) for r in recs] + ['{"torn'], whole=whole)
    assert res.bad_lines >= 1 and len(res.nums) == len(res)
    assert all(m.role in ('user', 'assistant', 'tool') for m in res)

def test_junk_costs_only_itself():
    lines = Q1.read_bytes().splitlines()
    junk = [*lines[:5], b'{"uuid": 3, "type": [], "provenance": 1}', b'[1, 2]', *lines[5:]]
    a, b = qwen.read_lines(lines, whole=True), qwen.read_lines(junk, whole=True)
    assert [m.text for m in a] == [m.text for m in b] and b.bad_lines == 2 and a.summary == b.summary

def test_qwen_records_are_told_from_the_others():
    assert {detect_format(p) for p in (Q1, C, A)} == {'qwen'}
    genuine = Path(__file__).parent/'data'/'genuine'
    assert detect_format(genuine/'claude_bash.jsonl') == 'claude' and detect_format(genuine/'codex_exec.jsonl') == 'codex'
    base = dict(uuid='u', parentUuid=None, sessionId='s', type='user')
    assert record_fmt(base | dict(message=dict(role='user', content='hi'))) == 'claude'
    assert record_fmt(base | dict(message=dict(role='user', parts=[]))) == 'qwen'
    assert record_fmt(dict(type='user', message='not a dict', sessionId='s')) == 'claude'   # no crash on a bad message
    assert qwen.read_lines(genuine.joinpath('claude_bash.jsonl').read_bytes().splitlines()).bad_lines > 0   # not its records

def test_the_prompt_that_triggered_an_automatic_compression_is_kept():
    "Qwen's own replay loses it: the compression's history ends with its fixed reply; ours has it after the summary"
    lines = C.read_bytes().splitlines()
    comp = json.loads(lines[17])
    assert comp['systemPayload']['info']['triggerReason'] == 'token_limit'
    assert 'What was the value?' not in json.dumps(comp['systemPayload']['compressedHistory'])
    now = qwen.read_lines(lines)
    assert [m.text for m in now][:3] == [f'{summary_prefix}; Qwen Code compressed it into this snapshot.\n\n'
                                          '<state_snapshot>MOCK-SNAPSHOT-COLD-AUTO: data.txt holds beta</state_snapshot>',
                                          'What was the value?', 'After auto-compaction: the value is beta.']
    assert now.nums[:3] == [18, 15, 20] and 'UPS-CTX' not in json.dumps([m.text for m in now])   # the hook's context: the host's
    whole = qwen.read_lines(lines, whole=True)
    assert [m.text for m in whole if m.role == 'user'].count('What was the value?') == 1 and whole.nums == sorted(whole.nums)

def test_a_tool_result_that_triggered_one_is_kept():
    now = qwen.read(Q1)
    assert [(n, m.role) for n, m in zip(now.nums, now)][:3] == [(41, 'user'), (41, 'assistant'), (39, 'tool')]
    call, res = now[1].content[0], now[2].content[0]
    assert (call.name, call.id, res.id, res.text) == ('Bash', 'call_mock010', 'call_mock010', '5')
    assert now.summary == '<state_snapshot>MOCK-SNAPSHOT-3: the work so far</state_snapshot>' and now.host_toks == 1000
    assert qwen.read_start(Q1) == (0, 1) and [m.text for m in read_session(Q1).msgs] == [m.text for m in now]

def test_compacted_part_leaves_out_what_stayed_live():
    part, kept = qwen.compacted_part(C)
    texts = [m.text for m in part]
    assert 'What was the value?' not in texts and 'Remember the value, then tell me.' in texts
    assert kept == '<state_snapshot>MOCK-SNAPSHOT-COLD-AUTO: data.txt holds beta</state_snapshot>'
    assert qwen.compacted_part(A) == ([], '')

def chain(sid, cwd, *texts):
    "A small Qwen session file of directory `cwd` in the store, its prompts `texts`"
    recs, parent = [], None
    for i, t in enumerate(texts):
        recs.append(dict(uuid=f'u{i}', parentUuid=parent, sessionId=sid, timestamp='2026-12-05T13:00:00.000Z', type='user',
                         provenance='real_user', cwd=str(cwd), message=dict(role='user', parts=[dict(text=t)])))
        parent = f'u{i}'
    chats = qwen.chats(cwd)
    chats.mkdir(parents=True, exist_ok=True)
    (chats/f'{sid}.jsonl').write_text(jsonl(recs))
    return chats/f'{sid}.jsonl'

SID1, SID2 = '6ca2d88f-3d58-4198-b9ef-9ec05c612f94', 'd6bb6bbd-8664-464e-bd40-8b5faa766876'

def test_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv('HOME', str(tmp_path))
    for k in ('QWEN_HOME', 'QWEN_RUNTIME_DIR', 'QWEN_CODE_SESSION_ID'): monkeypatch.delenv(k, raising=False)
    work, twin = tmp_path/'my work', tmp_path/'my-work'   # one key for both
    work.mkdir(); twin.mkdir()
    assert qw_project_key(work) == qw_project_key(twin)
    mine, theirs = chain(SID1, work, 'mine'), chain(SID2, twin, 'theirs')
    (mine.parent/'notes.jsonl').write_text('{}\n'); (mine.parent/'archive').mkdir()
    shutil.copy(mine, mine.parent/'archive'/f'{SID2}.jsonl')
    assert qwen.session_files(work) == [mine] and qwen.session_files(twin) == [theirs] and len(qwen.session_files()) == 2
    assert qwen.session_id(mine) == SID1 and find_session(SID1[:6], host='qwen') == mine
    assert find_session(cwd=work, host='qwen') == mine and find_sessions(work, 'qwen')[0].first_prompt == 'mine'
    monkeypatch.setenv('QWEN_CODE_SESSION_ID', SID2)
    assert find_session(host='qwen') == theirs   # in the agent's shell: its own session, by the variable Qwen sets
    (tmp_path/'.qwen'/'settings.json').write_text(json.dumps({'advanced': {'runtimeOutputDir': str(tmp_path/'rt')}}))
    assert qwen.session_files(work) == [] and qwen.places(work).startswith(str(tmp_path/'rt'/'projects'))
    monkeypatch.setenv('QWEN_RUNTIME_DIR', str(tmp_path/'other'))
    assert qwen.places().startswith(str(tmp_path/'other'))

def test_a_continuation_reads_back_as_the_document(tmp_path, monkeypatch):
    monkeypatch.setenv('QWEN_HOME', str(tmp_path/'.qwen'))
    monkeypatch.delenv('QWEN_RUNTIME_DIR', raising=False)
    work = tmp_path/'w'; work.mkdir()
    s = read_session(Q1)
    doc = f'{summary_prefix}. DOC-MARKER'
    path, cmd = write_resume(s, doc, cwd=work, to='qwen')
    assert cmd.argv[:2] == ['qwen', '--resume'] and path.parent == qwen.chats(work) and stat.S_IMODE(path.stat().st_mode) == 0o600
    r, = [json.loads(l) for l in path.read_text().splitlines()]
    assert (r['sessionId'], r['cwd'], r['parentUuid'], r['subtype']) == (cmd.argv[2], str(work.resolve()), None, 'chat_compression')
    assert r['systemPayload']['info']['originalTokenCount'] == s.host_toks and qwen.session_id(path) == cmd.argv[2]
    resumed = lambda p: dict(hook_event_name='SessionStart', source='resume', transcript_path=str(p))
    assert qwen.hook_job(resumed(path)) is None and qwen.hook_job(resumed(Q1)) == 'state'   # nothing compacted in ours

def test_the_summarisers_facts_fit_qwens_cap(tmp_path):
    "However long the prompts (and with `<`, which Qwen writes as `&lt;`), the facts fit Qwen's 4,000 characters"
    facts = summary_facts(Q1, qwen)
    assert 'Commits: 1a2b3c4 Fix add: it subtracted' in facts and qwen.context_len(facts) <= qwen.facts_cap == 4000
    big = tmp_path/f'{SID1}.jsonl'
    big.write_text(jsonl([dict(uuid=f'u{i}', parentUuid=f'u{i-1}' if i else None, sessionId=SID1, type='user',
        provenance='real_user', cwd='/w', message=dict(role='user', parts=[dict(text=f'<{i}> ' + 'é<x>' * 3000)])) for i in range(3)]))
    facts = summary_facts(big, qwen)
    assert qwen.context_len(facts) <= qwen.facts_cap and 'Task' in facts and 'Latest request' in facts
    assert len(facts) < qwen.facts_cap - 1000   # each `<` counts four: the plain length is well within

def gate(event):
    "The gate the installed hook command of `event` carries: its words after the host's name"
    argv = shlex.split(hook_groups(qwen)[event]['hooks'][0]['command'])
    return argv[argv.index('llmsurgery.hooks')+2:]

def hook(event, tmp, **kw):
    "Run llmsurgery's Qwen hook on `event` in process, with its installed gate: `(status, stdout, stderr, log)`"
    out, err, log = io.StringIO(), io.StringIO(), tmp/'hooks.log'
    rc = run_hook('qwen', io.BytesIO(json.dumps(dict(hook_event_name=event, **kw)).encode()), out, err, log, gate(event))
    return rc, out.getvalue(), err.getvalue(), log.read_text() if log.exists() else ''

def test_the_hooks_jobs(tmp_path, monkeypatch):
    monkeypatch.setenv('QWEN_HOME', str(tmp_path/'.qwen')); monkeypatch.setenv('XDG_STATE_HOME', str(tmp_path/'state'))
    monkeypatch.delenv('QWEN_RUNTIME_DIR', raising=False)
    work = tmp_path/'w'; work.mkdir()
    assert gate('SessionStart') == ['--when', 'source=compact', '--new', '"subtype":"chat_compression"']
    rc, out, err, log = hook('PreCompact', tmp_path, trigger='auto', transcript_path=str(Q1), cwd=str(work))
    said = json.loads(out)['hookSpecificOutput']
    assert (rc, said['hookEventName'], log) == (0, 'PreCompact', '') and 'Commits: 1a2b3c4' in said['additionalContext']
    rc, out, err, log = hook('SessionStart', tmp_path, source='compact', transcript_path=str(Q1), cwd=str(work))
    state = json.loads(out)['hookSpecificOutput']['additionalContext']
    assert rc == 0 and state.startswith("llmsurgery's state of the part") and qwen.context_len(state) <= qwen.context_cap
    assert hook('SessionStart', tmp_path, source='resume', transcript_path=str(Q1))[1] == out   # a compressed session resumed
    assert hook('SessionStart', tmp_path, source='startup', transcript_path=str(A))[:2] == (0, '')
    rc, out, err, log = hook('UserPromptExpansion', tmp_path, command_name='llmsurgery', transcript_path=str(Q1), cwd=str(work))
    sid = err.split('type /resume ')[1].split()[0]
    assert rc == 2 and out == '' and err.startswith('llmsurgery compacted this session with no model call: type /resume ')
    assert f'transcript is `{Q1}`' in read_session(qwen.chats(work)/f'{sid}.jsonl').summary
    assert hook('UserPromptExpansion', tmp_path, command_name='review', transcript_path=str(Q1))[:3] == (0, '', '')
    rc, out, err, log = hook('PreCompact', tmp_path, transcript_path=str(tmp_path/'gone.jsonl'))
    assert (rc, out, err) == (0, '', '') and 'qwen PreCompact' in log and 'FileNotFoundError' in log

def test_continued_across_hosts(tmp_path, monkeypatch):
    """`--to qwen` from a genuine session of each other host, and `--to` each host that keeps files from Qwen: each new
    session reads back as its document (opencode adds a session only through its own binary: tests/test_opencode.py)"""
    for k, v in dict(HOME=tmp_path, QWEN_HOME=tmp_path/'.qwen', CLAUDE_CONFIG_DIR=tmp_path/'.claude', CODEX_HOME=tmp_path/'.codex',
                     GEMINI_CLI_HOME=tmp_path, XDG_DATA_HOME=tmp_path/'data').items(): monkeypatch.setenv(k, str(v))
    monkeypatch.delenv('QWEN_RUNTIME_DIR', raising=False)
    work = tmp_path/'w'; work.mkdir()
    genuine = Path(__file__).parent/'data'/'genuine'
    (tmp_path/'data'/'opencode').mkdir(parents=True)
    shutil.copy(genuine/'opencode.db', tmp_path/'data'/'opencode'/'opencode.db')
    oc, = host_named('opencode').session_files()
    for src in (genuine/'claude_bash.jsonl', genuine/'codex_exec.jsonl', genuine.parent/'gemini'/'gemini_compressed.jsonl', oc):
        s = read_session(src)
        path, cmd = write_resume(s, f'{summary_prefix}. FROM {s.fmt}', cwd=work, to='qwen')
        assert cmd.argv[:2] == ['qwen', '--resume'] and path.parent == qwen.chats(work) and detect_format(path) == 'qwen'
    s = read_session(Q1)
    for to in ('claude', 'codex', 'gemini'):
        path, cmd = write_resume(s, f'{summary_prefix}. FROM QWEN', cwd=work, to=to)
        assert detect_format(path) == to and read_session(path).summary.endswith('FROM QWEN')

def test_a_2gb_transcript_ends_each_hook_by_its_own_bound(tmp_path):
    "2 GB with no newline: each hook that reads a session, run as Qwen runs it, exits 0 at once, adds nothing, logs one line"
    big = tmp_path/'big.jsonl'
    with open(big, 'wb') as f: f.truncate(2<<30)
    with open(big, 'r+b') as f: f.seek((2<<30)-40); f.write(b'"subtype":"chat_compression"')   # the gate lets it pass
    home = tmp_path/'home'
    env = {k: v for k, v in os.environ.items() if k in ('PATH', 'LANG')} | dict(HOME=str(home), XDG_STATE_HOME=str(home/'state'))
    events = [('SessionStart', dict(source='compact')), ('SessionStart', dict(source='resume')), ('PreCompact', dict(trigger='auto'))]
    for i, (ev, kw) in enumerate(events, 1):
        argv = shlex.split(hook_groups(qwen)[ev]['hooks'][0]['command'])
        t = time.monotonic()
        p = subprocess.run([sys.executable, *argv[1:]], input=json.dumps(dict(hook_event_name=ev, transcript_path=str(big), **kw)),
                           capture_output=True, text=True, env=env, timeout=60)
        secs, log = time.monotonic()-t, (home/'state'/'llmsurgery'/'hooks.log').read_text().splitlines()
        assert (p.returncode, p.stdout, p.stderr) == (0, '', '') and secs < 5, (ev, p.stderr[-2000:], secs)
        assert len(log) == i and 'more than a hook reads' in log[-1], log
