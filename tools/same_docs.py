"""Are the documents llmsurgery makes byte-identical to another revision's, on every real session and dialog?

Run: `.venv/bin/python tools/same_docs.py REV` (say `main`, or a commit) from the repository's root. It extracts REV
into a temporary folder, then runs `llmsurgery-compact` of REV and of the working tree, one after the other, on every
real Claude Code session and dialog notebook in `tests/data` and `../shared/data` (when it is there), and on the
genuine host-written files in `tests/data/genuine` and `tests/data/gemini`: the default document, `--all`, a tight
`--max-tokens`, `--sidechains`, the report, `--show` and `--grep`, and a dialog's compacted copy. Each run's stdout,
stderr and exit status must match byte for byte; the differing ones are listed. Exit status 0 when all match.
A refactoring that must not change what users get runs this before it lands.
"""
import hashlib, os, shutil, subprocess, sys, tempfile, tomllib
from pathlib import Path

root = Path(__file__).resolve().parent.parent
shared = root.parent/'shared'/'data'

def inputs():
    "Every session and dialog file the check runs on"
    dirs = [root/'tests'/'data'/d for d in ('claude-real', 'solveit-real', 'genuine', 'gemini')]
    dirs += [shared/'claude-real', shared/'solveit-real'] if shared.is_dir() else []
    return sorted(p for d in dirs if d.is_dir() for p in d.iterdir() if p.suffix in ('.jsonl', '.ipynb'))

def runs(p):
    "The argument lists run on file `p`"
    if p.suffix=='.ipynb': return [[], ['--max-tokens', '3000'], ['--report'], ['--show', '1-3'], ['--grep', 'def ']]
    return [[], ['--all'], ['--max-tokens', '4000', '--report'], ['--all', '--sidechains', '--max-tokens', '9000'],
            ['--last-n', '2', '--result-toks', '12'], ['--show', '1-40'], ['--grep', '(?i)error|fail'], ['--all', '--grep', 'git']]

RUN = "import sys\nfrom llmsurgery.cli import llmsurgery_compact\nif __name__ == '__main__': sys.exit(llmsurgery_compact())\n"

def run(code, args, home, cwd):
    "`(status, stdout, stderr)` of the command of the tree `code` with `args`, HOME and the XDG folders at `home`"
    env = dict(os.environ, PYTHONPATH=str(code), HOME=str(home), XDG_DATA_HOME=str(home/'data'),
               XDG_STATE_HOME=str(home/'state'), XDG_CONFIG_HOME=str(home/'config'), CLAUDE_CONFIG_DIR=str(home/'.claude'),
               CODEX_HOME=str(home/'.codex'), GEMINI_CLI_HOME=str(home))
    script = home/'bin'/'llmsurgery-compact'   # the console script, as pip writes it
    script.parent.mkdir(exist_ok=True)
    script.write_text(RUN)
    r = subprocess.run([sys.executable, '-P', script, *args], capture_output=True, env=env, cwd=cwd, timeout=600)
    return r.returncode, r.stdout, r.stderr.replace(str(code).encode(), b'<code>')

def own_hosts(rev, code):
    "Give the tree `code`, extracted from `rev`, the hosts `rev` registers: its entry points, ahead of the installed ones"
    import tomllib
    eps = tomllib.loads(subprocess.run(['git', '-C', str(root), 'show', f'{rev}:pyproject.toml'], capture_output=True,
                                       text=True, check=True).stdout)['project'].get('entry-points', {})
    d = Path(code)/'llmsurgery-0.dist-info'   # found on PYTHONPATH before the installed distribution of the same name
    d.mkdir()
    (d/'METADATA').write_text('Metadata-Version: 2.1\nName: llmsurgery\nVersion: 0\n')
    (d/'entry_points.txt').write_text(''.join(f'[{g}]\n' + ''.join(f'{k} = {v}\n' for k,v in ep.items()) + '\n'
                                              for g,ep in eps.items()))

def oc_case(home):
    "The genuine opencode store put where opencode keeps it under `home`, and its session's id"
    db = root/'tests'/'data'/'genuine'/'opencode.db'
    if not db.is_file(): return None
    (home/'data'/'opencode').mkdir(parents=True, exist_ok=True)
    shutil.copy(db, home/'data'/'opencode'/'opencode.db')
    import sqlite3
    with sqlite3.connect(db) as c: return c.execute('select id from session').fetchone()[0]

def cases(home):
    "`(label, args)` of every run"
    out = [(f'{p.name} {" ".join(a)}', [str(p), *a]) for p in inputs() for a in runs(p)]
    if sid := oc_case(home): out += [(f'opencode {sid} {" ".join(a)}', [sid, *a]) for a in ([], ['--all'], ['--show', '1-9'])]
    return out

def results(code, home, cwd):
    "`{label: sha256 of status, stdout and stderr}` of every run with the tree `code`"
    res = {}
    for label,args in cases(home):
        st,out,err = run(code, args, home, cwd)
        res[label] = hashlib.sha256(b'%d\0%s\0%s' % (st, out, err)).hexdigest()
    return res

def main(rev):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        old,home,cwd = d/'old',d/'home',d/'cwd'
        for f in (old, home, cwd): f.mkdir()
        subprocess.run(f'git -C {root} archive {rev} llmsurgery | tar -x -C {old}', shell=True, check=True)
        own_hosts(rev, old)   # not the working tree's hosts, which the installed metadata names
        before,after = results(old, home, cwd),results(root, home, cwd)
    diff = [k for k in before if before[k]!=after.get(k)]
    print(f'{len(before)-len(diff)} of {len(before)} runs byte-identical to {rev}')
    for k in diff: print(f'differs: {k}')
    return 1 if diff else 0

if __name__=='__main__': sys.exit(main(sys.argv[1] if len(sys.argv)>1 else 'main'))
