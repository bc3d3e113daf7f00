"""`--search` across every host's sessions, on the real and the genuine sessions in a sandboxed store per host.
- The hosts come from the registry: each registered host's store is under a temporary HOME (every host's own variable
  for its folder unset), filled with the genuine sessions its client wrote where tests/data has them (`PLACE`), else
  with a session llmsurgery writes for it (`Host.write_resume`).
- A phrase of a typed prompt, an assistant reply and a tool result of each host's genuine sessions is found, and
  `--show N SESSION` of the hit prints it.
- The index keeps up: a session that grew is read on from where it stopped (its new text found), a deleted one is
  dropped, a new one found; with nothing changed no host's module is imported.
- The index is private (0600), never trusted when it is not one or is damaged, safe under two searches at once, and it
  never writes a host's store."""
import hashlib, json, os, re, shutil, sqlite3, stat, subprocess, sys
from contextlib import closing
from pathlib import Path
import pytest
from aidialog.msg_parts import Text
from hostkit import EXE, sandbox_env
from llmsurgery import search as S
from llmsurgery.hosts.base import hosts, host_named
from llmsurgery.hosts.claude import project_dirname
from llmsurgery.hosts.codex import rollout_path
from llmsurgery.sessions import read_session
from llmsurgery.recall import recall_items
from llmsurgery.state import typed

DATA = Path(__file__).resolve().parent/'data'
REAL = DATA/'claude-real'
GENUINE = DATA/'genuine'
WORK = '/tmp/llmsurgery-genuine-q35wcjvg/project'   # where the genuine Claude Code and Codex sessions ran
REAL_ID = '258c7280-ae70-4798-800f-63464d01a85d'

# ---------------------------------------------------------------- a store of every registered host

def cc_session(src, sid=None, work=WORK):
    "A copy of Claude Code session file `src` in its store, named by its id"
    d = host_named('claude').home()/'projects'/project_dirname(work)
    d.mkdir(parents=True, exist_ok=True)
    sid = sid or json.loads(next(l for l in src.read_text().splitlines() if '"sessionId"' in l))['sessionId']
    shutil.copyfile(src, p := d/f'{sid}.jsonl')
    return p

def cx_session(src):
    "A copy of Codex rollout `src` in its store"
    p = rollout_path(host_named('codex').home(), json.loads(src.read_text().splitlines()[0])['payload']['id'])
    p.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, p)

def gm_session(src):
    "A copy of Gemini CLI log `src` in its store"
    (chats := host_named('gemini').home()/'tmp'/'project'/'chats').mkdir(parents=True)
    shutil.copyfile(src, chats/'session-2026-12-04T03-23-62f47a11.jsonl')

def oc_store(src):
    "A copy of opencode's database `src` as its store"
    (d := host_named('opencode').home()).mkdir(parents=True)
    shutil.copyfile(src, d/'opencode.db')

def pi_session(src):
    "A copy of Pi session file `src` in its store, in the folder of the directory its header names"
    d = host_named('pi').project_dir(json.loads(src.read_text().splitlines()[0])['cwd'])
    d.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, d/src.name)

def qw_session(src):
    "A copy of Qwen Code session file `src` in its store, in the folder of the directory its first record names"
    first = json.loads(src.read_text().splitlines()[0])
    (d := host_named('qwen').chats(first['cwd'])).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, d/f"{first['sessionId']}.jsonl")

def cp_session(src):
    "A copy of Copilot CLI session folder `src` (its `events.jsonl` and the rest) in its store"
    shutil.copytree(src, host_named('copilot').home()/'session-state'/src.name)

def claw_store(src):
    "A copy of OpenClaw's database `src` as its agent `main`'s store"
    (d := host_named('openclaw').home()/'agents'/'main'/'agent').mkdir(parents=True)
    shutil.copyfile(src, d/'openclaw-agent.sqlite')

def cl_session(src):
    "A copy of Cline session folder `src` (its transcript, manifest and sidecar) in its store, named by its id"
    sid = next(src.glob('*.messages.json')).name.split('.')[0]
    shutil.copytree(src, host_named('cline').sessions()/sid)

