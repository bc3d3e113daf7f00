"""Every path a user takes (issue 28), on the real sessions where one shows it: exact text back from `--show`, a
`--grep` that cannot hang, ranges that clamp, and the small things a user trips on."""
import json, re, subprocess, time
from pathlib import Path
import pytest
from hostkit import EXE
from llmsurgery.service import compact_session
from llmsurgery.recall import show_session, grep_session

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT/'tests'/'data'/'claude-real'
BIG = REAL/'258c7280-ae70-4798-800f-63464d01a85d.jsonl'   # a real 2.7 MB Claude Code session, compacted by its host once

def cli(*args, env=None, cwd=None, timeout=120):
    "Run `llmsurgery-compact ARGS`: (returncode, stdout, stderr)"
    p = subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    return p.returncode, p.stdout, p.stderr

# ---------------------------------------------------------------- exact text

def test_show_gives_a_heredoc_back_exactly():
    "`--show 598` of the real session is its `git commit` heredoc, newlines and blank lines as the transcript holds them"
    rc,out,err = cli(BIG, '--show', '598')
    assert rc == 0, err
    assert ' ¶ ' not in out
    assert "git commit -m \"$(cat <<'EOF'\nfeat: transcript + terminal annotations" in out
    assert '\n\nAdd source-aware annotations' in out and '\nEOF\n)" && git status' in out

def test_grep_keeps_its_line_form():
    "`--grep` still prints `#N: line`, each a real line of the message"
    rc,out,_ = cli(BIG, '--grep', '^Key changes:$')
    assert rc == 0 and out.splitlines()[0] == '#598: Key changes:'

# ---------------------------------------------------------------- nothing hangs

def test_grep_backtracking_pattern_ends(tmp_path):
    "A pattern that backtracks for ever in Python's `re`, on a line of 5,000 characters: RE2 answers at once"
    p = tmp_path/'s.jsonl'
    p.write_text(BIG.read_text().replace('Key changes:', 'Key changes: ' + 'a'*5000 + 'b', 1))
    rc,out,err = cli(p, '--grep', '(a|aa)*$', '--max-tokens', '0', timeout=60)
    assert rc == 0 and '#598: … ' in out, err
    rc,out,err = cli(p, '--grep', '^Key changes: (a|aa)*$', timeout=60)
    assert rc == 1 and out == '' and err == ''

def test_python_only_syntax_is_refused_in_one_line():
    "A backreference or lookaround is refused with one line that says why, and nothing logged beside it"
    for pat in [r'(\w+)\1', '(?=foo)bar', '(?<!x)y']:
        rc,out,err = cli(BIG, '--grep', pat)
        assert rc == 2 and out == '' and len(err.splitlines()) == 1, err
        assert 'backreferences, lookaround' in err and 'so no search can hang' in err
    rc,_,err = cli(BIG, '--grep', '(unclosed')
    assert rc == 2 and 'is not a regular expression' in err and len(err.splitlines()) == 1

# ---------------------------------------------------------------- ranges clamp

@pytest.mark.parametrize('span', ['1-50', '1-100000'])
def test_ranges_clamp_to_the_messages(span):
    "A range reaching past the numbered messages shows those inside it and says so on its last line"
    r = show_session(BIG, span, max_toks=0)
    last = r.text.splitlines()[-1]
    assert r.found > 0 and last.startswith(f'… {span} reaches past the messages, numbered 5 to 1859'), last
    assert r.text.startswith('#5\n')

def test_a_range_holding_none_is_an_error():
    rc,out,err = cli(BIG, '--show', '100000-200000')
    assert rc == 2 and out == '' and 'out of range: messages are numbered 5 to 1859' in err

def test_clamped_range_stays_within_its_bound():
    r = show_session(BIG, '1-100000')
    assert len(r.text.encode()) <= 30_000 and 'reaches past the messages' in r.text.splitlines()[-1]
    assert 'stopped before' in r.text.splitlines()[-2]

# ---------------------------------------------------------------- the small things

from hostkit import sandbox_env, compact_in
DIALOG = ROOT/'tests'/'data'/'solveit-real'/'dutil__ask_5f88c82.ipynb'

def in_store(tmp_path, src=BIG):
    "(home, work, the session's id): a copy of the real session `src` in a Claude Code store under `tmp_path`"
    home, work = tmp_path/'home', tmp_path/'work'
    work.mkdir(parents=True)
    from llmsurgery.hosts.claude import project_dirname
    d = home/'.claude'/'projects'/project_dirname(str(work.resolve()))
    d.mkdir(parents=True)
    (d/src.name).write_bytes(src.read_bytes())
    return home, work, src.stem

