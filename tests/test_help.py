"`llmsurgery-compact --help` reads as a command's help: placeholders for what an option takes, the hosts each host option accepts, and defaults only where they say something."
import os, re, subprocess, sys
from pathlib import Path
from llmsurgery.sessions import host_registry

exe = Path(sys.executable).absolute().parent/'llmsurgery-compact'

def run(*args):
    p = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60, env=dict(os.environ, COLUMNS='200'))
    return p.returncode,p.stdout,p.stderr

def options(help_text):
    "`{--flag: 'its placeholder or choices'}` from the options section of `help_text`"
    return {m[1]: m[2] for m in re.finditer(r'^  (--[\w-]+)(?: (\S+))?', help_text.split('options:')[1], re.M)}

def test_placeholders_and_choices():
    rc,o,e = run('--help')
    assert (rc, e) == (0, '')
    opts,hosts = options(o),'{' + ','.join(host_registry) + '}'
    assert {k: opts[k] for k in ('--out', '--max-tokens', '--last-n', '--user-toks', '--since', '--grep', '--show')} == {
        '--out': 'FILE', '--max-tokens': 'N', '--last-n': 'N', '--user-toks': 'N', '--since': 'EARLIER.md', '--grep': 'REGEX', '--show': 'N[-M]'}
    for k in ('--host', '--to', '--install-hooks', '--uninstall-hooks'): assert opts[k] == hosts, (k, opts[k])
    assert opts['--all'] is None and opts['--report'] is None   # flags take nothing
    assert '[SESSION]' in o.split('\n\n')[0]

def test_plain_defaults():
    rc,o,e = run('--help')
    for bad in ('(str)', '(int)', '(default: False)', "(default: '')", 'when larger'): assert bad not in o, bad
    assert '(default 5)' in o and 'fitted to 40,000' in o

def test_choices_are_shown_not_enforced():
    "A host that is not there gets the command's own one line, in its words (the choices in --help only show them)"
    rc,o,e = run('--install-hooks', 'gemini-not-a-host')
    assert (rc, o) == (2, '')
    assert e.startswith("llmsurgery-compact: error: unknown host 'gemini-not-a-host'") and len(e.splitlines()) == 1, e

def help_of(help_text, arg):
    "The help of `arg` (`--flag` or `SESSION`) in `help_text`, on one line: from its line to the next argument's"
    m = re.search(rf'^  {arg}\b(.*?)(?=^  \S|\Z)', help_text, re.M|re.S)
    return ' '.join(m[1].split())

def test_host_options_name_every_host():
    "The help of the host options speaks of any host, not of Claude Code and Codex alone: --exec names each host's command"
    rc,o,e = run('--help')
    h = {k: help_of(o, k) for k in ('SESSION', '--to', '--exec', '--install-hooks')}
    for k in h: assert 'Claude Code or Codex' not in h[k] and 'or codex' not in h[k], (k, h[k])
    for n in host_registry: assert f'`{n} ' in h['--exec'], (n, h['--exec'])
    assert 'a Codex thread in Claude Code' not in h['--to'] and 'opencode' in h['--install-hooks']