PLACE = {   # the genuine sessions of each host tests/data holds, put where the host keeps them
    'claude': lambda: [cc_session(f, f.stem if f.parent==REAL and '-' in f.stem else None)
                       for f in (REAL/f'{REAL_ID}.jsonl', REAL/'tool_heavy.jsonl', *sorted(GENUINE.glob('claude_*.jsonl')))],
    'codex': lambda: [cx_session(f) for f in sorted(GENUINE.glob('codex_*.jsonl'))],
    'gemini': lambda: gm_session(DATA/'gemini'/'gemini_compressed.jsonl'),
    'opencode': lambda: oc_store(GENUINE/'opencode.db'),
    'pi': lambda: [pi_session(f) for f in sorted((GENUINE/'pi').glob('*.jsonl'))],
    'qwen': lambda: [qw_session(f) for f in sorted((GENUINE/'qwen').glob('*.jsonl'))],
    'copilot': lambda: [cp_session(d) for d in sorted((GENUINE/'copilot').glob('*/*')) if d.is_dir()],
    'openclaw': lambda: claw_store(DATA/'openclaw-genuine'/'openclaw-agent.sqlite'),
    'cline': lambda: [cl_session(d) for d in sorted((GENUINE/'cline').iterdir()) if d.is_dir()]}

def written_word(name): return f'quokka{name}'   # a word only the session llmsurgery writes for host `name` holds

def write_one(h, work):
    "A session llmsurgery writes into host `h`'s store, continuing a genuine one from a document that names a word"
    s = read_session(GENUINE/'claude_bash.jsonl', warn=False)
    h.write_resume(s, f'Continue: the {written_word(h.name)} ledger is in notes.txt.', cwd=str(work))

def make_store(home):
    "Every registered host's store under `home` (this process's environment pointing there): `{host: how it was filled}`"
    (work := home/'work').mkdir(parents=True, exist_ok=True)
    filled = {}
    for h in hosts():
        try: (PLACE[h.name] if h.name in PLACE else lambda: write_one(h, work))()
        except Exception as e: filled[h.name] = None if h.name not in PLACE else e   # it can't write one here
        else: filled[h.name] = 'genuine' if h.name in PLACE else 'written'
    assert not [e for e in filled.values() if isinstance(e, Exception)], filled
    return filled

def env_of(home):
    "The environment of a user whose HOME is `home`: each host's store and the index under it"
    own = {h.home_var for h in hosts()}
    return {k: v for k,v in sandbox_env(home).items() if k not in own or k.startswith('XDG_')}

def enter(mp, env):
    "This process's environment as `env` for the variables that place stores and the index"
    for k in {h.home_var for h in hosts() if h.home_var} | {k for k in env if k=='HOME' or k.startswith('XDG_')}:
        if k in env: mp.setenv(k, env[k])
        else: mp.delenv(k, raising=False)

def cli(env, *args, cwd=None, timeout=300):
    "`llmsurgery-compact ARGS` in environment `env`: (returncode, stdout, stderr)"
    p = subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    return p.returncode,p.stdout,p.stderr

@pytest.fixture
def user(tmp_path, monkeypatch):
    "`(home, env)`: a store of every host under a temporary HOME, this process's environment pointing there too"
    home = tmp_path/'home'
    env = env_of(home)
    enter(monkeypatch, env)
    make_store(home)
    return home,env

@pytest.fixture(scope='module')
def shared(tmp_path_factory):
    "A store of every host and its index, built once by the command, for the tests that only read"
    home = tmp_path_factory.mktemp('shared')/'home'
    env = env_of(home)
    with pytest.MonkeyPatch.context() as mp:
        enter(mp, env)
        filled = make_store(home)
        rc,_,err = cli(env, '--reindex')
        assert rc==0 and err.startswith('indexed '), err
        yield home,env,S.store_sessions(),filled

# ---------------------------------------------------------------- every host's words found, and shown

_tok = re.compile(r'[^\W_]+')   # a token as the index's tokenizer cuts one: letters and digits

