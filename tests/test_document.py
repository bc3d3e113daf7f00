"""Issue 18, the document's side, on the real sessions: state that is true for the whole session, no noise lines,
compaction that compacts itself, the small document items and the report's words.

Each test fails on the `main` this branch started from. The real sessions are `claude-real/` (in tests/data when it
is there, else shared/data beside the clone); genuine files are those the real clients wrote (tests/data/genuine)."""
import re, warnings
from functools import cache
from pathlib import Path
import pytest
from aidialog.msg_parts import Msg, Text, ToolUse
from llmsurgery.sessions import read_session
from llmsurgery.document import continuation_doc, compaction_report, report_line, compact_body, doc_task
from llmsurgery.state import first_prompt, prompt_text, host_summary
from llmsurgery.toks import len_toks
from llmsurgery.render import flat_lines
from llmsurgery.docstyle import head_cap

root = Path(__file__).resolve().parent.parent
real = root/'tests'/'data'/'claude-real'   # the real sessions, in the repository with their licence
gqc,fum = '258c7280-ae70-4798-800f-63464d01a85d.jsonl','8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl'

def real_file(name):
    assert (real/name).is_file(), f'{name} is not in tests/data/claude-real'
    return real/name

@cache
def session(path, whole=False):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return read_session(path, whole=whole)

def task_of(path):
    "The session's first request, as a reader gives it: the first prompt of the whole file"
    s = session(path)
    t = getattr(s, 'task', None)
    return t if t else prompt_text(first_prompt(session(path, True).msgs))

@cache
def doc(name, max_toks=None):
    path = real_file(name)
    s = session(path)
    return continuation_doc(s.msgs, str(path), max_toks=max_toks, cwd=s.cwd, task=task_of(path))

def state(d): return d.text.partition('\n\n## Conversation\n\n')[0]
def conv(d): return compact_body(d.text)
def calls(s, name): return [p for m in s.msgs for p in m.content if isinstance(p, ToolUse) and p.name==name]
def lines(d): return conv(d).split('\n')

# 1. State that is true for the whole session

def test_task_is_the_sessions_first_request():
    "After a host compaction the Task line is the session's first request, not whatever came after the boundary"
    assert '- Task (the first prompt typed): § Implement spotter-gqc §' in state(doc(gqc, 12000))
    assert 'did you push?' not in state(doc(gqc, 12000)).split('- Task', 1)[1].split('\n', 1)[0]
    assert f'- Task (the first prompt typed): § {task_of(real_file(fum))[:60]}' in state(doc(fum, 12000))

def test_latest_request_has_a_line():
    assert '- Latest request (the last prompt typed): § did you push? §' in state(doc(gqc, 4000))

def test_open_todos_have_a_line():
    "The latest TodoWrite's items not completed have a line of their own (the bundled long session keeps a todo list)"
    s = session(root/'examples'/'claude_long.jsonl', True)
    st = state(continuation_doc(s.msgs, 'claude_long.jsonl', max_toks=12000, cwd=s.cwd))
    todos = calls(s, 'TodoWrite')[-1].arguments['todos']
    still = [o['content'] for o in todos if o['status']!='completed']
    line = next(l for l in st.splitlines() if l.startswith('- Todos open (latest TodoWrite): '))
    assert still and all(f"[{o['status']}] {o['content']}" in line for o in todos if o['status']!='completed'), line

@pytest.mark.parametrize('name', [gqc, fum])
def test_host_summary_said_once(name):
    "Claude Code's summary is in the state, once; the conversation does not repeat it"
    d = doc(name, 12000)
    summ = host_summary(session(real_file(name)).msgs).text
    assert '- Earlier conversation (the host\'s summary): § 1. Primary Request and Intent:' in state(d)
    assert summ[:60] not in d.text and 'Primary Request and Intent' not in conv(d)
    assert d.text.count('Primary Request and Intent') == 1

def test_summary_said_once_in_a_genuine_resumed_session():
    s = session(root/'tests'/'data'/'genuine'/'claude_resumed.jsonl')
    d = continuation_doc(s.msgs, 'claude_resumed.jsonl', cwd=s.cwd)
    assert d.text.count('the user asked to list the files') == 1 and '§ This session is being continued' not in conv(d)

def test_no_stale_error():
    "258c7280's last error: a Read of a background task's output the assistant dismissed; then 'did you push?'"
    d = doc(gqc, 12000)
    assert '<tool_use_error>File does not exist.</tool_use_error>' in conv(d)   # the conversation still shows it
    assert 'Last error' not in state(d)

# 2. No noise

