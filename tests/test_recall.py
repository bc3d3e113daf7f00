"""Recall (issue 21): every message of a transcript is one command away by its number, and every cut is recovered whole.
On the real Claude Code sessions, the genuine host files and the examples: the numbers are the same with and without
`--all`; `--show N` prints message N (checked against the record on line N of the file itself); every tool result a
default document cuts comes back whole; `--grep` finds what only precedes the host's compaction. The skill's `recall`
on a session and on the published dialogs. And with the real clients, offline: Claude Code 2.1.328 and Codex 0.169.0,
resumed from `llmsurgery-compact --resume`, run `llmsurgery-compact TRANSCRIPT --show N` through their shell tools, and
the model gets the 28 KB file read the document cut, whole."""
import json, re, subprocess, sys
from pathlib import Path
import pytest
from hostkit import (EXE, compact_in, AnthropicMock, ResponsesMock, run_claude, run_codex, bash,
                     exec_command, text, claude_sessions, codex_rollouts, claude_tool_results, codex_tool_outputs)
from aidialog.msg_parts import ToolResult
from llmsurgery.sessions import read_session, numbered
from llmsurgery.render import Budgets, render_msg, result_part, result_prep, turn_starts
from llmsurgery.docstyle import DocStyle
from llmsurgery.inject import strip_reminders
from llmsurgery.dialogs import shown, dlg_msg
from llmsurgery.service import compact_session
from llmsurgery.recall import show_session, recall_items, pick, show_blocks, bounded, Bound, show_bytes, exact_style as exact
from llmsurgery.toks import as_text
from llmsurgery.skill import recall
from llmsurgery.toks import len_toks

ROOT = Path(__file__).resolve().parent.parent

REAL = sorted((ROOT/'tests'/'data'/'claude-real').glob('*.jsonl'))   # the real sessions, with their licence
assert len(REAL) == 5, 'the five real sessions belong in tests/data/claude-real'
COMPACTED = [p for p in REAL if p.name.startswith(('258c7280', '8463c716'))]   # each holds a host compaction
FILES = REAL + sorted((ROOT/'tests'/'data'/'genuine').glob('*.jsonl')) + sorted((ROOT/'examples').glob('*.jsonl'))
DIALOGS = sorted((ROOT/'tests'/'data'/'solveit-real').glob('*.ipynb'))
whole = lambda m: render_msg(m, Budgets.unlimited(), exact)   # what recall prints: the text exactly
exact_result = lambda p: as_text(p.text)

def cli(*args, env=None, cwd=None):
    "Run `llmsurgery-compact ARGS`: (returncode, stdout, stderr)"
    p = subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)
    return p.returncode, p.stdout, p.stderr

def ids(p): return p.name[:12]

# ---------------------------------------------------------------- one numbering

@pytest.mark.parametrize('path', FILES, ids=ids)
def test_numbers_same_with_and_without_all(path):
    "Each message of the default read has a number, the whole read holds the same message under it, and numbers rise"
    d,w = read_session(path, warn=False),read_session(path, whole=True, warn=False)
    assert len(d.nums) == len(d.msgs) and None not in d.nums
    assert d.nums == sorted(d.nums) and w.nums == sorted(w.nums)
    held = {}
    for n,m in numbered(w): held.setdefault(n, []).append(m)
    assert [n for n,m in zip(d.nums, d.msgs) if m not in held.get(n, [])] == []
    lines = path.read_bytes().count(b'\n') + 1
    assert all(1 <= n <= lines for n in held)

@pytest.mark.parametrize('path', REAL, ids=ids)
def test_number_is_the_record_line(path):
    "`#N` of a message made of a record is line N of the file: the record there is of the message's role"
    lines = path.read_text(encoding='utf-8', errors='replace').split('\n')
    for n,m in numbered(read_session(path, whole=True, warn=False)):
        r = json.loads(lines[n-1])
        role = 'user' if m.role=='tool' else m.role
        assert r.get('type') == role or r.get('operation') == 'enqueue', (n, m.role, r.get('type'))

# ---------------------------------------------------------------- numbers in the document

