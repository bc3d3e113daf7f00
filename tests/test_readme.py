"""The README's code runs as printed, from the repository's root, and prints what the README shows; so do its commands
and those of the pages beside it, as a user runs them in the clone with a fresh home; the command and the Python API
report the same numbers for the same file."""
import ast, contextlib, io, json, os, re, shutil, subprocess, sys, tempfile
from pathlib import Path
import pytest
from IPython.lib.pretty import pretty

root = Path(__file__).resolve().parent.parent
exe = Path(sys.executable).absolute().parent/'llmsurgery-compact'

def blocks(md, lang='python'):
    "`[(code, shown)]`: each `lang` block of `md`, with the plain block that follows it (what it prints), or None"
    pat = re.compile(r'^```(\w*)\n(.*?)^```\n', re.S|re.M)
    found = [(m[1], m[2], m.start(), m.end()) for m in pat.finditer(md)]
    res = []
    for i,(lang_,body,_,end) in enumerate(found):
        if lang_ != lang: continue
        nxt = found[i+1] if i+1 < len(found) else None
        shown = nxt[1] if nxt and nxt[0] == '' and md[end:nxt[2]].strip() == '' else None
        res.append((body, shown))
    return res

def run_cell(code, ns):
    "Run `code` as a notebook cell in `ns`: what it prints, and its last expression's value as IPython shows it"
    tree,out = ast.parse(code),io.StringIO()
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    with contextlib.redirect_stdout(out):
        exec(compile(tree, '<README>', 'exec'), ns)
        if last is not None and (v := eval(compile(ast.Expression(last.value), '<README>', 'eval'), ns)) is not None: print(pretty(v))
    return out.getvalue()

def test_readme_code_runs_as_printed(tmp_path, monkeypatch):
    for k,v in dict(HOME=tmp_path, CLAUDE_CONFIG_DIR=tmp_path/'claude', CODEX_HOME=tmp_path/'codex', XDG_STATE_HOME=tmp_path/'state').items():
        monkeypatch.setenv(k, str(v))
    monkeypatch.chdir(root)
    code = blocks((root/'README.md').read_text(encoding='utf-8'))
    assert len(code) >= 3
    ns = {}
    for body,shown in code:
        printed = run_cell(body, ns)
        if shown is not None: assert printed.rstrip('\n') == shown.rstrip('\n'), body

