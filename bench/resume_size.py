"""What `llmsurgery-compact --resume` saves the model, measured with the real Claude Code (offline, loopback mock):
the request the host sends when resuming the NEW session, against the one it sends when resuming the original (forked, so
the original stays untouched), from the same run. Sizes: the request body in bytes, and o200k tokens of its `messages`.

    python bench/resume_size.py [SESSION.jsonl] [extra llmsurgery-compact options...]
"""
import hashlib, json, os, subprocess, sys, tempfile, shutil
from pathlib import Path
root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root/'tests'))
from hostkit import install_hosts, sandbox_env, AnthropicMock, run_claude, text
from llmsurgery.hosts.claude import project_dirname
from llmsurgery.toks import len_toks

SRC = root/'tests'/'data'/'claude-real'/'258c7280-ae70-4798-800f-63464d01a85d.jsonl'

def request(cl, home, work, sid, *extra):
    "The first model request `claude -p --resume SID` sends, or the failure"
    with AnthropicMock([text('ok')]) as s:
        rc, out, err = run_claude(cl, home, work, 'Continue where we left off.', s, '--resume', sid, *extra, timeout=180)
    if rc or not s.model_requests(): raise SystemExit(f'claude --resume {sid} failed (rc={rc}): {err[-2000:]}')
    return s.model_requests()[0]['body']

def size(body):
    msgs = json.dumps(body['messages'], ensure_ascii=False)
    return len(json.dumps(body, ensure_ascii=False).encode()), len_toks(msgs), len(body['messages'])

def main(src=SRC, *opts):
    cl, _ = install_hosts()
    with tempfile.TemporaryDirectory(prefix='resume-size-') as d:
        d = Path(d); home, work = d/'home', d/'work'; work.mkdir()
        env = sandbox_env(home)
        proj = home/'.claude'/'projects'/project_dirname(work.resolve()); proj.mkdir(parents=True)
        copy = proj/Path(src).name; shutil.copyfile(src, copy)
        h = hashlib.sha256(copy.read_bytes()).hexdigest()
        p = subprocess.run([str(Path(sys.executable).parent/'llmsurgery-compact'), '--resume', *opts], cwd=work, env=env,
                           capture_output=True, text=True, timeout=600)
        if p.returncode: raise SystemExit(p.stderr)
        new = p.stdout.split()[-1]
        print(p.stderr.strip(), '\n', p.stdout.strip(), sep='')
        resumed = request(cl, home, work, new)
        original = request(cl, home, work, copy.stem, '--fork-session')
        assert hashlib.sha256(copy.read_bytes()).hexdigest() == h, 'the original changed'
        for name, body in (('original', original), ('--resume', resumed)):
            b, t, n = size(body)
            print(f'{name:>9}: request {b:,} bytes; messages {t:,} o200k tokens in {n} entries')
        (bo, to, _), (br, tr, _) = size(original), size(resumed)
        print(f'   saving: {bo/br:.1f}x bytes, {to/tr:.1f}x message tokens')

if __name__ == '__main__': main(*sys.argv[1:])
