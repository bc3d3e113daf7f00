"""Quality of llmsurgery's continuation documents beside Claude Code's own compaction summaries, by a mechanical fact score.

Run: `.venv/bin/python bench/quality.py [--data DIR] [--json out.json] [--explain] [--rev REV]`. Offline; writes only to
a temp dir (and to `--json`). Not part of the test suite. `--explain` lists each of our documents' lost facts, its tokens
by message class (parsed from the DSL) and waste diagnostics; `--rev HEAD` measures the llmsurgery of that git revision
(unpacked into the temp dir) instead of the installed one.

Cases. Every top-level `*.jsonl` in the data dir (default `tests/data/claude-real/`) is scanned for
`{"type":"system","subtype":"compact_boundary"}` records. Each boundary is one case: the records since the previous
boundary (or since the start of the file, for the first one), up to but excluding the boundary, against the host's
summary, the first user record after the boundary flagged `isCompactSummary` (its whole text, counted in o200k).
Documents per case: `host` (that summary); `ours 0.25x`, `ours 0.5x`, `ours 1x` and `ours 2x` (`compact_doc(s.msgs, path, max_toks=N,
cwd=s.cwd, nums=s.nums)`, numbered as the command's, with N a quarter, a half, one and two times the summary's tokens: at 2x every fact fits, so the half shows what a fit
drops), where `s = read_session(path, all=True)` of a temp JSONL holding exactly the case's original lines; the
document names the original session file as its transcript, so its size does not depend on the temp dir's random
name); `ours default` (`compact_doc` with no `max_toks`, as a reference); and `host summary + our hook`: the summary
followed by what llmsurgery's SessionStart(compact) hook adds after that compaction (`compacted_state` of the temp
JSONL, which is what the file held when the host compacted: the state, then a document of what a summary loses, within
Claude Code's 10,000 characters). The hook's wall time is measured as the host runs it, a new `python -P -m
llmsurgery.hooks claude` process reading the event from stdin.

Extraction rules (from the raw records of a case; sidechain records are skipped; facts are de-duplicated per category by
their match key):
- prompts: the text the person typed. (a) `user` records that are not `isMeta` nor `isCompactSummary`: a string content,
  or each `text` block of a list content; (b) `queue-operation` records with `operation: "enqueue"` and a string
  `content` (prompts typed while the agent was busy are stored only there); (c) in a `tool_result`, the text after
  "the user said:" (feedback typed when rejecting a tool use). `<system-reminder>…</system-reminder>` blocks are cut
  out first; a text is then excluded when it starts with `<command-name>`, `<command-message>`, `<command-args>`,
  `<local-command-stdout>`, `<local-command-stderr>`, `<task-notification>`, `<user-prompt-submit-hook>`,
  `[Request interrupted by user`, `Base directory for this skill:`, `Caveat: The messages below were generated`, or
  `This session is being continued from a previous conversation`; or when it is empty.
- paths: `file_path` (or `notebook_path`) of Edit, Write, MultiEdit and NotebookEdit `tool_use` inputs.
- commands: the first non-empty line of each Bash `tool_use` `command`, with ` 2>&1`, ` 2>/dev/null` and a trailing
  `| tail -N` / `| head -N` removed (so `mix test 2>&1 | tail -5` is the fact `mix test`).
- errors: each `tool_result` block with `is_error: true`; its text's first line containing `error`, `Error`, `ERROR`,
  `FAILED`, `failed`, `Failed`, `Traceback` or `** (` (an Elixir exception), else its first non-empty line;
  `Exit code N` lines are skipped as not distinctive.
- final: the last `text` block of the last assistant record that has one.
- plan: the `content` of each item of the last TodoWrite's `todos`, and the first 3 lines of the last ExitPlanMode
  `plan` that are not blank nor a bare heading of at most two words (such as `## Context`), leading `#`, `-`, `*`, `>`
  markers stripped.
Every fact is whitespace-normalized (runs of whitespace to one space, stripped) and trimmed to 80 characters.

Match rule. The document is normalized: `¶` to a space; the escapes a Python repr adds in call arguments (`\\'`, `\\"`,
`\\\\`, `\\n`, `\\t`) undone; runs of whitespace to one space. A fact is kept when its key, its first 60 characters
(the whole fact when shorter; a path's key is the whole path), occurs verbatim in the normalized document (so a fact
cut by the DSL's ` … ` within its key is lost). A path is kept when the absolute path, or its form relative to any `cwd` seen in the case's records,
occurs with no path character (`[A-Za-z0-9_./-]`) just before it and no word character just after it. A command is
matched against the normalized document with its ` 2>&1` and ` 2>/dev/null` removed too: the fact drops them anywhere in
the line, so a document that quotes the command verbatim could otherwise never match it (`bd ready 2>/dev/null; echo`).
"Facts kept %" pools all facts of all categories; the pooled table sums facts over the cases. "State section whole" counts the
cases whose document has a `## State` section (before `## Conversation`) equal to the one the default policy renders for
the session: present and cut nowhere.
"""
import argparse, inspect, json, os, re, subprocess, sys, tempfile, time
from collections import Counter
from pathlib import Path
sys.dont_write_bytecode = True   # write nothing under the repository