def test_cli_and_api_report_the_same_numbers(tmp_path):
    "The command's stderr line is `report_line` of the Python API's report, for the same path"
    from llmsurgery.compact import read_session, continuation_doc, compaction_report
    from llmsurgery.document import report_line
    path = root/'examples'/'claude_long.jsonl'
    p = subprocess.run([str(exe), str(path), '--max-tokens', '8000', '--out', str(tmp_path/'d.md')], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    s = read_session(path)
    d = continuation_doc(s.msgs, str(path), max_toks=8000, cwd=s.cwd, task=s.task, nums=s.nums)
    r = compaction_report(d, host_toks=s.host_toks, host=s.host)
    assert p.stderr.splitlines()[-1] == report_line(r)
    assert (r.toks_before, r.before_by) == (71_929, "Claude Code's count")   # the host's count, not the estimate
    assert (tmp_path/'d.md').read_text(encoding='utf-8') == d.text + '\n'

def test_spec_mk_msg_is_aidialogs():
    "The Development page says the spec's `fastllm.chat.mk_msg` is aidialog's own, which the notebooks import instead"
    import fastllm.chat, aidialog.msg_parts
    assert fastllm.chat.mk_msg is aidialog.msg_parts.mk_msg

# The commands of the README and of the pages beside it (`nbs/00N*`) run as a user runs them after the README's install:
# in the clone (`~/llmsurgery`, holding the examples), with a fresh home, no host's variable set, and the tool's own
# Python. What differs from one machine or run to the next is masked on both sides: the home as `~` (and as Claude Code
# and Pi name a project folder in it), this venv's bin as the one `uv tool install` makes, a new session's id (and the
# start of it a search hit shows), a date and time, a listed session's size; and a document's size, which the absolute
# path of the transcript it names (in a temporary folder of random name, several times) moves by up to a dozen tokens,
# or 1% of a larger one.
uv_bin = '~/.local/share/uv/tools/llmsurgery/bin'
_masks = [(re.compile(r'(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b'), '<id>'),
          (re.compile(r'(?<=-)[0-9a-f]{8}(?=\.jsonl)'), '<id>'),   # Gemini CLI names a session's file by its id's start
          (re.compile(r'\b\d{13}_[0-9a-z]{5}\b'), '<id>'),   # Cline's: the time in milliseconds, `_`, five letters
          (re.compile(r'\d{4}([/-])\d\d\1\d\d'), '<date>'),
          (re.compile(r'T\d\d-\d\d(?:-\d\d(?:-\d{3}Z)?)?|\b\d\d:\d\d\b'), '<time>'),   # Pi's has milliseconds
          (re.compile(r'(?m)^(\w+  +)[0-9a-f]{8}(?=  )|(--show \d+ )[0-9a-f]{8}\b'), r'\1\2<id>'),   # a search hit's
          (re.compile(r'\b\d+(?:\.\d+)?[kMG]?B\b'), '<bytes>')]   # a listed session's size: its document names the path
_size = re.compile(r'-> ([\d,]+) tokens \(ratio [\d.]+\)')

def masked(s):
    "`s` with what differs between runs masked"
    for pat,rep in _masks: s = pat.sub(rep, s)
    return _size.sub('-> <size>', s)

def sizes(s): return [int(m[1].replace(',', '')) for m in _size.finditer(s)]

def clone_home(tmp):
    "A fresh home holding the clone's examples and genuine sessions in `~/llmsurgery`"
    home = tmp/'home'
    (home/'llmsurgery'/'examples').mkdir(parents=True)
    for f in (root/'examples').glob('*.jsonl'): shutil.copy2(f, home/'llmsurgery'/'examples'/f.name)
    shutil.copytree(root/'tests'/'data'/'genuine', home/'llmsurgery'/'tests'/'data'/'genuine')
    shutil.copytree(root/'tests'/'data'/'openclaw-genuine', home/'llmsurgery'/'tests'/'data'/'openclaw-genuine')
    return home

def run_sh(script, home):
    "What `script` prints (stdout and stderr as a terminal shows them) run by bash in the clone, `home` as `~`"
    env = dict(HOME=str(home), PATH=f'{exe.parent}:/usr/bin:/bin', LANG='C.UTF-8', TZ='UTC', PYTHONUNBUFFERED='1')
    p = subprocess.run(['bash', '-c', script], cwd=home/'llmsurgery', env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=300)
    assert p.returncode == 0, (script, p.stdout)
    out = p.stdout.replace(f'{exe.parent}/', f'{uv_bin}/')
    for h in {str(home.resolve()), str(home)}:   # and as Claude Code, then Pi, name a project's folder
        out = out.replace(h, '~').replace(re.sub(r'[^A-Za-z0-9]', '-', h), '-home-you')
        out = out.replace(h.lstrip('/').replace('/', '-'), 'home-you')
    return out

def md_of(path):
    "The markdown of the README, or of a page (a notebook, as `tools/readme.py` writes it)"
    if path.suffix != '.ipynb': return path.read_text(encoding='utf-8')
    sys.path.insert(0, str(root/'tools'))
    from readme import nb2md
    return nb2md(json.loads(path.read_text(encoding='utf-8')))

pages = [root/'README.md', *sorted((root/'nbs').glob('00[0-9]*.ipynb'))]

def sandbox():
    "A folder for a fresh home, named as the pages' outputs' was: a document names its transcript in as many tokens"
    return tempfile.TemporaryDirectory(prefix='llmsurgery-')

@pytest.mark.parametrize('page', pages, ids=[p.name for p in pages])
def test_commands_run_as_printed(page):
    with sandbox() as tmp: _run_page(page, clone_home(Path(tmp)))

def same_output(got, shown):
    "Is what a command printed, `got`, what a page shows, but for what differs between runs?"
    return (masked(got.rstrip('\n')) == masked(shown.rstrip('\n'))
            and all(abs(a-b) <= max(12, b//100) for a,b in zip(sizes(got), sizes(shown))))

def _run_page(page, home):
    checked = 0
    for script,shown in blocks(md_of(page), 'sh'):
        if shown is None: continue   # shown, not run: it installs, or needs a host's client
        got = run_sh(script, home)
        assert same_output(got, shown), f'{script}\nprints\n{got}\n(tools/outputs.py refreshes what the pages show)'
        checked += 1
    assert checked or page.name != 'README.md'
