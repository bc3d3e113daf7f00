"""A hook that lets an event pass decides from the event with the standard library alone: run as `--install-hooks`
writes each host's command, or with no gate at all (as by hand, or as an older llmsurgery wrote it), on an event that
asks for nothing, it imports no host, no installer and none of the libraries a job needs (fastcore, aidialog, asyncio,
importlib.metadata, tiktoken), and says nothing. A command with no gate goes by `llmsurgery._gates`, made from the
hosts' modules: it must be current."""
import json, os, subprocess, sys
from pathlib import Path
import pytest
from llmsurgery.hosts.base import hosts
from llmsurgery.hookgate import event_args, gate_table
from llmsurgery.install import hook_hosts

HEAVY = ('fastcore', 'aidialog', 'asyncio', 'importlib.metadata', 'tiktoken', 'llmsurgery.install', 'llmsurgery.hosts',
         'llmsurgery.hookstate', 'llmsurgery.service', 'llmsurgery.jsonl')

def gated(host):
    "The events of `host` whose every hook is gated, with the options `--install-hooks` gives their command"
    return [(ev, event_args(host, ev)) for ev in host.hook_events if all(h.when or h.new for h in host.event_hooks(ev))]

cases = [(h.name, ev, args) for h in hosts() for ev,args in gated(h)]
plain = [(n, ev, []) for n,ev,_ in cases] + [(h.name, 'NoSuchEvent', []) for h in hook_hosts()]   # a command, no gate

def imported(stderr):
    "The modules `-X importtime` says were imported"
    return [l.split('|')[-1].strip() for l in stderr.splitlines() if l.startswith('import time:') and '|' in l][1:]

def test_cases_cover_the_hosts_that_gate():
    assert {'claude', 'codex', 'gemini', 'qwen', 'copilot'} <= {n for n,_,_ in cases}

@pytest.mark.parametrize('name,ev,args', cases+plain, ids=[f'{n}-{e}{"" if a else "-bare"}' for n,e,a in cases+plain])
def test_a_passing_event_imports_nothing_heavy(name, ev, args, tmp_path):
    transcript = tmp_path/'t.jsonl'
    transcript.write_text('{"type": "user"}\n')
    inp = dict(hook_event_name=ev, prompt='fix the parser', source='startup', session_id='t', sessionId='t',
               cwd=str(tmp_path), transcript_path=str(transcript), timestamp=0)
    env = dict(os.environ, HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path/'state'), XDG_CONFIG_HOME=str(tmp_path/'cfg'))
    p = subprocess.run([sys.executable, '-X', 'importtime', '-P', '-m', 'llmsurgery.hooks', name, *args],
                       input=json.dumps(inp), capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0 and p.stdout == '', (p.returncode, p.stdout)
    mods = imported(p.stderr)
    assert 'llmsurgery.hookgate' in mods   # the gate decided
    heavy = [m for m in mods if m.startswith(HEAVY)]
    assert not heavy, f'{name} {ev}: the pass-through imported {heavy}'

def test_the_gate_table_is_the_hosts():
    "The table a command with no gate goes by holds each built-in host's gates as its module says them"
    from llmsurgery._gates import gates
    own = [h for h in hook_hosts() if type(h).__module__.startswith('llmsurgery.hosts.')]
    assert gates == gate_table(own), 'llmsurgery/_gates.py is stale: run tools/gates.py'
    assert len(gates) >= 7 and all(isinstance(a, list) for evs in gates.values() for a in evs.values())