_head_re = re.compile(r'^\*\*\* #(\d+)(?: \(after the earlier document\))?$', re.M)

def conversation(doc):
    "The conversation section of document `doc`"
    return doc.partition('\n\n## Conversation\n\n')[2].rpartition('\n\n## Transcript\n\n')[0]

def doc_turns(doc):
    "`[(N, the turn's first line)]` of each turn the conversation of `doc` numbers, and the left-out line if any"
    pieces = re.split(r'\n\n(?=\*\*\*)', conversation(doc))
    left = pieces.pop(0) if pieces[0].startswith('… ') else None
    assert all(_head_re.match(p) for p in pieces), [p[:40] for p in pieces if not _head_re.match(p)]
    return [(int(_head_re.match(p)[1]), p.split('\n\n', 1)[1].split('\n')[0]) for p in pieces],left

def cut_results(s, doc):
    "`[(N, result)]`: the tool results of session `s` that document `doc` does not hold whole, by message number"
    return [(n, p) for n,m in zip(s.nums, s.msgs) if m.role=='tool' for p in m.content
            if isinstance(p, ToolResult) and result_part(p, None) not in doc]

def said(line):
    "The words a user or assistant line of a document opens with, up to any cut: what its message says first"
    return re.split(r' … | [§»]$', line[2:])[0][:40] if line[:2] in ('§ ', '» ') else None

@pytest.mark.parametrize('all_', [False, True], ids=['default', 'all'])
@pytest.mark.parametrize('path', REAL, ids=ids)
def test_every_turn_carries_its_number(path, all_):
    "Each turn of the document opens with `*** #N`, the first too; N rises; `--show N` prints the turn's first message"
    doc = compact_session(path, whole=all_).text
    turns,left = doc_turns(doc)
    nums = [n for n,_ in turns]
    assert turns and nums == sorted(set(nums))
    if left: assert re.search(rf'left out: #\d+–#{nums[0]-1} …$', left), left   # the range ends where the turns begin
    checked = [n for n,line in turns if said(line) and said(line) in show_session(path, str(n)).text.split('\n', 2)[1]]
    assert len(checked) == sum(bool(said(l)) for _,l in turns) > 0

def test_numbers_cost_little():
    "On the real sessions the numbers (not the legend's words) add at most 1% to a default document's tokens"
    for path in REAL:
        doc = compact_session(path).text
        bare = re.sub(r'^\*\*\* #\d+$', '***', conversation(doc), flags=re.M).removeprefix('***\n\n')
        assert len_toks(conversation(doc)) - len_toks(bare) <= len_toks(doc) / 100, path.name

def test_a_fit_says_the_numbers_it_left_out():
    "A small target leaves the oldest turns out; its line names their numbers, up to the first turn kept"
    path = COMPACTED[0]
    turns,left = doc_turns(compact_session(path, whole=True, max_toks=3000).text)
    first = min(read_session(path, whole=True, warn=False).nums)
    assert left and re.search(rf'left out: #{first}–#{turns[0][0]-1} …$', left), left

@pytest.mark.parametrize('path', REAL, ids=ids)
def test_a_turns_range_holds_its_cut_results(path):
    "Every result the default document cuts is whole in `--show N-M` of the turn it is in (N to the next turn's, less 1)"
    d = read_session(path, warn=False)
    doc = compact_session(path).text
    heads = [n for n,_ in doc_turns(doc)[0]] + [max(d.nums) + 1]
    cut = cut_results(d, doc)
    shown = {}
    for n,p in cut:
        a = max(h for h in heads if h <= n)
        b = min(h for h in heads if h > n) - 1
        if (a, b) not in shown: shown[a, b] = show_session(path, f'{a}-{b}', max_toks=0).text
        assert exact_result(p) in shown[a, b], n
    assert cut or not path.name.startswith(('258c', '8463'))

