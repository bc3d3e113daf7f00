"""The MCP server alone, over its stdio, with a plain JSON-RPC client (a line of JSON a message): `llmsurgery-compact
--mcp` answers `initialize` within 1.5 s of its start, lists its four tools with object input schemas, gives back a
message whole through `show` (what `--show` prints), `grep` and `search` as the command prints them, answers bad
arguments, a refused RE2 pattern and a missing session with one-line `isError` results while it keeps answering, and
exits when its stdin closes."""
import json, os, selectors, subprocess, time
from pathlib import Path
import pytest
from hostkit import EXE, sandbox_env, compact_in
from llmsurgery.hosts.base import host_named

ROOT = Path(__file__).resolve().parent.parent
SHORT, LONG = ROOT/'examples'/'claude_short.jsonl', ROOT/'examples'/'claude_long.jsonl'
SID = '6a107b75-677f-4cbd-8c22-af58be6521cc'

class Client:
    "A plain JSON-RPC client of a server process on pipes; each answer waited for at most `wait` seconds"
    def __init__(self, cmd, env=None, cwd=None, wait=30):
        self.t0 = time.perf_counter()
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=env, cwd=cwd, start_new_session=True)
        self.sel,self.wait,self.n = selectors.DefaultSelector(),wait,0
        self.sel.register(self.p.stdout, selectors.EVENT_READ)
    def send(self, method, params=None, notify=False):
        msg = dict(jsonrpc='2.0', method=method, params=params or {}) | ({} if notify else dict(id=self.n+1))
        self.p.stdin.write(json.dumps(msg).encode()+b'\n'); self.p.stdin.flush()
        if notify: return None
        self.n += 1
        return self.answer(self.n)
    def answer(self, id):
        "The response to request `id` (server notifications skipped); an AssertionError after `wait` seconds"
        end = time.monotonic()+self.wait
        while time.monotonic()<end:
            assert self.sel.select(max(end-time.monotonic(), 0)), f'no answer to request {id} in {self.wait} s'
            line = self.p.stdout.readline()
            assert line, f'the server closed stdout: {self.p.stderr.read().decode()[-2000:]}'
            m = json.loads(line)
            if m.get('id')==id: return m
        raise AssertionError(f'no answer to request {id}')
    def initialize(self):
        r = self.send('initialize', dict(protocolVersion='2025-06-18', capabilities={}, clientInfo=dict(name='t', version='1')))
        self.took = time.perf_counter()-self.t0
        self.send('notifications/initialized', notify=True)
        return r
    def call(self, name, **args): return self.send('tools/call', dict(name=name, arguments=args))['result']
    def close(self):
        self.p.stdin.close()
        try: return self.p.wait(10)
        finally:
            if self.p.poll() is None: self.p.kill()

@pytest.fixture
def home(tmp_path):
    "A sandboxed home whose Claude Code store holds the short example session"
    env = sandbox_env(tmp_path) | {k:v for k,v in os.environ.items() if k=='PYTHONPATH'}
    saved = dict(os.environ)
    os.environ.update(env)
    try: proj = host_named('claude').project_dir(str(tmp_path/'work'))
    finally: os.environ.clear(); os.environ.update(saved)
    proj.mkdir(parents=True)
    (proj/f'{SID}.jsonl').write_bytes(SHORT.read_bytes())
    (tmp_path/'work').mkdir()
    return tmp_path,env

@pytest.fixture
def server(home):
    tmp,env = home
    c = Client([str(EXE), '--mcp'], env=env, cwd=tmp/'work')
    c.initialize()
    yield c
    c.close()

def cpu_seconds(pid):
    "The CPU time process `pid` has used so far, user and system"
    f = Path(f'/proc/{pid}/stat').read_text().rpartition(')')[2].split()
    return (int(f[11])+int(f[12]))/os.sysconf('SC_CLK_TCK')

def test_initialize_within_a_second_and_a_half(home):
    """Start to `initialize`'s answer, the best of two starts: within 1.5 s of wall time, on a machine whose cores are
    not all busy already; and, however busy it is, within 1 s of the server's own CPU time (0.8 s idle)"""
    tmp,env = home
    took,cpu = [],[]
    for _ in range(2):
        c = Client([str(EXE), '--mcp'], env=env, cwd=tmp/'work')
        r = c.initialize()
        took.append(c.took); cpu.append(cpu_seconds(c.p.pid))
        assert c.close()==0
        assert r['result']['serverInfo']['name']=='llmsurgery' and 'tools' in r['result']['capabilities']
    assert min(cpu)<1.0, cpu
    busy = os.getloadavg()[0]>=os.cpu_count()   # others' work takes the cores: wall time says nothing of ours
    assert min(took)<1.5 or busy, (took, cpu, os.getloadavg())