@pytest.mark.parametrize('name', [gqc, fum])
@pytest.mark.parametrize('n', [4000, 12000])
def test_no_result_line_says_nothing(name, n):
    d = doc(name, n)
    assert len_toks(d.text) <= n
    assert not [l for l in lines(d) if re.fullmatch(r'>\s*…\s*', l)]
    assert 'A call with no `>` line after it had its result left out.' in d.text

@pytest.mark.parametrize('name', [gqc, fum])
def test_calls_keep_their_paths_whole(name):
    "At 4,000 tokens a Read keeps its whole path (relative to the working directory), a Bash command its first line"
    d,s = doc(name, 4000),session(real_file(name))
    paths = {p.arguments['file_path'] for p in calls(s, 'Read')}
    shown = re.findall(r"^▶ Read\(file_path='([^'\n]*)'", conv(d), re.MULTILINE)   # whole: the quote closes it
    assert shown and all(any(o==p or o.endswith('/'+p) for o in paths) for p in shown), shown
    assert not re.search(r"^▶ Read\(file_path='[^'\n]* …", conv(d), re.MULTILINE)
    cmds = [flat_lines(p.arguments['command']) for p in calls(s, 'Bash')]
    cut = [l[2:-2] for l in lines(d) if l.startswith('! ') and l.endswith(' …')]
    for x in cut:   # a cut command shows its whole first line, unless that line alone is over the head's cap
        line = next(c for c in cmds if c.startswith(x)).split(' ¶ ')[0]
        assert x.startswith(line) or len_toks(f'! {line} …') > head_cap, (x, line)

def test_a_repeated_error_line_is_said_once():
    "8463c716's failing mix run prints the same RuntimeError for each test: one line, with its count"
    d = doc(fum, 12000)
    hit = [l for l in lines(d) if 'no :secret_key_base configuration found' in l]
    assert hit and all(l.count('no :secret_key_base configuration found') == 1 for l in hit)
    assert any(re.search(r'found in SpotterWeb\.Endpoint\. \(×\d+\)', l) for l in hit)

def test_each_result_follows_its_call():
    "Three parallel Bash calls (git status, diff --stat, log): each result right after its own call"
    ls = lines(doc(gqc, 12000))
    i = ls.index('! git diff --stat 2>&1')
    assert ls[i-1].startswith('> On branch spotter-gqc')
    assert ls[i+1].startswith('>  lib/spotter_web/live/project_review_live.ex')
    assert ls[i+2].startswith('! git log --oneline')

# 3. Compaction that compacts itself

def resumed(max_toks, first_toks=12000):
    "258c7280's document (at `first_toks`) opening a resumed session, then one more turn, compacted again to `max_toks`"
    first = doc(gqc, first_toks)
    msgs = [Msg('user', [Text(first.text)]), Msg('user', [Text('Now write the release notes for gqc.7.')]),
            Msg('assistant', [Text('Release notes written to NOTES.md.')])]
    return first,continuation_doc(msgs, '/s2.jsonl', max_toks=max_toks)

def test_earlier_document_kept_verbatim_while_it_fits():
    first,again = resumed(20000)
    assert again.kept == again.prior == compact_body(first.text) and again.prior in again.text

@pytest.mark.parametrize('n', [3000, 1500])
def test_earlier_document_compacted_again(n):
    first,again = resumed(n)
    assert len_toks(again.text) <= n
    assert '§ Now write the release notes for gqc.7. §\n» Release notes written to NOTES.md. »' in conv(again)
    assert doc_task(again.text) == 'Implement spotter-gqc' and '- Commits: 05fd186' in state(again)
    assert again.kept != again.prior and again.kept in conv(again) and '§ did you push? §' in conv(again)
    assert not compaction_report(again).prior_whole

# 4. Small document items

def test_every_notes_heading_demoted_and_the_seam_marked():
    first,again = resumed(None)
    assert '\n\n*** (after the earlier document)\n\n§ Now write the release notes' in again.text
    s = session(real_file('short.jsonl'))
    d = continuation_doc(s.msgs, 'short.jsonl', notes='# Plan\n## Steps\nfix it', cwd=s.cwd).text
    assert '## Notes\n\n### Plan\n#### Steps\nfix it' in d and '\n# Plan' not in d

# 5. The report

def test_report_says_what_it_counted():
    s = session(real_file(fum))
    line = report_line(compaction_report(doc(fum, 12000), host_toks=s.host_toks, host=s.host))
    assert line.startswith("171 messages (0 turns: no prompt typed since Claude Code's compaction) read;"), line
    assert report_line(compaction_report(doc(gqc, 12000))).startswith('123 messages (1 turn) read;')