def test_an_earlier_document_keeps_its_numbers(tmp_path):
    "Compacted again with --since, the earlier body keeps its turns' numbers; what follows opens at its own"
    src = next(p for p in REAL if p.name.startswith('tool_heavy'))
    lines = src.read_text().splitlines(keepends=True)
    s,early = tmp_path/'s.jsonl',tmp_path/'early.md'
    second = [n for n,_ in doc_turns(compact_session(src).text)[0]][1]
    s.write_text(''.join(lines[:second-1]))
    compact_session(s, out=early)
    old = [n for n,_ in doc_turns(early.read_text())[0]]
    with open(s, 'a') as f: f.write(''.join(lines[second-1:]))
    doc = compact_session(s, since=early).text
    assert f'\n\n*** #{second} (after the earlier document)\n\n' in doc
    assert [n for n,_ in doc_turns(doc)[0]] == old + [second] and old[-1] < second

# ---------------------------------------------------------------- --show

@pytest.mark.parametrize('path', REAL, ids=ids)
def test_show_prints_each_turn(path):
    "The number of each turn's first message (the default document's turns) shows that message, whole"
    d = read_session(path, warn=False)
    items,render,_ = recall_items(read_session(path, whole=True, warn=False))
    starts = sorted({0, *turn_starts(d.msgs, DocStyle())})   # the first message opens the document's first turn
    for i in starts:
        blocks = show_blocks(pick(items, str(d.nums[i])), render)
        texts = [t for l,t in blocks]
        assert all(l == d.nums[i] for l,t in blocks)
        assert f'#{d.nums[i]}\n{whole(d.msgs[i])}' in texts or not whole(d.msgs[i])

@pytest.mark.parametrize('path', REAL, ids=ids)
def test_show_through_the_command(path):
    "The command prints the first and the last turn's message under its number, within 30,000 bytes"
    d = read_session(path, warn=False)
    starts = sorted({0, *turn_starts(d.msgs, DocStyle())})
    for i in (starts[0], starts[-1]):
        rc,out,err = cli(path, '--show', d.nums[i])
        assert rc == 0, err
        assert out.startswith(f'#{d.nums[i]}\n') and len(out.encode()) <= show_bytes + 1   # and its final newline
        assert whole(d.msgs[i])[:2000] in out
    rc,out,err = cli(path, '--show', f'1-{max(d.nums)}')
    every = show_session(path, f'1-{max(d.nums)}', max_toks=0).text
    assert rc == 0 and len(out.encode()) <= show_bytes + 1
    if len(every.encode()) <= show_bytes: assert out == every+'\n'
    else: assert out.splitlines()[-2].startswith('… stopped before #')
    assert out.splitlines()[-1].startswith(f'… 1-{max(d.nums)} reaches past the messages')   # they begin after line 1

def _raw_lines(record):
    "The non-blank lines of the tool results that Claude Code user record `record` carries, as the host wrote them"
    res = [b for b in record['message']['content'] if isinstance(b, dict) and b.get('type') == 'tool_result']
    txt = lambda c: c if isinstance(c, str) else '\n'.join(x.get('text', '') for x in c if x.get('type') == 'text')
    trailer = re.compile(r'</?usage>|total_tokens: |tool_uses: |duration_ms: |REMINDER: You MUST include the sources')
    return [l.strip() for b in res for l in strip_reminders(txt(b.get('content') or '')).splitlines()
            if l.strip() and not trailer.search(l)]

@pytest.mark.parametrize('path', REAL, ids=ids)
def test_cut_results_come_back_whole(path):
    "Every result a default document cuts comes back whole by its message's number: each line of line N's record"
    d = read_session(path, warn=False)
    doc = compact_session(path).text
    items,render,_ = recall_items(read_session(path, whole=True, warn=False))
    lines = path.read_text(encoding='utf-8', errors='replace').split('\n')
    cut = cut_results(d, doc)
    if path.name.startswith(('258c', '8463')): assert len(cut) >= 5
    if path.name.startswith(('subagent', 'tool_heavy')): assert cut
    for n,p in cut:
        shown_ = bounded(show_blocks(pick(items, str(n)), render), Bound(0))
        assert exact_result(p) in shown_
        assert all(l in shown_ for l in _raw_lines(json.loads(lines[n-1]))), n
    fits = [(n, p) for n,p in cut if len(result_part(p, None).encode()) < show_bytes - 200]
    n,p = max(fits, key=lambda o: len(o[1].text), default=(None, None))   # the biggest that fits: through the service
    if n: assert exact_result(p) in show_session(path, str(n)).text