def read_whole(p):
    "Session `p` read whole, by this revision's API or an older one's"
    try: return read_session(p, whole=True)
    except TypeError: return read_session(p, all=True)

def load(rev=None, td=None):
    "Import the API under test: the installed `llmsurgery`, or the one at git revision `rev` of this clone, unpacked into `td`"
    global compact_doc, len_toks, read_session, code_dir
    code_dir = td if rev else None
    if rev:
        repo = Path(__file__).resolve().parent.parent
        tar = subprocess.run(['git', '-C', str(repo), 'archive', rev, 'llmsurgery'], check=True, capture_output=True).stdout
        Path(td).mkdir(parents=True, exist_ok=True)
        subprocess.run(['tar', '-x', '-C', td], input=tar, check=True)
        sys.path.insert(0, td)
    from llmsurgery.compact import compact_doc, len_toks
    from llmsurgery.sessions import read_session
    global hook_addition
    try:
        from llmsurgery.hookstate import compacted_state
        from llmsurgery.hosts.base import host_named
        hook_addition = lambda p: compacted_state(p, host_named('claude'))
    except ImportError: hook_addition = None   # an older revision has no hook

CATS = 'prompts', 'paths', 'commands', 'errors', 'final', 'plan'
KEY = 60
EXCLUDE = ('<command-name>', '<command-message>', '<command-args>', '<local-command-stdout>', '<local-command-stderr>',
           '<task-notification>', '<user-prompt-submit-hook>', '[Request interrupted by user', 'Base directory for this skill:',
           'Caveat: The messages below were generated', 'This session is being continued from a previous conversation')
EDITS = {'Edit', 'Write', 'MultiEdit', 'NotebookEdit'}
_ws = re.compile(r'\s+')
_rem = re.compile(r'<system-reminder>.*?</system-reminder>', re.DOTALL)
_errline = re.compile(r'error|Error|ERROR|FAILED|[Ff]ailed|Traceback|\*\* \(')
_esc = re.compile(r"""\\(['"\\nt])""")

def norm(s): return _ws.sub(' ', s or '').strip()
def fact(s): return norm(s)[:80]
def key(f, cat=None): return f if cat=='paths' else f[:KEY]

def norm_doc(s):
    "The document as facts are matched against it"
    s = _esc.sub(lambda m: ' ' if m[1] in 'nt' else m[1], s.replace('¶', ' '))
    return norm(s)

def typed(s):
    "`s` as a typed prompt, or None"
    s = _rem.sub('', s or '').strip()
    return None if not s or s.startswith(EXCLUDE) else s

def result_text(c):
    if isinstance(c, str): return c
    return '\n'.join(b.get('text', '') for b in c or [] if isinstance(b, dict) and b.get('type')=='text')

