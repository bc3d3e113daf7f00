"The command line is glue: for the same session it writes byte for byte the document that `compact_doc` returns to a Python caller."
import json, os, subprocess, sys
from pathlib import Path
import pytest
from llmsurgery.sessions import read_session
from llmsurgery.document import compact_doc, compact_body

root = Path(__file__).resolve().parent.parent
exe = Path(sys.executable).absolute().parent/'llmsurgery-compact'

def cli_doc(tmp_path, *args):
    "The document `llmsurgery-compact` writes with `args`, read back from `--out`"
    out = tmp_path/'out.md'
    p = subprocess.run([str(exe), *map(str, args), '--out', str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode==0, p.stderr
    doc = out.read_text(encoding='utf-8')
    assert doc.endswith('\n')   # a file ends its last line, as stdout does
    return doc[:-1]

def api_doc(path, **kw):
    s = read_session(path, warn=False)
    return compact_doc(s.msgs, str(Path(path).resolve()), cwd=s.cwd, task=s.task, nums=s.nums, **kw)   # as the CLI passes them

@pytest.fixture
def session(tmp_path):
    "A copy of the bundled short Claude Code session (its torn last line dropped)"
    p = tmp_path/'s.jsonl'
    p.write_text(''.join((root/'examples'/'claude_short.jsonl').read_text().splitlines(keepends=True)[:-1]))
    return p

def test_plain(tmp_path, session): assert cli_doc(tmp_path, session)==api_doc(session)

@pytest.mark.parametrize('n', [900, 3000])
def test_max_tokens(tmp_path, session, n): assert cli_doc(tmp_path, session, '--max-tokens', n)==api_doc(session, max_toks=n)

def test_notes_and_budgets(tmp_path, session):
    assert cli_doc(tmp_path, session, '--notes', 'Resume at the parser.', '--result-toks', 50, '--last-n', 1)==api_doc(
        session, notes='Resume at the parser.', result_toks=50, last_n=1)

def test_since(tmp_path, session):
    early = cli_doc(tmp_path, session)
    extra = [dict(type='user', uuid='u-new', parentUuid=None, sessionId='x', timestamp='2026-12-02T12:00:00Z',
                  message=dict(role='user', content='Now write the changelog entry.'))]
    with open(session, 'a') as f: f.write(''.join(json.dumps(o)+'\n' for o in extra))
    (tmp_path/'early.md').write_text(early)
    doc = cli_doc(tmp_path, session, '--since', tmp_path/'early.md')
    assert doc==api_doc(session, since=early)
    assert compact_body(doc).count('Now write the changelog entry.')==1   # once in the conversation (the state names it too)

def test_pasted(tmp_path, session):
    early = cli_doc(tmp_path, session)
    pasted = tmp_path/'p.jsonl'
    recs = [dict(type='user', uuid='p1', parentUuid=None, sessionId='y', timestamp='2026-12-02T13:00:00Z',
                 message=dict(role='user', content='Continue this work:\n\n' + early)),
            dict(type='assistant', uuid='p2', parentUuid='p1', sessionId='y', timestamp='2026-12-02T13:00:05Z',
                 message=dict(id='m', role='assistant', model='m', content=[dict(type='text', text='Picking up.')]))]
    pasted.write_text(''.join(json.dumps(o)+'\n' for o in recs))
    doc = cli_doc(tmp_path, pasted)
    assert doc==api_doc(pasted) and doc.count('## Conversation')==1

def test_skill_tool_same_document(tmp_path, session):
    "The Solveit skill's `session_doc` is a third caller of the same entry point: same bytes"
    from llmsurgery.skill import session_doc
    assert session_doc(str(session), max_toks=3000)==cli_doc(tmp_path, session, '--max-tokens', 3000)
