"""Regenerate tests/data/genuine/: session files written by the real host CLIs themselves, offline (see hostkit.py).

    python tests/make_genuine.py [OUTDIR] [NAME ...]     (NAME: claude, codex, command; default all)

- claude_bash.jsonl     Claude Code 2.1.328, 2 turns: a Bash tool call that really ran (tool_use / tool_result), then a reply;
                        the second turn is `claude -p --resume ID`, appended by the host to the same file.
- codex_exec.jsonl      Codex 0.169.0, 1 turn: an exec_command call that really ran (function_call / function_call_output).
- claude_resumed.jsonl  a compacted copy written by hostkit.write_claude_resume, then resumed once by the host (it appends).
- codex_resumed.jsonl   the same for Codex (hostkit.write_codex_resume, then `codex exec resume ID`).
- claude_command.jsonl  Claude Code 2.1.328 running a custom slash command (`<cwd>/.claude/commands/triage.md`) given
                        arguments: `claude -p "/triage the parser drops the last row"`, then one more prompt.
They hold only temporary paths (/tmp/...). Each is < 60 KB.
"""
import shutil, sys, tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hostkit import (install_hosts, AnthropicMock, ResponsesMock, run_claude, run_codex, bash, exec_command, text,
                     claude_sessions, codex_rollouts, codex_home, read_jsonl, write_claude_resume, write_codex_resume)

DOC = ('This session is being continued from a previous conversation. Summary: the user asked to list the files; '
       '`ls` printed notes.txt.')
COMMAND = 'Triage the bug described here: $ARGUMENTS\n\nList the likely causes first.\n'   # the custom command's file

def check(rc, out, err, what):
    if rc: raise SystemExit(f'{what} failed (rc={rc}):\n{out}\n{err[-3000:]}')

def make_claude(cl, d, cwd, outdir):
    "claude_bash.jsonl and claude_resumed.jsonl"
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

def make_codex(cx, d, cwd, outdir):
    "codex_exec.jsonl and codex_resumed.jsonl"
    home = d/'codex-home'
    with ResponsesMock([exec_command('ls'), text('There is one file: notes.txt.')]) as s:
        check(*run_codex(cx, home, cwd, 'What files are here?', s, '--dangerously-bypass-approvals-and-sandbox'), 'codex turn 1')
    src, = codex_rollouts(home)
    shutil.copyfile(src, outdir/'codex_exec.jsonl')
    new = write_codex_resume(read_jsonl(src), DOC, codex_home(home))
    with ResponsesMock([text('Yes: notes.txt.')]) as s:
        check(*run_codex(cx, home, cwd, 'Which file did we find?', s, 'resume', new), 'codex resume')
    shutil.copyfile(next(p for p in codex_rollouts(home) if new in p.name), outdir/'codex_resumed.jsonl')

def make_command(cl, d, cwd, outdir):
    "claude_command.jsonl: a custom command with arguments (slash commands on: not the quick flags), then a plain prompt"
    (cwd/'.claude'/'commands').mkdir(parents=True, exist_ok=True)
    (cwd/'.claude'/'commands'/'triage.md').write_text(COMMAND)
    home, quick = d/'claude-command-home', ('--tools', 'Bash', '--system-prompt', 'You are a test assistant.')
    with AnthropicMock([text('Likely causes: an off-by-one in the loop.')]) as s:
        check(*run_claude(cl, home, cwd, '/triage the parser drops the last row', s, *quick, quick=False), 'claude command')
    src, = claude_sessions(home)
    with AnthropicMock([text('Start with the loop bound.')]) as s:
        check(*run_claude(cl, home, cwd, 'Which cause first?', s, '--resume', src.stem, *quick, quick=False), 'claude turn 2')
    shutil.copyfile(src, outdir/'claude_command.jsonl')

def make(outdir, names=('claude', 'codex', 'command')):
    outdir = Path(outdir); outdir.mkdir(parents=True, exist_ok=True)
    cl, cx = install_hosts()
    with tempfile.TemporaryDirectory(prefix='llmsurgery-genuine-') as d:
        d = Path(d)
        cwd = d/'project'; cwd.mkdir(); (cwd/'notes.txt').write_text('buy milk\n')
        if 'claude' in names: make_claude(cl, d, cwd, outdir)
        if 'codex' in names: make_codex(cx, d, cwd, outdir)
        if 'command' in names: make_command(cl, d, cwd, outdir)
    for p in sorted(outdir.glob('*.jsonl')):
        print(f'{p}: {p.stat().st_size} bytes')
        assert p.stat().st_size < 60_000, p

if __name__ == '__main__':
    args = sys.argv[1:]
    out = args.pop(0) if args and args[0] not in ('claude', 'codex', 'command') else Path(__file__).resolve().parent/'data'/'genuine'
    make(out, args or ('claude', 'codex', 'command'))
