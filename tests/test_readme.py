"The README's code runs as printed, from the repository's root, and prints what the README shows; the command and the Python API report the same numbers for the same file."
import ast, contextlib, io, os, re, subprocess, sys
from pathlib import Path
import pytest
from IPython.lib.pretty import pretty

root = Path(__file__).resolve().parent.parent
exe = Path(sys.executable).absolute().parent/'llmsurgery-compact'

def blocks(md):
    "`[(code, shown)]`: each python block of `md`, with the plain block that follows it (what it prints), or None"
    pat = re.compile(r'^```(\w*)\n(.*?)^```\n', re.S|re.M)
    found = [(m[1], m[2], m.start(), m.end()) for m in pat.finditer(md)]
    res = []
    for i,(lang,body,_,end) in enumerate(found):
        if lang != 'python': continue
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
    assert len(code) >= 5
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
    "The README says the spec's `fastllm.chat.mk_msg` is aidialog's own, which the notebooks import instead"
    import fastllm.chat, aidialog.msg_parts
    assert fastllm.chat.mk_msg is aidialog.msg_parts.mk_msg