def samples(info):
    "`{kind: (label, words)}`: session `info`'s first typed prompt, reply and tool result of 2 words or more, 4 words"
    r = recall_items(read_session(info.path, whole=True, warn=False))
    out = {}
    for label,m in r.items:
        kind = ('prompt' if typed(m) else None) if m.role=='user' else {'assistant': 'reply', 'tool': 'result'}.get(m.role)
        if kind=='reply' and not any(type(p) is Text and p.text.strip() for p in m.content): continue   # a call alone
        words = _tok.findall(r.render(m).removeprefix('§ ').removeprefix('» ').removeprefix('> '))
        if kind and kind not in out and len(words)>=2: out[kind] = (str(label), words[:4])
    return out

def test_every_host_is_in_the_store(shared):
    _,_,infos,filled = shared
    assert set(PLACE) <= set(filled) and {i.host for i in infos} == {n for n,how in filled.items() if how}

@pytest.mark.parametrize('host', [h.name for h in hosts()])
def test_a_prompt_a_reply_and_a_result_of_each_host_are_found_and_shown(shared, host):
    home,env,infos,filled = shared
    if not filled[host]: pytest.skip(f'no genuine session of {host} in tests/data, and it cannot write one here')
    if filled[host]=='written':   # llmsurgery's session in its store: the document it opens with
        hits,_ = S.search(written_word(host), host=host)
        assert len(hits)==1 and hits[0].host==host, hits
        rc,out,err = cli(env, '--show', hits[0].label, hits[0].sid)
        assert rc==0 and written_word(host) in out, (out, err)
        return
    seen = set()
    for info in [i for i in infos if i.host==host]:
        for kind,(label,words) in samples(info).items():
            hits,_ = S.search('"' + ' '.join(words) + '"', host=host, n=500)
            assert (info.id, label) in {(h.sid, h.label) for h in hits}, (info.path, kind, label, words)
            rc,out,err = cli(env, '--show', label, info.id)
            assert rc==0 and re.search(r'[\W_]+'.join(map(re.escape, words)), out), (info.id, label, words, out[:300], err)
            seen.add(kind)
    assert seen == {'prompt', 'reply', 'result'}, seen

def test_the_command_prints_one_line_a_hit_and_how_to_see_it(shared):
    home,env,_,_ = shared
    rc,out,err = cli(env, '--search', 'notes.txt')
    assert (rc, err) == (0, '')
    *hits,last = out.splitlines()
    assert {h.split()[0] for h in hits} >= {'claude', 'codex', 'opencode'} and all('«notes' in h for h in hits)
    host,sid,day,cwd,num,*_ = hits[0].split()
    assert re.fullmatch(r'\d{4}-\d\d-\d\d', day) and num.startswith('#')
    assert last.startswith('see one whole: llmsurgery-compact --show N SESSION')
    assert f'llmsurgery-compact --show {num[1:]} {sid})' in last
    rc,shown,_ = cli(env, '--show', num[1:], sid)
    assert rc==0 and shown.startswith(num+'\n') and 'notes.txt' in shown

def test_a_phrase_a_prefix_alternatives_and_a_word_left_out(shared):
    def found(q, **kw): return {(h.sid, h.label) for h in S.search(q, n=500, **kw)[0]}
    hits,_ = S.search('"terminal annotations"', host='claude', n=500)
    assert hits and all(re.search(r'«terminal annotations»', h.snippet, re.I) for h in hits)
    assert all(h.sid==REAL_ID for h in hits)
    assert {(h.sid, h.label) for h in hits} <= found('annotat*')
    assert found('shopping') | found('parser') <= found('shopping OR parser')
    assert not {h.label for h in S.search('notes.txt -shopping', n=500)[0] if h.host=='opencode'} & {'1', '7'}

def test_narrowed_to_a_directory_and_a_host(shared):
    home,env,_,_ = shared
    rc,out,err = cli(env, '--search', 'notes.txt', '--project', WORK)
    assert rc==0 and {l.split()[0] for l in out.splitlines()[:-1]} == {'claude', 'codex'}
    (away := home.parent/'elsewhere').mkdir(exist_ok=True)   # no session of any host ran here
    rc,out,err = cli(env, '--search', 'notes.txt', '--here', cwd=away)
    assert (rc, out) == (1, '') and err.startswith('no message of any session matches')
    rc,out,err = cli(env, '--search', 'notes.txt', '--host', 'codex')
    assert rc==0 and {l.split()[0] for l in out.splitlines()[:-1]} == {'codex'}

