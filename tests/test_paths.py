"""Every path a user takes (issue 28), on the real sessions where one shows it: exact text back from `--show`, a
`--grep` that cannot hang, ranges that clamp, and the small things a user trips on."""
import re, subprocess, time
from pathlib import Path
import pytest
from hostkit import EXE
from llmsurgery.service import show_session, grep_session

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
