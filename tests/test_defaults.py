"""One source for the policy defaults and the legend: `compact_policy` holds the defaults and `compact_content` writes the legend;
every other place that states them (the command's `--help`, the skill's `doc()`, the README and the pages beside it, the notebook
prose, the user's spec) is parsed here and must agree, so that changing a default or the notation in one place fails until every
copy says the same.

The README is generated from `nbs/index.ipynb` (`tools/readme.py --check`, in `make test`, keeps the two equal), and `--help` from `nbs/20_cli.ipynb`'s
docments, so checking the README and `--help` checks their sources too."""
import json, os, re, subprocess, sys
from pathlib import Path
import pytest
import pyskills
import llmsurgery.skill as sk
from llmsurgery.render import compact_policy
from llmsurgery.document import compact_content
from llmsurgery.inject import is_summary_text
from test_spec import spec_text
from test_readme import md_of, pages

ROOT = Path(__file__).resolve().parent.parent
SPEC = Path(os.environ.get('LLMSURGERY_SPEC') or ROOT.parent/'shared'/'spec'/'compact.md')
_exe = Path(sys.executable).absolute().parent/'llmsurgery-compact'   # the console script, run by this interpreter
BUDGETS = ('user_toks', 'asst_toks', 'call_toks', 'result_toks')
WORDS = 'zero one two three four five six seven eight nine ten'.split()
# What each mark of the notation means, by a word every wording of it must use (checked against the legend itself below)
MEANS = {'§ … §': 'user', '» … »': 'assistant', 'python': 'kernel', '!': 'Bash', '▶': 'tool call', '>': 'result',
         '¶': 'newline', '***': 'turns', ' … ': 'middle'}

def num(s): return int(s.replace(',', ''))
def fold(s): return ' '.join(s.split())

# a conversation holding every mark of the notation: a legend names only the marks its document holds
EVERY_MARK = '§ a §\n» b ¶ c »\n! ls\n> d\n▶ Read()\n```python\n1\n```\n\n***\n\n§ e §'

def legend():
    "The legend as the code writes it: what `compact_content` puts before a conversation with every mark"
    return compact_content(EVERY_MARK, 'x.jsonl').partition('\n\n## Conversation')[0]

def notation(text):
    "`[(mark, what is said of it)]` of the notation sentence in `text`: from the `§ … §` mark to the end of the ` … ` mark's clause"
    start = text.index('`§ … §`')
    end = text.index('.', text.index('` … `', start))
    parts = re.split(r'`([^`]+)`', text[start:end])
    return list(zip(parts[1::2], parts[2::2]))

def agrees(copy):
    "Does notation `copy` name the legend's marks, in the legend's order, each with the meaning the legend gives it?"
    ours = notation(legend())
    assert [m for m,_ in copy] == [m for m,_ in ours], [m for m,_ in copy]
    for (m,said),(_,meant) in zip(copy, ours): assert MEANS[m] in said and MEANS[m] in meant, (m, said, meant)

def test_means_covers_the_legend():
    "The table of meanings covers exactly the legend's marks, and the legend is not mistaken for a host's own summary"
    assert [m for m,_ in notation(legend())] == list(MEANS)
    agrees(notation(legend()))
    assert not is_summary_text(legend())

def test_cli_help():
    "`llmsurgery-compact --help` states each default as `(default N)`"
    out = fold(subprocess.run([sys.executable, str(_exe), '--help'], capture_output=True, text=True, check=True,
                              env=dict(os.environ, COLUMNS='200')).stdout)
    said = {k: num(m[1]) for k in compact_policy if (m := re.search(rf'--{k.replace("_", "-")} (?:\(int\)|N) [^()]*\(default ([\d,]+)\)', out))}
    assert said == compact_policy

TOOLS = ['dialog_doc', 'dialog_copy', 'session_doc', 'session_report', 'resume_session']

@pytest.mark.parametrize('tool', TOOLS)
def test_skill_docs(tool):
    "Each budgeted tool's `doc()` lists its budgets, typed, `None` by default, documented with the value `None` stands for"
    d = pyskills.doc(getattr(sk, tool))
    said = {m[1]: num(m[2]) for m in re.finditer(r'^\s*(?:\*, )?(\w+):int=None, # [^\n]*\(None: ([\d,]+)\)$', d, re.M)}
    want = {k: v for k,v in compact_policy.items() if not (tool.startswith('dialog') and k=='last_n')}   # a dialog keeps no tail whole
    assert said == want, said

def test_skill_notation():
    "The skill's description of the notation names the legend's marks with their meanings"
    agrees(notation(sk.__doc__))

def readme():
    "The README, then the pages beside it (`nbs/00N*`: the performance figures are there)"
    return '\n\n'.join(md_of(p) for p in pages)

def test_readme_options():
    "The README's option table gives `--last-n`'s default and the four budgets' in the order of their flags"
    t = readme()
    said = dict(last_n=num(re.search(r'\| `--last-n N` \|[^|\n]*\(default ([\d,]+)\) \|', t)[1]))
    row = re.search(r'\| (`--\w+-toks`(?:, `--\w+-toks`)*) \|[^|\n]*\(defaults ([\d, ]+)\) \|', t)
    flags,vals = re.findall(r'`--(\w+)-toks`', row[1]),row[2].split(', ')
    said |= {f'{f}_toks': num(v) for f,v in zip(flags, vals, strict=True)}
    assert said == compact_policy

def test_readme_prose():
    "The measurements name the budgets they ran at: `bench/bench.py` renders at `compact_policy`'s"
    t = fold(readme())
    assert num(re.search(r'keeping ([\d,]+) tokens of an 11 MB tool result', t)[1]) == compact_policy['result_toks']
    assert num(re.search(r'a tool result within its ([\d,]+)-token budget', t)[1]) == compact_policy['result_toks']
    assert num(re.search(r'`compact_text` runs at the user budget of ([\d,]+) tokens', t)[1]) == compact_policy['user_toks']

def test_readme_notation():
    "The README's sentence on the notation names the legend's marks with their meanings"
    agrees(notation(readme()[readme().index('The DSL:'):]))

def test_render_prose():
    "`02_render`'s essay on the policy states each budget and `last_n` as `compact_policy` holds them"
    cells = json.loads((ROOT/'nbs'/'04_render.ipynb').read_text())['cells']
    t = fold(next(''.join(c['source']) for c in cells if c['cell_type']=='markdown' and '`compact_policy` holds the production budgets' in ''.join(c['source'])))
    pats = dict(user_toks=r'User text gets by far the largest allowance \(([\d,]+) tokens', asst_toks=r'Assistant prose \(([\d,]+)\)',
                call_toks=r'tool calls \(([\d,]+)\)', result_toks=r'A result keeps a ([\d,]+)-token sample', last_n=r'The final `last_n=(\d+)`')
    assert {k: num(re.search(p, t)[1]) for k,p in pats.items()} == compact_policy

@pytest.fixture(scope='module')
def spec():
    return fold(spec_text(SPEC))

def test_spec_last_n(spec):
    "The spec's 'final five messages' (its prose and its printed legend) is `compact_policy`'s `last_n`"
    said = re.findall(r'[Tt]he final (\w+) messages', spec)
    assert len(said) >= 2 and {WORDS.index(w) for w in said} == {compact_policy['last_n']}, said

def test_spec_notation(spec):
    "The spec's printed legend explains the notation in the very words of the code's legend"
    printed = spec[spec.index('This session is being continued from an earlier conversation'):]
    agrees(notation(printed))
    ours = legend()
    assert printed[printed.index('`§ … §`'):printed.index('middle content.')] in ours