def test_bad_usage_is_one_line(shared):
    home,env,_,_ = shared
    for args,msg in [(('--search', '§ --'), 'holds no word'), (('--search', 'x', '--host', 'nope'), "unknown host 'nope'"),
                     (('--search', 'x', '--list'), 'not --list'), (('--search', 'x', '--max-tokens', '5'), 'not --max-tokens'),
                     (('--search', 'x', '--all'), 'not --all'), (('--here',), 'give --search WORDS'),
                     (('--search', 'x', '--here', '--project', '/tmp'), '--here and --project exclude each other'),
                     (('--search', 'x', str(home/'nope.ipynb')), 'no such dialog notebook')]:
        rc,out,err = cli(env, *args)
        assert rc==2 and out=='' and msg in err and len(err.splitlines())==1, (args, err)

def test_dialogs_named_are_searched(shared):
    home,env,_,_ = shared
    rc,out,err = cli(env, '--search', 'latex', DATA/'solveit-real')
    assert rc==0 and all(l.split()[0]=='dialog' for l in out.splitlines()[:-1]), err
    label,path = re.search(r'\(the first: llmsurgery-compact --show (\S+) (\S+)\)', out.splitlines()[-1]).groups()
    rc,shown,_ = cli(env, '--show', label, path)
    assert rc==0 and 'latex' in shown.lower()

# ---------------------------------------------------------------- keeping up with the stores

def claude_turn(sid, prompt, reply, n):
    "A typed prompt and its reply, as Claude Code's records"
    base = dict(sessionId=sid, cwd=WORK, timestamp=f'2026-12-05T10:0{n}:00.000Z', isSidechain=False)
    said = dict(id=f'msg_{n}', role='assistant', model='claude', content=[dict(type='text', text=reply)])
    return ''.join(json.dumps(r)+'\n' for r in [
        dict(base, type='user', uuid=f'u{n}', message=dict(role='user', content=prompt)),
        dict(base, type='assistant', uuid=f'a{n}', message=said)])

def spy(monkeypatch):
    "The `(session, start)` of each session read into the index from now on"
    calls,read_job = [],S.read_job
    def spied(job):
        calls.append((job.sid, job.start))
        return read_job(job)
    monkeypatch.setattr(S, 'read_job', spied)
    return calls

def cc_file(sid): return next((host_named('claude').home()/'projects').rglob(f'{sid}*.jsonl'))

def test_a_grown_session_is_read_on_and_its_new_words_found(user, monkeypatch):
    home,env = user
    S.search('anything')
    p = cc_file(REAL_ID)
    lines,size = len(p.read_bytes().splitlines()),p.stat().st_size
    with open(p, 'a') as f: f.write(claude_turn(REAL_ID, 'Where is the zanzibar config?', 'The zanzibar config is in etc.', 1))
    calls = spy(monkeypatch)
    hits,_ = S.search('zanzibar')
    assert sorted((h.sid, h.label) for h in hits) == [(REAL_ID, str(lines+1)), (REAL_ID, str(lines+2))]
    (sid,start), = calls
    assert sid==REAL_ID and start is not None and 0<start[0]<size   # read on, from its last message's line
    rc,out,_ = cli(env, '--show', str(lines+2), REAL_ID[:8])
    assert rc==0 and 'The zanzibar config is in etc.' in out
    with open(p, 'a') as f: f.write(claude_turn(REAL_ID, 'And the backup?', 'The zanzibar backup is on tape.', 2))
    assert [h.label for h in S.search('zanzibar backup')[0]] == [str(lines+4)]
    assert [h.label for h in S.search('"is in etc"')[0]] == [str(lines+2)]   # what was read before is there once

