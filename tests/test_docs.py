"The rendered docs build: nbdev's processors (`nbdev-proc-nbs`, the deploy workflow's first stage) run every notebook on a fresh copy of the repository, from its root as the workflow does, not from nbs/ as nbdev-test does."
import shutil, subprocess, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
bin_ = Path(sys.executable).absolute().parent

def fresh_copy(dest):
    "The repository's files (tracked, or new and not ignored) copied to `dest`, as a fresh clone of this work tree would have them"
    p = subprocess.run(['git', 'ls-files', '-co', '--exclude-standard', '-z'], cwd=root, capture_output=True, text=True)
    if p.returncode: shutil.copytree(root, dest, ignore=shutil.ignore_patterns('.*', '_proc', '_docs', '*.egg-info'))   # not a git checkout
    for f in filter(None, p.stdout.split('\0') if not p.returncode else []):
        if not (root/f).is_file(): continue   # deleted in the work tree
        (dest/f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root/f, dest/f)
    return dest

def test_proc_nbs_from_a_fresh_copy(tmp_path):
    repo = fresh_copy(tmp_path/'repo')
    p = subprocess.run([str(bin_/'nbdev-proc-nbs'), '--n-workers', '1'], cwd=repo, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    notebooks = sorted(f.name for f in (root/'nbs').glob('*.ipynb'))
    assert sorted(f.name for f in (repo/'_proc').glob('*.ipynb')) == notebooks   # every page was processed

def test_outputs_show_no_local_folder():
    "Stored outputs show the repository's files as from its root, not in the folder of whoever ran the notebook, nor a temporary one"
    import json, re
    local = re.compile(r'/[\w.+-]+/(?:examples|tests/data)/[\w.-]+\.jsonl|/\.venv/bin/python\S* -P -m llmsurgery\.hooks|/tmp/tmp\w+')
    def text(o): return ''.join(o.get('text', '')) + ''.join(o.get('data', {}).get('text/plain', ''))
    found = [(nb.name, c.get('id'), m) for nb in sorted((root/'nbs').glob('*.ipynb')) for c in json.loads(nb.read_text())['cells']
             for o in c.get('outputs', []) for m in local.findall(text(o))]
    assert not found, found
