"""Installed for daily use as the README says: `uv tool install` from a clone into a fresh HOME, with only the package
registries, then `--install-hooks claude`; the installed hook runs on a real session with the tool's own interpreter, and
still runs after an upgrade (`uv tool install --reinstall`). uv itself is installed once from PyPI, pinned, into a cache
outside the repository, as tests/hostkit.py installs the host CLIs."""
import json, os, shutil, subprocess, sys, tempfile
from pathlib import Path
import pytest
from test_docs import fresh_copy

root = Path(__file__).resolve().parent.parent
UV_VER = '0.13.8'
SESSION = root/'tests'/'data'/'claude-real'/'258c7280-ae70-4798-800f-63464d01a85d.jsonl'
_cache = Path(os.environ.get('XDG_CACHE_HOME') or Path.home()/'.cache')/'llmsurgery'   # the real user's, read before a test moves HOME
python = getattr(sys, '_base_executable', sys.executable)   # a plain Python 3.12, not this venv's

def install_uv():
    "Path of a `uv` binary pinned at UV_VER, installed once from PyPI into the cache (atomically: a temp folder, then a rename)"
    dest = _cache/'tools'/f'uv-{UV_VER}'
    if not (dest/'bin'/'uv').is_file():
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix='.tmp-uv-', dir=dest.parent))
        r = subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--target', str(tmp), f'uv=={UV_VER}'],
                           capture_output=True, text=True, timeout=300)
        if r.returncode: shutil.rmtree(tmp, ignore_errors=True); raise RuntimeError(f'pip install uv=={UV_VER} failed (is PyPI reachable?): {r.stderr[-800:]}')
        try: tmp.rename(dest)
        except OSError: shutil.rmtree(tmp, ignore_errors=True)   # another run installed it first
    return dest/'bin'/'uv'

@pytest.fixture
def home(tmp_path):
    "A fresh HOME, and an environment with nothing of this checkout's venv on PATH"
    h = tmp_path/'home'
    h.mkdir()
    keep = {k: v for k,v in os.environ.items() if not k.startswith(('XDG_', 'CLAUDE', 'CODEX', 'VIRTUAL_ENV', 'PYTHON', 'UV_'))}
    env = dict(keep, HOME=str(h), PATH='/usr/local/bin:/usr/bin:/bin', UV_CACHE_DIR=str(_cache/'uv'), UV_PYTHON_DOWNLOADS='never')
    return h,env

def sh(args, env, **kw):
    p = subprocess.run(list(map(str, args)), env=env, capture_output=True, text=True, timeout=300, **kw)
    assert p.returncode == 0, (args, p.stdout[-2000:], p.stderr[-2000:])
    return p.stdout

def run_hook(cmd, env, cwd):
    "The hook command `cmd`, run by a shell as Claude Code runs it, on a SessionStart after /compact of the real session"
    ev = dict(hook_event_name='SessionStart', source='compact', session_id=SESSION.stem, transcript_path=str(SESSION), cwd=str(cwd))
    p = subprocess.run(['sh', '-c', cmd], input=json.dumps(ev), env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert (p.returncode, p.stderr) == (0, ''), p.stderr
    return json.loads(p.stdout)['hookSpecificOutput']['additionalContext']

def test_uv_tool_install_then_hooks(tmp_path, home):
    h,env = home
    uv,clone = install_uv(),fresh_copy(tmp_path/'clone')
    sh([uv, 'tool', 'install', '--python', python, clone], env)
    exe = h/'.local'/'bin'/'llmsurgery-compact'
    assert sh([exe, '--version'], env).startswith('llmsurgery-compact ')
    said = sh([exe, '--install-hooks', 'claude'], env, cwd=tmp_path)
    tool_py = Path(sh([uv, 'tool', 'dir'], env).strip())/'llmsurgery'/'bin'/'python'
    cmd = json.loads((h/'.claude'/'settings.json').read_text())['hooks']['SessionStart'][0]['hooks'][0]['command']
    assert cmd.startswith(f'{tool_py} ') and str(tool_py) in said   # the hook pins the tool's own interpreter
    assert "llmsurgery's state of the part of this session that was just compacted" in run_hook(cmd, env, tmp_path)
    sh([uv, 'tool', 'install', '--reinstall', '--python', python, clone], env)   # an upgrade from the clone keeps the path
    assert 'Task (the first prompt typed)' in run_hook(cmd, env, tmp_path)
    sh([exe, '--uninstall-hooks', 'claude'], env, cwd=tmp_path)   # remove: the hooks first, then the tool
    sh([uv, 'tool', 'uninstall', 'llmsurgery'], env)
    s = h/'.claude'/'settings.json'
    assert not exe.exists() and (not s.exists() or 'llmsurgery' not in s.read_text())
