"`llmsurgery-compact --help` reads as a command's help: placeholders for what an option takes, the hosts each host option accepts, and defaults only where they say something."
import os, re, subprocess, sys
from pathlib import Path
from llmsurgery.hosts.base import hosts
host_registry = [h.name for h in hosts()]

exe = Path(sys.executable).absolute().parent/'llmsurgery-compact'

def run(*args):
    p = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=60, env=dict(os.environ, COLUMNS='200'))
    return p.returncode,p.stdout,p.stderr

def options(help_text):
    "`{--flag: 'its placeholder or choices'}` from the options section of `help_text`"
    return {m[1]: m[2] for m in re.finditer(r'^  (?:-\w, )?(--[\w-]+)(?: (\S+))?', help_text.split('options:')[1], re.M)}

def test_placeholders_and_choices():
    rc,o,e = run('--help')
    assert (rc, e) == (0, '')
    opts,hosts = options(o),'{' + ','.join(host_registry) + '}'
    assert {k: opts[k] for k in ('--out', '--max-tokens', '--last-n', '--user-toks', '--since', '--grep', '--show')} == {
        '--out': 'FILE', '--max-tokens': 'N', '--last-n': 'N', '--user-toks': 'N', '--since': 'EARLIER.md', '--grep': 'REGEX', '--show': 'N[-M]'}
    for k in ('--host', '--to', '--install-hooks', '--uninstall-hooks'): assert opts[k] == hosts, (k, opts[k])
    assert opts['--all'] is None and opts['--report'] is None   # flags take nothing
    assert re.search(r'^  -a, --all ', o, re.M) and re.search(r'^  -l, --list ', o, re.M)   # and the common ones have a short form
    assert '[SESSION]' in o.split('\n\n')[0]

def test_plain_defaults():
    rc,o,e = run('--help')
    o = ' '.join(o.split())   # as read: where argparse wraps a line depends on the longest option
    for bad in ('(str)', '(int)', '(default: False)', "(default: '')", 'when larger'): assert bad not in o, bad
    assert '(default 5)' in o and 'fitted to 40,000' in o

def test_choices_are_shown_not_enforced():
    "A host that is not there gets the command's own one line, in its words (the choices in --help only show them)"
    rc,o,e = run('--install-hooks', 'gemini-not-a-host')
    assert (rc, o) == (2, '')
    assert e.startswith("llmsurgery-compact: error: unknown host 'gemini-not-a-host'") and len(e.splitlines()) == 1, e

def help_of(help_text, arg):
    "The help of `arg` (`--flag` or `SESSION`) in `help_text`, on one line: from its line to the next argument's"
    m = re.search(rf'^  (?:-\w, )?{arg}\b(.*?)(?=^  \S|\Z)', help_text, re.M|re.S)
    return ' '.join(m[1].split())

def test_host_options_name_every_host():
    "The help speaks of any host: it names none but in the choices, which list every host the registry has"
    rc,o,e = run('--help')
    h = {k: help_of(o, k) for k in ('SESSION', '--to', '--exec', '--install-hooks', '--host')}
    for k,t in h.items():
        words = t.split('}', 1)[-1]   # past the choices
        assert not [n for n in host_registry if re.search(rf'\b{n}\b', words, re.I)], (k, t)
    assert all(','.join(host_registry) in h[k] for k in ('--to', '--install-hooks', '--host'))