def err_fact(s):
    ls = [l.strip() for l in s.splitlines() if l.strip() and not re.fullmatch(r'Exit code -?\d+', l.strip())]
    return fact(next((l for l in ls if _errline.search(l)), ls[0] if ls else ''))

_noise = re.compile(r' 2>&1| 2>/dev/null|\s*\|\s*(?:tail|head)(?: -n)? -?\d+\s*$')
def command(c):
    "The fact for Bash command `c`: its first non-empty line without stderr redirections and a trailing `| tail/head -N`"
    return fact(_noise.sub('', next((l for l in c.splitlines() if l.strip()), '')))

def plan_lines(plan, n=3):
    res = []
    for l in plan.splitlines():
        l = l.strip()
        if not l or (l.startswith('#') and len(l.lstrip('#').split())<=2): continue
        res.append(fact(l.lstrip('#-*> ')))
        if len(res)==n: break
    return res

def extract(recs):
    "`(facts, cwds)`: per category a list of facts in order (de-duplicated by key), and the cwds seen"
    fs,cwds = {c: [] for c in CATS},set()
    final,todos,plan = None,None,None
    def add(c, f):
        if f and key(f, c) not in {key(o, c) for o in fs[c]}: fs[c].append(f)
    for r in recs:
        if r.get('isSidechain'): continue
        if r.get('cwd'): cwds.add(r['cwd'].rstrip('/'))
        t = r.get('type')
        if t=='queue-operation' and r.get('operation')=='enqueue' and isinstance(r.get('content'), str):
            if p := typed(r['content']): add('prompts', fact(p))
        if t not in ('user', 'assistant') or not isinstance(r.get('message'), dict): continue
        c = r['message'].get('content')
        if isinstance(c, str): c = [dict(type='text', text=c)]
        for b in c or []:
            if not isinstance(b, dict): continue
            bt = b.get('type')
            if t=='user':
                if bt=='text' and not r.get('isMeta') and not r.get('isCompactSummary'):
                    if p := typed(b.get('text')): add('prompts', fact(p))
                elif bt=='tool_result':
                    s = result_text(b.get('content'))
                    if (i := s.find('the user said:'))>=0 and (p := typed(s[i+len('the user said:'):])): add('prompts', fact(p))
                    if b.get('is_error'): add('errors', err_fact(s))
            else:
                if bt=='text' and (b.get('text') or '').strip(): final = b['text']
                if bt!='tool_use' or not isinstance(b.get('input'), dict): continue
                name,inp = b.get('name'),b['input']
                if name in EDITS and isinstance(p := inp.get('file_path') or inp.get('notebook_path'), str): add('paths', p)
                if name=='Bash' and isinstance(inp.get('command'), str): add('commands', command(inp['command']))
                if name=='TodoWrite' and isinstance(inp.get('todos'), list): todos = inp['todos']
                if name=='ExitPlanMode' and isinstance(inp.get('plan'), str): plan = inp['plan']
    if final: add('final', fact(final))
    for o in todos or []:
        if isinstance(o, dict): add('plan', fact(o.get('content')))
    if plan: [add('plan', o) for o in plan_lines(plan)]
    return fs, sorted(cwds, key=len, reverse=True)

def path_forms(p, cwds):
    "The absolute path `p` and its forms relative to each cwd it lies under"
    return [p] + [p[len(c)+1:] for c in cwds if p.startswith(c+'/')]

def kept(cat, f, doc, cwds):
    "Is fact `f` of category `cat` in the normalized document `doc`?"
    if cat=='paths': return any(re.search(r'(?<![\w./-])' + re.escape(o) + r'(?!\w)', doc) for o in path_forms(f, cwds))
    return key(f) in doc

_redir = re.compile(r' 2>&1| 2>/dev/null')

def score(doc, fs, cwds):
    d = norm_doc(doc)
    dc = _redir.sub('', d)   # commands are matched with their stderr redirections removed on both sides
    return {c: [(f, kept(c, f, dc if c=='commands' else d, cwds)) for f in fs[c]] for c in CATS}