def store_files(home): return sorted((home/'.claude'/'projects').rglob('*.jsonl'))

def test_since_of_another_session_names_the_flag_once(tmp_path):
    "The --since message says `--since`, not `----since`"
    doc = tmp_path/'doc.md'
    doc.write_text(compact_session(BIG).text)
    rc,_,err = cli(REAL/'short.jsonl', '--since', doc)
    assert rc == 2 and 'compact without --since' in err and '----since' not in err, err

def test_exec_without_the_host_writes_nothing(tmp_path):
    "`--exec` with no `claude` on PATH: one line, status 2, and no new session in the store"
    home, work, sid = in_store(tmp_path)
    env = sandbox_env(home) | dict(PATH=str(Path(EXE).parent) + ':/usr/bin:/bin')
    before = store_files(home)
    rc,out,err = cli(sid[:8], '--exec', env=env, cwd=work)
    assert rc == 2 and 'claude, which is not on PATH: nothing was written' in err, err
    assert store_files(home) == before

def test_resume_on_a_dialog_says_why():
    rc,_,err = cli(DIALOG, '--resume')
    assert rc == 2 and "a dialog notebook is no agent host's session, so it can't be resumed" in err
    assert 'since' not in err

def test_one_code_cell_is_singular():
    from types import SimpleNamespace
    from fastcore.basics import AttrDict
    from llmsurgery.dialogs import doc_line
    line = doc_line(AttrDict(prompts=1, calls=1, code=1, notes=1, toks=5), SimpleNamespace(text='x', stats={}))
    assert line.startswith('1 prompt (1 tool call), 1 code cell, 1 note read'), line

def test_list_with_no_sessions_is_no_error(tmp_path):
    (tmp_path/'home').mkdir(); (tmp_path/'w').mkdir()
    rc,out,err = compact_in(tmp_path/'home', tmp_path/'w', '--list')
    assert rc == 0 and err == '' and 'no session of' in out and 'nothing to list' in out

def test_unknown_id_says_no_id_starts_with_it(tmp_path):
    home, work, _ = in_store(tmp_path)
    for sid in ('zzzz1234', 'deadbeef'):
        rc,_,err = compact_in(home, work, sid)
        assert rc == 2 and 'no session id starts with' in err and 'no such session file' not in err.replace("no such session file, and", ''), err

# ---------------------------------------------------------------- a resume chain

def add_turn(f, prompt, reply):
    "Append a typed prompt and the model's reply to Claude Code session file `f`, as the client would"
    import json, uuid
    recs = [json.loads(l) for l in f.read_text().splitlines()]
    last = recs[-1]
    base = dict(isSidechain=False, userType='external', cwd=last['cwd'], sessionId=last['sessionId'], version=last.get('version'))
    u, a = str(uuid.uuid4()), str(uuid.uuid4())
    user = dict(base, parentUuid=last['uuid'], type='user', message=dict(role='user', content=prompt), uuid=u,
                timestamp='2026-12-04T03:00:00.000Z')
    asst = dict(base, parentUuid=u, type='assistant', uuid=a, timestamp='2026-12-04T03:00:01.000Z',
                message=dict(id='m1', type='message', role='assistant', model='x', content=[dict(type='text', text=reply)],
                             stop_reason='end_turn', usage=dict(input_tokens=1, output_tokens=1)))
    with open(f, 'a') as fh: fh.write(json.dumps(user) + '\n' + json.dumps(asst) + '\n')

def resume(home, work, sid):
    "`--resume` session `sid`: the new session's file"
    rc,out,err = compact_in(home, work, sid, '--resume')
    assert rc == 0, err
    new = out.split()[-1]
    f, = [p for p in store_files(home) if p.stem == new]
    return f

@pytest.fixture
def chain(tmp_path):
    "(home, work, original, first resumed, second resumed): the real session resumed, a turn added, resumed again"
    home, work, sid = in_store(tmp_path)
    f1 = resume(home, work, sid)
    add_turn(f1, 'PROMPT-ONE after resume', 'REPLY-ONE line1\nline2')
    f2 = resume(home, work, f1.stem)
    orig, = [p for p in store_files(home) if p.stem == sid]
    return home, work, orig, f1, f2