def test_a_log_written_as_it_is_read_is_read_on_from_its_last_message(user, monkeypatch):
    "Where the log grew under the read, its end read is not known: its last message's line is counted on from the start"
    home,env = user
    S.search('anything')
    p = cc_file(REAL_ID)
    lines = len(p.read_bytes().splitlines())
    with open(p, 'a') as f: f.write(claude_turn(REAL_ID, 'Is the wombat fed?', 'The wombat is fed.', 1))
    read = host_named('claude').read
    def growing(path, *a, **kw):   # the host writes a turn as the index reads its log
        log = read(path, *a, **kw)
        if Path(path)==p and 'wallaby' not in p.read_text():
            with open(p, 'a') as f: f.write(claude_turn(REAL_ID, 'And the wallaby?', 'The wallaby is fed.', 2))
        return log
    monkeypatch.setattr(host_named('claude'), 'read', growing)
    assert sorted(h.label for h in S.search('wombat')[0]) == [str(lines+1), str(lines+2)]
    calls = spy(monkeypatch)
    assert sorted(h.label for h in S.search('wallaby')[0]) == [str(lines+3), str(lines+4)]
    (sid,(at,line)), = calls
    assert line==lines+2 and b'The wombat is fed.' in p.read_bytes()[at:].split(b'\n', 1)[0]   # the reply's own line
    assert sorted(h.label for h in S.search('wombat')[0]) == [str(lines+1), str(lines+2)]   # each message once

def test_a_grown_log_of_a_host_that_rewrites_is_read_again_whole(user, monkeypatch):
    home,env = user
    assert not host_named('gemini').appends   # its `$set` and `$rewindTo` records rewrite what came before
    S.search('anything')
    p, = host_named('gemini').home().rglob('session-*.jsonl')
    rec = dict(id='new-1', timestamp='2026-12-05T10:00:00.000Z', type='user', content=[dict(text='Is the kookaburra test green?')])
    with open(p, 'a') as f: f.write(json.dumps(rec)+'\n')
    calls = spy(monkeypatch)
    hits,_ = S.search('"kookaburra test"')
    assert [h.host for h in hits]==['gemini'] and [c[1] for c in calls]==[None]

def test_new_and_deleted_sessions(user):
    home,env = user
    assert S.search('shopping', host='claude')[0]
    for p in (host_named('claude').home()/'projects').rglob('*.jsonl'):
        if 'shopping' in p.read_text(): p.unlink()
    assert not S.search('shopping', host='claude')[0]
    new = 'aaaabbbb-0000-4000-8000-000000000000'
    cc_session(GENUINE/'claude_bash.jsonl', sid=new, work='/elsewhere/new project')
    hits,_ = S.search('shopping', host='claude')
    assert {(h.sid, h.cwd) for h in hits}=={(new, WORK)}
    shutil.rmtree(host_named('codex').home())
    assert not S.search('notes.txt', host='codex')[0]

def test_a_session_in_a_project_folder_that_was_empty(user):
    "A project folder with no session is watched too: the first session made in it is found"
    home,env = user
    empty = host_named('claude').home()/'projects'/project_dirname('/work/quiet')
    empty.mkdir()
    assert not S.search('shopping', host='claude', cwd='/work/quiet')[0]
    shutil.copyfile(GENUINE/'claude_bash.jsonl', empty/'bbbbcccc-0000-4000-8000-000000000000.jsonl')
    assert [h.sid for h in S.search('shopping', host='claude')[0]].count('bbbbcccc-0000-4000-8000-000000000000')==1

def test_nothing_changed_imports_no_host(user):
    "A search on a current index stats files: the hosts' modules, a quarter of a second to import, stay out"
    home,env = user
    assert S.search('shopping')[0]
    code = ('import sys; from llmsurgery import search as S; hits,_ = S.search("shopping"); '
            'print(len(hits), sorted(m for m in sys.modules if m.startswith("llmsurgery.")))')
    def mods(**kw):
        return subprocess.run([sys.executable, '-c', code], env=env|kw, capture_output=True, text=True, check=True).stdout
    mods()   # the index current in this environment
    n,loaded = mods().split(' ', 1)
    assert int(n)>0 and eval(loaded)==['llmsurgery.search']
    cc = host_named('claude').home()
    (cc/'file-history'/'x').mkdir(parents=True)   # the host's other folders are not watched
    (cc/'settings.json').write_text('{}')
    assert 'llmsurgery.hosts' not in mods()
    (cc/'projects'/'-new').mkdir()   # a new project folder: the hosts are asked again
    assert 'llmsurgery.hosts.claude' in mods()
    assert 'llmsurgery.hosts' not in mods()
    (extra := home/'extra-packages').mkdir()   # another Python, whose packages may add hosts: they are asked again
    assert 'llmsurgery.hosts.claude' in mods(PYTHONPATH=str(extra))

