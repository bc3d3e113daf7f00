"""Regenerate tests/data/genuine/: session files written by the real host CLIs themselves, offline (see hostkit.py).

    python tests/make_genuine.py [OUTDIR]

- claude_bash.jsonl     Claude Code 2.1.328, 2 turns: a Bash tool call that really ran (tool_use / tool_result), then a reply;
                        the second turn is `claude -p --resume ID`, appended by the host to the same file.
- codex_exec.jsonl      Codex 0.169.0, 1 turn: an exec_command call that really ran (function_call / function_call_output).
- claude_resumed.jsonl  a compacted copy written by hostkit.write_claude_resume, then resumed once by the host (it appends).
- codex_resumed.jsonl   the same for Codex (hostkit.write_codex_resume, then `codex exec resume ID`).
They hold only temporary paths (/tmp/...). Each is < 60 KB.
"""
import shutil, sys, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostkit import (install_hosts, AnthropicMock, ResponsesMock, run_claude, run_codex, bash, exec_command, text,
                     claude_sessions, codex_rollouts, codex_home, read_jsonl, write_claude_resume, write_codex_resume)

DOC = ('This session is being continued from a previous conversation. Summary: the user asked to list the files; '
       '`ls` printed notes.txt.')

def check(rc, out, err, what):
    if rc: raise SystemExit(f'{what} failed (rc={rc}):\n{out}\n{err[-3000:]}')

def make(outdir):
    outdir = Path(outdir); outdir.mkdir(parents=True, exist_ok=True)
    cl, cx = install_hosts()
    with tempfile.TemporaryDirectory(prefix='llmsurgery-genuine-') as d:
        d = Path(d)
        cwd = d/'project'; cwd.mkdir(); (cwd/'notes.txt').write_text('buy milk\n')
        # Claude Code: turn 1 runs Bash for real, turn 2 resumes the session
        home = d/'claude-home'
        with AnthropicMock([bash('ls', 'List files'), text('There is one file: notes.txt.')]) as s:
            check(*run_claude(cl, home, cwd, 'What files are here?', s, '--allowedTools', 'Bash'), 'claude turn 1')
        src, = claude_sessions(home)
        with AnthropicMock([text('It holds a shopping list.')]) as s:
            check(*run_claude(cl, home, cwd, 'What is notes.txt?', s, '--resume', src.stem), 'claude turn 2')
        shutil.copyfile(src, outdir/'claude_bash.jsonl')
        new = write_claude_resume(read_jsonl(src), DOC, src.parent)
        with AnthropicMock([text('Yes: notes.txt.')]) as s:
            check(*run_claude(cl, home, cwd, 'Which file did we find?', s, '--resume', new), 'claude resume')
        shutil.copyfile(src.parent/f'{new}.jsonl', outdir/'claude_resumed.jsonl')
        # Codex: one turn with exec_command run for real
        home = d/'codex-home'
        with ResponsesMock([exec_command('ls'), text('There is one file: notes.txt.')]) as s:
            check(*run_codex(cx, home, cwd, 'What files are here?', s, '--dangerously-bypass-approvals-and-sandbox'), 'codex turn 1')
        src, = codex_rollouts(home)
        shutil.copyfile(src, outdir/'codex_exec.jsonl')
        new = write_codex_resume(read_jsonl(src), DOC, codex_home(home))
        with ResponsesMock([text('Yes: notes.txt.')]) as s:
            check(*run_codex(cx, home, cwd, 'Which file did we find?', s, 'resume', new), 'codex resume')
        shutil.copyfile(next(p for p in codex_rollouts(home) if new in p.name), outdir/'codex_resumed.jsonl')
    for p in sorted(outdir.glob('*.jsonl')):
        print(f'{p}: {p.stat().st_size} bytes')
        assert p.stat().st_size < 60_000, p

if __name__ == '__main__':
    make(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent/'data'/'genuine')
