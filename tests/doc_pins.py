"""Pinned documents: what the speed-ups must leave byte for byte unchanged.

`python tests/doc_pins.py --write` records the sha256 of each document below into `tests/data/doc_pins.json`;
`tests/test_pins.py` recomputes them. Rewrite the pins only in a commit that means to change documents, and say so."""
import hashlib, json, sys, warnings
from pathlib import Path
from llmsurgery.sessions import read_session
from llmsurgery.document import continuation_doc, compaction_report, report_line
from llmsurgery.files import atomic_write

root = Path(__file__).resolve().parent.parent
pin_file = root/'tests'/'data'/'doc_pins.json'

real_dir = root/'tests'/'data'/'claude-real'   # real Claude Code sessions (MIT, see its SOURCES.md)

def inputs():
    "The bundled examples, the genuine host sessions, and the real sessions"
    fs = sorted((root/'examples').glob('*.jsonl')) + sorted((root/'tests'/'data'/'genuine').glob('*.jsonl'))
    return fs + sorted(real_dir.glob('*.jsonl'))

policies = {'default': {}, 'tight': dict(result_toks=10, call_toks=20, asst_toks=40, user_toks=200, last_n=2),
            'loose': dict(result_toks=120, call_toks=200, asst_toks=400, last_n=8)}
cases = [(all_, mt, pol) for all_ in (False, True) for mt in (None, 900, 6000) for pol in policies]

def sha(s): return hashlib.sha256(s.encode('utf-8', 'surrogatepass')).hexdigest()

def documents(path):
    "`{case: sha256}` of the documents and report lines of session `path`, one per case"
    res = {}
    for all_ in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            s = read_session(path, whole=all_)
        for mt in (None, 900, 6000):
            for name,pol in policies.items():
                doc = continuation_doc(s.msgs, path.name, max_toks=mt, cwd=s.cwd, task=getattr(s, 'task', None),
                                       nums=s.nums, **pol)
                r = compaction_report(doc, host_toks=s.host_toks, host=s.host)
                res[f'all={all_} max_toks={mt} {name}'] = sha(doc.text + '\n' + report_line(r))
    return res

def compute(): return {p.name: documents(p) for p in inputs()}

def pinned(): return json.loads(pin_file.read_text())

def changed(path, pins=None):
    "The cases of session `path` whose document differs from its pin (a missing or extra case counts too)"
    want,got = (pins or pinned())[path.name],documents(path)
    return sorted(k for k in want.keys() | got.keys() if want.get(k)!=got.get(k))

if __name__ == '__main__':
    if '--write' not in sys.argv: sys.exit('usage: python tests/doc_pins.py --write   (rewrites tests/data/doc_pins.json)')
    atomic_write(pin_file, (json.dumps(compute(), indent=1, sort_keys=True) + '\n').encode())
    print(f'wrote {pin_file}')