def test_four_tools_with_object_schemas(server):
    tools = server.send('tools/list')['result']['tools']
    assert [t['name'] for t in tools]==['search', 'show', 'grep', 'compact']
    for t in tools:
        s = t['inputSchema']
        assert s['type']=='object' and set(s['required'])<=set(s['properties']) and len(t['description'])>80, t
    assert {t['name']: t['inputSchema']['required'] for t in tools}==dict(
        search=['query'], show=['session', 'n'], grep=['session', 'pattern'], compact=[])

def test_show_gives_a_message_whole(server, home):
    "`show` of the long example's biggest messages is `--show`'s stdout, to the byte; by path and by id"
    tmp,env = home
    for n in ('12', '10-14'):
        rc,out,err = compact_in(tmp, tmp/'work', '--show', n, SHORT)
        r = server.call('show', session=str(SHORT), n=n)
        assert rc==0 and not r['isError'] and r['content'][0]['text']+'\n'==out, (r, out)
    by_id = server.call('show', session=SID[:8], n=12)
    assert by_id['content'][0]['text']==server.call('show', session=str(SHORT), n='12')['content'][0]['text']
    rc,out,err = compact_in(tmp, tmp/'work', '--show', '4858', LONG, '--max-tokens', '0')
    r = server.call('show', session=str(LONG), n='4858', max_tokens=0)
    assert rc==0 and len(out)>40000 and r['content'][0]['text']+'\n'==out

def test_grep_and_search_print_what_the_command_prints(server, home):
    tmp,env = home
    rc,out,err = compact_in(tmp, tmp/'work', '--grep', 'last row', SHORT)
    assert server.call('grep', session=str(SHORT), pattern='last row')['content'][0]['text']+'\n'==out
    rc,out,err = compact_in(tmp, tmp/'work', '--search', '"last row"')
    got = server.call('search', query='"last row"')['content'][0]['text']
    assert rc==0 and got.splitlines()[:-1]==out.splitlines()[:-1] and SID[:8] in got and '#3' in got, (got, out)
    assert got.splitlines()[-1].endswith('(the first: show session=6a107b75 n=3)')
    assert server.call('search', query='"last row"', host='claude', project=str(tmp/'nowhere'))['content'][0]['text'] \
        .startswith('no message of any session matches')

def test_compact_gives_the_document(server, home):
    tmp,env = home
    rc,out,err = compact_in(tmp, tmp/'work', SHORT, '--max-tokens', '1500')
    assert server.call('compact', session=str(SHORT), max_tokens=1500)['content'][0]['text']+'\n'==out
    own = server.call('compact')   # no session: this directory's newest, the one in the store
    assert not own['isError'] and 'last row' in own['content'][0]['text']

bad_calls = [('show', dict(session=str(SHORT))),                              # n missing
             ('show', dict(session=str(SHORT), n='twelve')),                  # not a number
             ('show', dict(session=str(SHORT), n='3', lines=2)),              # no such parameter
             ('show', dict(session=str(SHORT), n=[3])),                       # of the wrong type
             ('show', dict(session='/nonexistent/session.jsonl', n='3')),     # a missing session
             ('show', dict(session='deadbeef99', n='3')),                     # an id no session has
             ('grep', dict(session=str(SHORT), pattern=r'(\w)\1')),           # RE2 refuses a backreference
             ('grep', dict(session=str(SHORT), pattern='(')),                 # not a regular expression
             ('compact', dict(session=str(SHORT), max_tokens=-5)),
             ('compact', dict(session=str(SHORT), max_tokens=50)),            # below the least the document can be
             ('search', dict(query='')),
             ('rm', dict(path='/'))]

def test_errors_are_results_and_the_server_goes_on(server):
    for name,args in bad_calls:
        r = server.call(name, **args)
        text = r['content'][0]['text']
        assert r['isError'] is True and '\n' not in text and 'Traceback' not in text and text, (name, args, r)
    assert not server.call('show', session=str(SHORT), n='3')['isError']   # still answering
    assert server.close()==0
    assert b'Traceback' not in server.p.stderr.read()

def test_exits_when_stdin_closes(home):
    tmp,env = home
    c = Client([str(EXE), '--mcp'], env=env, cwd=tmp/'work')
    c.initialize()
    t = time.monotonic()
    assert c.close()==0 and time.monotonic()-t<5

def test_mcp_takes_nothing_else(home):
    tmp,env = home
    rc,out,err = compact_in(tmp, tmp/'work', '--mcp', '--list')
    assert rc==2 and err=='llmsurgery-compact: error: --mcp takes nothing else, not --list\n' and not out