def find_cases(data):
    "Per boundary: `(name, lines before it since the previous boundary, summary text, file)`"
    cases = []
    for fn in sorted(Path(data).glob('*.jsonl')):
        lines = fn.read_text(encoding='utf-8', errors='replace').splitlines(keepends=True)
        recs = [json.loads(l) if l.strip() else {} for l in lines]
        start,n = 0,0
        for i,r in enumerate(recs):
            if not (r.get('type')=='system' and r.get('subtype')=='compact_boundary'): continue
            summ = next((o for o in recs[i+1:] if o.get('type')=='user' and o.get('isCompactSummary')), None)
            if summ:
                c = summ['message']['content']
                n += 1
                cases.append((f'{fn.stem[:8]}#{n}', lines[start:i], c if isinstance(c, str) else result_text(c), fn))
            start = i+1
    return cases

# --- analysis helpers: where the tokens of a document go, by message class (parsed from the DSL text) ---
_heads = (('§', 'user'), ('»', 'assistant prose'), ('!', 'calls'), ('▶', 'calls'), ('```', 'calls'), ('>', 'results'))

def body_of(doc):
    "The conversation part of a document: after its `## Conversation` heading, before any later section"
    h = '\n\n## Conversation\n\n'
    if (i := doc.find(h))<0: return doc
    b = doc[i+len(h):]
    return b[:min([j for o in ('Notes', 'Skills', 'Transcript') if (j := b.rfind(f'\n\n## {o}\n\n'))>=0], default=len(b))]

def blocks(body):
    "`(class, text)` blocks of a DSL body: user and prose blocks may span lines up to their closing mark"
    res,i,ls = [],0,body.split('\n')
    while i<len(ls):
        l = ls[i]
        if not l.strip() or l=='***': i += 1; continue
        if l.startswith('…') and 'left out' in l: res.append(('dropped marker', l)); i += 1; continue
        cls = next((c for h,c in _heads if l.startswith(h)), 'other')
        j = i
        if cls in ('user', 'assistant prose'):
            m = l[0]
            while not (ls[j].rstrip().endswith(m) and (j>i or len(ls[j].strip())>1)) and j+1<len(ls): j += 1
        elif l.startswith('```'):
            f = re.match(r'`+', l)[0]
            j += 1
            while j<len(ls) and ls[j].strip()!=f: j += 1
        res.append((cls, '\n'.join(ls[i:j+1]))); i = j+1
    return res

def _api(*names):
    "Internals for the analysis only, wherever the package keeps them; None when they are gone"
    import importlib
    for mod in ('llmsurgery.render', 'llmsurgery.compact'):
        try: m = importlib.import_module(mod)
        except ImportError: continue
        if all(hasattr(m, o) for o in names): return [getattr(m, o) for o in names]

def anatomy(doc, msgs, cwds):
    "`(tokens by class, diagnostics)` of document `doc` of `msgs`; blocks that are the whole rendering of one of the last 5 substantive messages count as `tail`"
    if not (f := _api('compact_msg', 'substantive')): return {}, {}
    compact_msg,substantive = f
    whole = {o for m in [m for m in msgs if substantive(m)][-5:] for o in compact_msg(m, None, None, None, None).split('\n')}
    cnt,dg = Counter(),{}
    def note(k, t): n,tk = dg.get(k, (0, 0)); dg[k] = (n+1, tk+len_toks(t))
    for cls,t in blocks(body_of(doc)):
        n = len_toks(t)
        if cls=='user' and typed(t.strip().strip('§').strip()) is None: cls = 'user plumbing (notifications, interrupts)'
        if cls=='results':
            note('results', t)
            if len(re.sub(r'\s| … ', '', t[1:]))<=12: note('results cut to a stub (<=12 chars left)', t)
            if re.fullmatch(r'> The( … \.|( file)? .* has been updated successfully\.)', t): note('"The file … has been updated successfully." results', t)
        cnt[('tail (kept whole): ' if all(o in whole for o in t.split('\n')) else '')+cls] += n
    cnt['legend, headers, separators'] = len_toks(doc)-sum(cnt.values())
    for o in re.findall(r'replace_all=False(?:, )?', doc): note('replace_all=False args', o)
    if cwds:
        for o in re.findall('|'.join(re.escape(c+'/') for c in cwds), doc): note('absolute cwd prefixes', o)
    for o in re.findall(r"file_path='[^'\n]*'", doc): note('file_path args ' + ('cut by " … "' if ' … ' in o else 'whole'), o)
    return dict(cnt), dict(dg)