def test_show_cuts_what_a_shell_cannot_take():
    "A result bigger than 30,000 bytes comes cut, with the command that gives it all; that command gives it all"
    path = COMPACTED[1]   # 8463c716: a 39 KB result
    items,render,_ = recall_items(read_session(path, whole=True, warn=False))
    n,m = max(((n, m) for n,m in items if m.role=='tool'), key=lambda o: len(whole(o[1])))
    assert len(whole(m).encode()) > show_bytes
    rc,out,err = cli(path, '--show', n)
    assert rc == 0 and len(out.encode()) <= show_bytes + 1
    size = len(f'#{n}\n{whole(m)}'.encode())
    assert out.splitlines()[-1] == (f'… #{n} is cut here to stay within 30,000 bytes (what a Bash tool shows a '
                                    f'model): it has {size:,} bytes; all of it: --show {n} with --max-tokens 0')
    rc,out,err = cli(path, '--show', n, '--max-tokens', 0)
    assert rc == 0 and out == f'#{n}\n{whole(m)}\n'

# ---------------------------------------------------------------- --grep

@pytest.mark.parametrize('path', COMPACTED, ids=ids)
def test_grep_finds_what_precedes_the_compaction(path):
    "Text from before the host's compaction that no default document holds: `--grep` finds it at its number"
    d,w = read_session(path, warn=False),read_session(path, whole=True, warn=False)
    doc,start = compact_session(path, whole=False).text,min(d.nums)
    after = '\n'.join(map(whole, d.msgs))
    words = [(n, l.strip()) for n,m in zip(w.nums, w.msgs) if n < start
             for l in whole(m).split('\n') if len(l.strip()) > 30]   # the lines grep matches
    n,line = next((n, l) for n,l in words if l[:60] not in doc and l[:60] not in after)
    rc,out,err = cli(path, '--grep', re.escape(line[:60]))
    assert rc == 0, err
    hits = [int(h.split(':')[0][1:]) for h in out.splitlines()]
    assert n in hits and all(h < start for h in hits)
    assert cli(path, '--grep', 'no such words in any line, 8d1f')[:2] == (1, '')

def test_grep_is_bounded():
    "A pattern that matches nearly every line prints within 30,000 bytes and says how many more there are"
    rc,out,err = cli(COMPACTED[0], '--grep', 'e')
    assert rc == 0 and len(out.encode()) <= show_bytes + 1
    more = r'… [\d,]+ more matching lines, #\d+ to #\d+, past 30,000 bytes .*--max-tokens 0 for all'
    assert re.fullmatch(more, out.splitlines()[-1])

# ---------------------------------------------------------------- the skill's recall

def test_skill_recall_on_a_session():
    "The skill's `recall` shows a session's messages by number, and searches them, as the command does"
    path = COMPACTED[0]
    d = read_session(path, warn=False)
    n = d.nums[turn_starts(d.msgs, DocStyle())[-1]]
    assert recall(str(path), show=n) == cli(path, '--show', n)[1].rstrip('\n')
    assert recall(str(path), show=f'#{n}') == recall(str(path), show=str(n))
    assert recall(str(path), grep='compact', max_toks=300).startswith('#')
    with pytest.raises(ValueError, match='out of range'): recall(str(path), show=10**7)