def test_resumed_sessions_show_a_first_prompt(chain):
    "`--list`: a session resumed with nothing typed yet shows what its document was last asked, marked resumed"
    home, work, orig, f1, f2 = chain
    rc,out,err = compact_in(home, work, '--list')
    rows = {l.split()[1]: l for l in out.splitlines()[1:]}
    assert rc == 0 and rows[f2.stem].endswith('(resumed) PROMPT-ONE after resume'), out
    assert rows[f1.stem].endswith('PROMPT-ONE after resume') and rows[orig.stem].endswith('Implement spotter-gqc')

# ---------------------------------------------------------------- recall across the chain, one numbering

def transcript_line(doc): return doc.rpartition('## Transcript\n\n')[2]

def test_a_chain_document_names_every_transcript(chain):
    "Resumed, a turn added, resumed again: the document names the original and the continuation, with their numbers"
    home, work, orig, f1, f2 = chain
    doc = read_session_doc(f2)   # the document the second --resume wrote, of the first continuation
    t = transcript_line(doc)
    assert t.startswith(f'The complete, authoritative transcript is `{f1}`. Earlier messages: to #1859 in `{orig}`.'), t
    assert '*** #1862 (after the earlier document)' in doc and '\n*** #3' not in doc   # one numbering: no #3 beside #3
    again = compact_in(home, work, f2.stem, '--max-tokens', '0')[1]   # and compacted once more: all three
    assert f'to #1859 in `{orig}`, to #1863 in `{f1}`. This document covers it through message #1865' in transcript_line(again)

def read_session_doc(f):
    from llmsurgery.sessions import read_session
    return read_session(f).summary

def test_every_number_of_a_chain_document_is_one_show_takes(chain):
    "Each `*** #N` and the covers line's `#N` of the newest document: `--show N` on the newest session prints that message"
    home, work, orig, f1, f2 = chain
    doc = read_session_doc(f2)
    nums = [int(n) for n in re.findall(r'^\*\*\* #(\d+)', doc, re.M)]
    covers = int(re.search(r'covers it through message #(\d+) ', doc)[1])
    assert nums and covers == 1863
    for n in nums[:3] + nums[-2:]:
        rc,out,err = compact_in(home, work, f2.stem, '--show', n)
        assert rc == 0 and out.startswith(f'#{n}\n'), (n, err)
    rc,out,_ = compact_in(home, work, f2.stem, '--show', 1862)
    assert out == '#1862\n§ PROMPT-ONE after resume §\n'
    rc,out,_ = compact_in(home, work, f2.stem, '--show', 719)   # the original's, through the chain
    assert rc == 0 and out.startswith('#719\n▶ Read(') and out == compact_in(home, work, orig, '--show', 719)[1]

def test_grep_follows_the_chain(chain):
    "`--grep` on the newest session searches the original and each continuation, not the copies of the documents"
    home, work, orig, f1, f2 = chain
    rc,out,_ = compact_in(home, work, f2.stem, '--grep', 'Implement spotter-gqc|PROMPT-ONE')
    hits = [int(l.split(':')[0][1:]) for l in out.splitlines()]
    assert rc == 0 and hits[0] == 5 and hits[-1] == 1862 and all(h <= 1859 for h in hits[:-1]), out

def test_a_gone_transcript_is_said(chain):
    "The first continuation removed: its numbers can't be recalled, and the error says where they were"
    home, work, orig, f1, f2 = chain
    f1.unlink()
    rc,out,err = compact_in(home, work, f2.stem, '--show', 1862)
    assert rc == 2 and f'#1860 to #1863 are in {f1}, which can no longer be read' in err, err
    rc,out,err = compact_in(home, work, f2.stem, '--show', 719)
    assert rc == 0 and out.startswith('#719\n')

def test_all_on_a_resumed_session_keeps_the_earlier_document(chain):
    "`--all` on a session --resume wrote, nothing typed since: the earlier document's body whole, its state, its chain"
    home, work, orig, f1, f2 = chain
    rc,doc,err = compact_in(home, work, f2.stem, '--all', '--max-tokens', '0')
    default = compact_in(home, work, f2.stem, '--max-tokens', '0')[1]
    assert rc == 0 and "kept the earlier document's body verbatim" in err, err
    assert '- Task (the first prompt typed): § Implement spotter-gqc §' in doc
    assert '*** #1862 (after the earlier document)' in doc and f'to #1859 in `{orig}`' in doc
    assert doc == default