_parts = (('prompts', ('Task', 'Other prompts', 'Latest request')), ('paths', ('Files changed',)),
          ('commands', ('Commands run',)), ('errors', ('Errors', 'Last error')), ('commits', ('Commits',)),
          ('plan', ('Todos', 'Plan')), ('last words', ('Last assistant',)))
PARTS = ('legend', *(k for k,_ in _parts), 'other state', 'conversation', 'headers, transcript')

def parts(doc):
    "Tokens of document `doc` by part: its legend, each kind of state line, its conversation, the rest"
    cnt = Counter(legend=len_toks(doc.split('\n\n', 1)[0]), conversation=len_toks(body_of(doc)))
    h,c = '\n\n## State\n\n','\n\n## Conversation\n\n'
    head = doc.split(c, 1)[0]
    for l in (head[head.index(h)+len(h):].split('\n') if h in head else []):
        label = l.removeprefix('- ').split(':', 1)[0]
        cnt[next((k for k,ls in _parts if label.startswith(ls)), 'other state')] += len_toks(l)
    cnt['headers, transcript'] = len_toks(doc)-sum(cnt.values())
    return cnt

def parts_table(rows):
    "Where each of our sizes' tokens go, pooled over the cases: a share of the document for each part"
    print('\n### Where the tokens go (pooled)\n')
    print('| document | tokens | ' + ' | '.join(PARTS) + ' |')
    print('|---|---:|' + '---:|'*len(PARTS))
    for dn in dict.fromkeys(r['doc'] for r in rows if r['doc'].startswith('ours')):
        cnt = sum((Counter(r['parts']) for r in rows if r['doc']==dn), Counter())
        tot = sum(cnt.values())
        print(f'| {dn} | {tot:,} | ' + ' | '.join(f'{100*cnt[k]/tot:.0f}%' for k in PARTS) + ' |')

def state_fate(doc, s):
    "'whole' when `doc`'s state section is the one the policy renders for session `s`, 'cut' when it differs, 'missing'; None before state sections"
    try: from llmsurgery.state import state_facts, render_state; from llmsurgery.render import Policy
    except ImportError: return None
    h,c = '\n\n## State\n\n','\n\n## Conversation\n\n'
    if h not in doc.split(c, 1)[0]: return 'missing'
    return 'whole' if doc[doc.index(h)+len(h):doc.index(c)]==render_state(state_facts(s.msgs, s.cwd), Policy().budgets) else 'cut'

def reader_view(msgs, fs):
    "What the reader made of the case: the turn openers, and the typed prompts it never read"
    if not (f := _api('substantive')): return {}
    substantive, = f
    users = [m for m in msgs if m.role=='user' and substantive(m)]
    txt = norm(' '.join(str(getattr(p, 'text', '') or '') for m in users for p in m.content))
    return dict(turn_openers=[norm(' '.join(str(getattr(p, 'text', '') or '') for p in m.content))[:60] for m in users],
                prompts_not_read=[f for f in fs['prompts'] if key(f) not in txt])