def test_another_store_in_another_environment(user, tmp_path, monkeypatch):
    "The stores are where the environment says: the index follows it"
    home,env = user
    h = host_named('claude')
    assert S.search('shopping', host='claude')[0]
    monkeypatch.setenv(h.home_var, str(tmp_path/'other'))
    assert not S.search('shopping', host='claude')[0]

# ---------------------------------------------------------------- the index itself

def digests():
    "`{path: sha256}` of every file of every host's store"
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for h in hosts() for p in sorted(h.home().rglob('*')) if p.is_file()}

def test_private_and_the_stores_untouched(user):
    home,env = user
    before = digests()
    for p in before: p.chmod(0o444)   # read-only: the index never needs to write them
    rc,out,err = cli(env, '--search', 'notes.txt')
    assert rc==0, err
    assert digests()==before and sorted(p.name for p in host_named('opencode').home().iterdir())==['opencode.db']
    d = home/'.cache'/'llmsurgery'/'search'
    assert stat.S_IMODE(d.stat().st_mode)==0o700
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in d.iterdir()} == {n: '0o600' for n in os.listdir(d)}
    assert {'index.db', 'lock'} <= set(os.listdir(d))

@pytest.mark.parametrize('damage', ['garbage', 'foreign', 'pages', 'older'])
def test_an_index_that_is_not_one_is_rebuilt(user, damage):
    home,env = user
    want = [(h.sid, h.label) for h in S.search('shopping')[0]]
    p = S.index_dir()/'index.db'
    if damage=='garbage': p.write_bytes(os.urandom(8192))
    if damage=='foreign':
        for f in p.parent.glob('index.db*'): f.unlink()
        with closing(sqlite3.connect(p)) as c:
            c.execute('create table sessions(x)'); c.execute("insert into sessions values ('theirs')"); c.commit()
    if damage=='pages':   # its header intact, the pages after it not
        with open(p, 'r+b') as f: f.seek(4096); f.write(os.urandom(p.stat().st_size-4096))
    if damage=='older':
        with closing(sqlite3.connect(p)) as c: c.execute(f'pragma user_version={S.schema-1}')
    assert [(h.sid, h.label) for h in S.search('shopping')[0]] == want
    assert S.trusted(p)
    with closing(sqlite3.connect(p)) as c: assert c.execute('pragma integrity_check').fetchone()==('ok',)

def test_two_searches_at_once(user):
    "Two processes building and refreshing the index at the same moment: both answer, and the index is whole"
    home,env = user
    code = 'import sys; from llmsurgery import search as S; print(len(S.search(sys.argv[1], n=500)[0]))'
    log = cc_file('7824a253')
    for round_ in range(2):
        ps = [subprocess.Popen([sys.executable, '-c', code, 'notes.txt'], env=env, stdout=subprocess.PIPE, text=True)
              for _ in range(2)]
        outs = [p.communicate(timeout=300)[0] for p in ps]
        assert [p.returncode for p in ps]==[0, 0] and outs[0]==outs[1] and int(outs[0])>0
        with open(log, 'a') as f: f.write(claude_turn(log.stem, 'Is it there?', 'Yes, notes.txt is there.', round_+1))
    with closing(sqlite3.connect(S.index_dir()/'index.db')) as c:
        assert c.execute('pragma integrity_check').fetchone()==('ok',)
        assert c.execute("insert into msgs(msgs) values('integrity-check')") is not None
        assert c.execute("select count(*) from sessions").fetchone()[0]==len(S.store_sessions())