@pytest.mark.parametrize('path', DIALOGS, ids=lambda p: p.stem[:20])
def test_skill_recall_on_a_dialog(path):
    "In a published dialog every message shows by its id, whole, and a search names messages by id"
    ms = shown(read_session(path).dlg)
    for m in ms[::max(1, len(ms)//12)]:
        got,want = recall(str(path), show=f'#_{m.id}'),dlg_msg(m).removeprefix(f'#_{m.id}\n')
        assert got.startswith(f'#_{m.id}\n')
        if len(want.encode()) < show_bytes - 500: assert got == f'#_{m.id}\n{want}' or not want
    word = next(w for w in re.findall(r'[A-Za-z]{6,}', dlg_msg(ms[0])))
    hits = recall(str(path), grep=re.escape(word))
    assert hits.startswith(f'#_{ms[0].id}: ')

# ---------------------------------------------------------------- with the real clients, offline

BYPASS = '--dangerously-bypass-approvals-and-sandbox'   # Codex runs the scripted commands unasked
ECHOES = ['echo two', 'echo three', 'echo four']   # later calls: the read is not among the last messages kept whole

def big_file(folder):
    "A 28 KB (28,672-byte) text file of numbered lines, ending in a mark, that a tool reads"
    rows = [f'{i:04d} ' + ' '.join(f'w{(i*7+j*13)%997:03d}' for j in range(38)) for i in range(200)]
    body = '\n'.join(rows)
    body = body[:28*1024 - len('\nEND-OF-FILE-4471\n')] + '\nEND-OF-FILE-4471\n'
    (folder/'big.txt').write_text(body)
    assert len(body.encode()) == 28*1024
    return body


def cut_read(src, body):
    "The number of the message holding the file read, which the document of `src` cuts"
    s = read_session(src, warn=False)
    n, = [n for n,m in zip(s.nums, s.msgs) if m.role=='tool' and 'END-OF-FILE-4471' in whole(m)]
    assert result_prep(body) not in compact_session(src).text                     # the document cut it
    return n

def read_and_resumed(tmp_path, run, mock, call, made_in, cmd, *flags):
    "A real client's session that read the 28 KB file, then resumed with `--resume`: (home, work, body, file, N, new id)"
    home, work = tmp_path/'home', tmp_path/'work'
    work.mkdir()
    body = big_file(work)
    with mock([call('cat big.txt'), *map(call, ECHOES), text('Read it.')]) as s:
        rc, _, err = run(home, work, 'Read big.txt, then three echoes.', s, *flags)
    assert rc == 0, err
    src, = made_in(home)
    n = cut_read(src, body)
    rc, out, err = compact_in(home, work, src, '--resume')
    assert rc == 0 and out.splitlines()[-1].startswith(cmd), err
    return home, work, body, src, n, out.split()[-1]

def test_claude_recalls_through_bash(hosts, tmp_path):
    "Claude Code, resumed from the document, runs `--show N` in its Bash tool: the model gets the 28 KB read whole"
    cl, _ = hosts
    run = lambda *a: run_claude(cl, *a)
    home, work, body, src, n, new = read_and_resumed(tmp_path, run, AnthropicMock, lambda c: bash(c, 'read'),
                                                     claude_sessions, 'claude --resume ', '--allowedTools', 'Bash')
    with AnthropicMock([bash(f'{EXE} {src} --show {n}', 'recall'), text('Got it.')]) as s:
        rc, _, err = run_claude(cl, home, work, 'Recall the file read.', s, '--resume', new, '--allowedTools', 'Bash')
    assert rc == 0, err
    got = claude_tool_results(s.model_requests()[-1]['body'])[-1]
    assert got.startswith(f'#{n}\n> ') and body.strip() in got                # every line of the file, exactly, none cut
    assert 'persisted-output' not in got and len(got.encode()) <= show_bytes

def test_codex_recalls_through_exec(hosts, tmp_path):
    "Codex, resumed from the document, runs `--show N` in its exec tool: the model gets the 28 KB read whole"
    _, cx = hosts
    run = lambda *a: run_codex(cx, *a)
    home, work, body, src, n, new = read_and_resumed(tmp_path, run, ResponsesMock, exec_command, codex_rollouts,
                                                     'codex resume ', BYPASS)
    with ResponsesMock([exec_command(f'{EXE} {src} --show {n}'), text('Got it.')]) as s:
        rc, _, err = run_codex(cx, home, work, 'Recall the file read.', s, 'resume', new, BYPASS)
    assert rc == 0, err
    head, got = codex_tool_outputs(s.model_requests()[-1]['body'])[-1].split('\nOutput:\n', 1)
    assert 'Process exited with code 0' in head and 'truncated' not in got
    assert got.startswith(f'#{n}\n> ') and body.strip() in got