def run(data, td):
    cases,rows = find_cases(data),[]
    for name,lines,summ,fn in cases:
        t0 = time.perf_counter()
        recs = [json.loads(l) for l in lines if l.strip()]
        fs,cwds = extract(recs)
        p = Path(td)/fn.name
        p.write_text(''.join(lines), encoding='utf-8')
        s = read_whole(p)
        ht = len_toks(summ)
        kw = dict(cwd=s.cwd) if 'cwd' in inspect.signature(compact_doc).parameters else {}   # an older revision has no cwd
        if 'nums' in inspect.signature(compact_doc).parameters: kw['nums'] = s.nums   # numbered, as the command's
        t1 = time.perf_counter()
        add = hook_addition(p) if hook_addition else None   # what the hook adds after the host's compaction, as it runs then
        took = time.perf_counter()-t1
        hook = [('host summary + our hook', summ+'\n\n'+add)] if add is not None else []
        docs = [('host summary', summ), *hook, ('ours 0.25x', compact_doc(s.msgs, str(fn), max_toks=ht//4, **kw)),
                ('ours 0.5x', compact_doc(s.msgs, str(fn), max_toks=ht//2, **kw)),
                ('ours 1x', compact_doc(s.msgs, str(fn), max_toks=ht, **kw)),
                ('ours 2x', compact_doc(s.msgs, str(fn), max_toks=2*ht, **kw)), ('ours default', compact_doc(s.msgs, str(fn), **kw))]
        for dn,d in docs:
            sc = score(d, fs, cwds)
            rows.append(dict(case=name, doc=dn, toks=len_toks(d), chars=len(d), **hook_time(p, dn, took), records=len(recs), msgs=len(s.msgs),
                             facts={c: [[f, k] for f,k in sc[c]] for c in CATS}, stats=dict(getattr(d, 'stats', None) or {}),
                             state=state_fate(d, s) if dn.startswith('ours') else None,
                             parts=dict(parts(d)),
                             **(dict(zip(('split', 'diag'), anatomy(d, s.msgs, cwds))) if dn.startswith('ours') else {}),
                             **(reader_view(s.msgs, fs) if dn=='host summary' else {})))
        print(f'{name}: {len(recs)} records, {len(s.msgs)} msgs, summary {ht} tokens, {time.perf_counter()-t0:.1f} s', file=sys.stderr)
    return rows

def hook_time(p, dn, took):
    "`{hook_s, work_s}`: the wall time of the hook (`python -P -m llmsurgery.hooks claude`, a new process) on session `p`, and of its work (`took`) alone"
    if dn!='host summary + our hook': return {}
    inp = json.dumps(dict(hook_event_name='SessionStart', source='compact', session_id=p.stem, transcript_path=str(p)))
    env = dict(os.environ, XDG_STATE_HOME=str(p.parent/'state'), **({'PYTHONPATH': code_dir} if code_dir else {}))
    work,t = took,time.perf_counter()
    r = subprocess.run([sys.executable, '-P', '-m', 'llmsurgery.hooks', 'claude'], input=inp, capture_output=True, text=True, env=env)
    took = time.perf_counter()-t
    ok = r.returncode==0 and 'additionalContext' in r.stdout
    return dict(hook_s=round(took, 3) if ok else None, work_s=round(work, 3))

def kn(fl): return sum(k for _,k in fl), len(fl)

def pct(k, n): return f'{100*k/n:.0f}%' if n else '–'

def table(rows, title):
    "Markdown table of `rows`; a row's `state` is a list of fates when pooled, one fate per case"
    rows = [dict(r, state=[r['state']] if isinstance(r.get('state'), str) else r.get('state')) for r in rows]
    print(f'\n### {title}\n')
    print('| document | tokens | facts kept % | typed prompts kept | ' + ' | '.join(CATS) + ' | state section whole |')
    print('|---|---:|---:|---:|' + '---:|'*len(CATS) + '---:|')
    for r in rows:
        per = {c: kn(r['facts'][c]) for c in CATS}
        k,n = sum(o[0] for o in per.values()),sum(o[1] for o in per.values())
        cells = [pct(*per[c]) + (f' ({per[c][0]}/{per[c][1]})' if c!='prompts' else '') for c in CATS]
        st = r.get('state') or []
        st = f"{st.count('whole')}/{len(st)}" if st else '–'
        print(f"| {r['doc']} | {r['toks']:,} | {pct(k, n)} ({k}/{n}) | {per['prompts'][0]}/{per['prompts'][1]} | " + ' | '.join(cells) + f' | {st} |')

def pooled(rows):
    res = {}
    for r in rows:
        o = res.setdefault(r['doc'], dict(doc=r['doc'], toks=0, facts={c: [] for c in CATS}, state=[]))
        o['toks'] += r['toks']
        if r.get('state'): o['state'].append(r['state'])
        for c in CATS: o['facts'][c] += r['facts'][c]
    return list(res.values())

def hook_lines(rows):
    "What the hook adds to the host's summary: facts kept with and without it, every typed prompt, its size and time"
    def facts(doc):
        fl = [o for r in rows if r['doc']==doc for c in CATS for o in r['facts'][c]]
        return sum(k for _,k in fl), len(fl)
    (a,n),(b,_) = facts('host summary'),facts('host summary + our hook')
    if not n or not any(r['doc']=='host summary + our hook' for r in rows): return
    ps = [k for r in rows if r['doc']=='host summary + our hook' for _,k in r['facts']['prompts']]
    print(f'\nThe host summary with our hook\'s addition keeps {b}/{n} facts, {b/max(a, 1):.2f}x the summary\'s {a}/{n}; '
          f'typed prompts {sum(ps)}/{len(ps)}.')
    for r in rows:
        if r['doc']!='host summary + our hook': continue
        summ = next(o for o in rows if o['case']==r['case'] and o['doc']=='host summary')
        print(f"- {r['case']}: addition {r['chars']-summ['chars']-2:,} characters; hook wall time {r.get('hook_s')} s as a new process, {r.get('work_s')} s of it reading and fitting")

def explain(rows):
    for r in rows:
        if not r['doc'].startswith('ours'): continue
        print(f"\n#### {r['case']} {r['doc']}: {r['toks']:,} tokens; stats {r['stats']}")
        tot = r['toks']
        print('tokens by class: ' + ', '.join(f'{k} {v:,} ({100*v/tot:.0f}%)' for k,v in sorted(r['split'].items(), key=lambda o: -o[1])))
        print('diagnostics (count, tokens): ' + '; '.join(f'{k} {n:,}, {t:,}' for k,(n,t) in r['diag'].items()))
        for c in CATS:
            lost = [f for f,k in r['facts'][c] if not k]
            if lost: print(f'lost {c} ({len(lost)}/{len(r["facts"][c])}): ' + ' | '.join(repr(o) for o in lost))
    for r in rows:
        if r['doc']!='host summary': continue
        print(f"\n#### {r['case']}: the reader's turn openers {r['turn_openers']}; typed prompts it never read: {r['prompts_not_read']}")
        print(f"host summary keeps what ours 1x loses:")
        ours = next(o for o in rows if o['case']==r['case'] and o['doc']=='ours 1x')
        for c in CATS:
            ok = {f for f,k in ours['facts'][c] if k}
            xs = [f for f,k in r['facts'][c] if k and f not in ok]
            if xs: print(f'{c}: ' + ' | '.join(repr(o) for o in xs))

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--data', default=str(Path(__file__).resolve().parent.parent/'tests'/'data'/'claude-real'))
    ap.add_argument('--json', help='write the per-case rows, with every fact and whether each document kept it, here')
    ap.add_argument('--explain', action='store_true', help='also list the facts each of our documents lost and where its tokens go')
    ap.add_argument('--rev', help='measure the llmsurgery package of this git revision (e.g. HEAD) instead of the installed one')
    a = ap.parse_args()
    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as td:
        load(a.rev, str(Path(td)/'code'))
        rows = run(a.data, td)
    if not rows: sys.exit(f'no compact_boundary with a summary in {a.data}')
    table(pooled(rows), f'Pooled over {len({r["case"] for r in rows})} cases')
    hook_lines(rows)
    parts_table(rows)
    for c in dict.fromkeys(r['case'] for r in rows): table([r for r in rows if r['case']==c], f'Case {c}')
    if a.explain: explain(rows)
    if a.json: Path(a.json).write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    print(f'\n({time.perf_counter()-t:.1f} s)', file=sys.stderr)

if __name__=='__main__': main()