def test_both_cores_build_what_one_does(user, monkeypatch):
    "The build shared with a forked child holds what one process builds; a child that dies leaves its share to this one"
    home,env = user
    def rows():
        q = 'select s.key, r.label, m.text from rows r join sessions s on s.id=r.session join msgs m on m.rowid=r.text'
        with closing(sqlite3.connect(S.index_dir()/'index.db')) as c: return sorted(c.execute(q))
    S.search('x', reindex=True)
    one = rows()
    monkeypatch.setattr(S, 'par_bytes', 0)
    forks = []
    from llmsurgery import par
    monkeypatch.setattr(par, 'fork_iter', (lambda f: lambda *a: (forks.append(1), f(*a))[1])(par.fork_iter))
    S.search('x', reindex=True)
    assert forks and rows()==one
    parent = os.getpid()
    def dying(gs, q):   # the child reads one session, claims the next, and dies
        for n,g in enumerate(iter(lambda: S.claim(q), None)):
            if n==1 and os.getpid()!=parent: os._exit(1)
            for k,j in enumerate(gs[g]): yield g,k,S.read_job(j)
    monkeypatch.setattr(S, '_reads', dying)
    S.search('x', reindex=True)
    assert rows()==one

def test_skill_search_tool(shared):
    from llmsurgery.skill import search
    text = search('shopping list')
    assert '«shopping» «list»' in text and "recall('" in text.splitlines()[-1]
    assert search('zzzqqqxx') == "no message of any session matches 'zzzqqqxx'"

def test_a_host_that_names_no_store_folder_is_asked_every_time(user, monkeypatch):
    "Without a folder to watch, the quick check can't vouch for a host's store: every host lists its sessions again"
    home,env = user
    S.search('shopping')
    store_home = S.store_home
    with S.locked(S.index_dir()) as d:
        db = S.connect(d/'index.db')
        assert S.changed(db, S.watched(db))==[]
        monkeypatch.setattr(S, 'store_home', lambda name: None if name=='gemini' else store_home(name))
        db.execute("update meta set v='stale' where k='env'")   # as after a new environment: the hosts list again
        S.refresh(db)
        assert S.changed(db, S.watched(db)) is None and S.refresh(db)==0
        db.close()

def test_the_command_from_python(shared):
    "`llmsurgery_compact(search=...)` returns the hits' text, as the command prints it"
    from llmsurgery.cli import llmsurgery_compact
    text = llmsurgery_compact(search='shopping list')
    assert text.splitlines()[-1].startswith('see one whole: llmsurgery-compact --show N SESSION') and '«shopping» «list»' in text
    with pytest.raises(ValueError, match='not --list'): llmsurgery_compact(search='x', List=True)

# ---------------------------------------------------------------- the words as written first

PHRASE = 'live path home USER projects'   # as written in one message of the real session; its words apart in dozens

def tier(text, words, near=10):   # FTS5 NEAR's tokens, as search asks it
    "0: `text` holds `words` as written; 1: all within `near` tokens of each other; 2: far apart; None: in between"
    toks,ws = [t.lower() for t in _tok.findall(text)],[w.lower() for w in words]
    if any(toks[i:i+len(ws)]==ws for i in range(len(toks))): return 0
    at,best,lo,want = {},len(toks),0,set(ws)
    pos = [(i, t) for i,t in enumerate(toks) if t in want]
    for hi,(i,t) in enumerate(pos):   # the shortest run of tokens holding every word
        at[t] = at.get(t, 0)+1
        while len(at)==len(want):
            best = min(best, i-pos[lo][0]+1)
            at[pos[lo][1]] -= 1
            if not at[pos[lo][1]]: del at[pos[lo][1]]
            lo += 1
    return 1 if best<=near+len(ws) else 2 if best>4*near else None

LONG = REAL/'8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl'   # a long real session, where PHRASE is once

def test_words_as_written_rank_above_words_near_and_apart(tmp_path, monkeypatch):
    "Unquoted words: the message holding them as written comes first, then those holding them near, then apart"
    env = env_of(tmp_path/'home')
    enter(monkeypatch, env)
    cc_session(LONG)
    rc,out,err = cli(env, '--search', PHRASE)
    assert rc==0, err
    hits = re.findall(r'^\S+\s+(\S+)\s+\S+\s+\S+\s+#(\S+)\s', out, re.M)
    assert len(hits)==20, out
    tiers = []
    for sid,n in hits:   # each `#N` as `--show` prints it
        rc,shown,err = cli(env, '--show', n, sid)
        assert rc==0 and shown.startswith(f'#{n}\n'), err
        tiers.append(tier(shown, PHRASE.split()))
    assert tiers[0]==0 and tiers.count(0)==1, tiers   # once as written: first
    known = [t for t in tiers if t is not None]
    assert known==sorted(known), tiers
