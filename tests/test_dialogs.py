"""Solveit dialogs as users have them (issue 17): the seven published dialogs in `tests/data/solveit-real` read, rendered
flat, fitted to a size and copied in place, by the library, the CLI and the skill; and a few synthetic cells for what
those dialogs lack (error and image outputs, aidialog's `%%prompt` form)."""
import hashlib, json, re, shutil, subprocess, sys
from pathlib import Path
import pytest
from hypothesis import given, settings, strategies as st
from aidialog.dialog import Message, sprompt, snote, scode, sraw, prompt_output
from aidialog.ipynb import reads_ipynb, conv_old_prompts
from aidialog.msg_parts import ToolUse
from llmsurgery.hist import fmt2hist, prompt_qa, reply_sep
from llmsurgery.render import Policy, compact_call, compact_text, fenced
from llmsurgery.toks import len_toks
from llmsurgery.dialogs import (reads_dialog, dlg2compact, compact_reply, compact_code, compact_ipynb, cell_spans, fit_dialog,
                                media_marks, dialog_stats, shown, dlg_style, dialog_document)
from llmsurgery.document import compact_content

REAL = Path(__file__).resolve().parent/'data'/'solveit-real'
DIALOGS = sorted(REAL.glob('*.ipynb'))
ids = [p.stem for p in DIALOGS]
LEAKS = ('SOLVEIT_SEPARATOR', '🤖Reply🤖', '<details', '</details>', '<summary', '"call":', '"function":', '"arguments":',
         'tool-usage-details', ';base64,')

def text(p): return p.read_text(encoding='utf-8')
def cells(txt): return json.loads(txt)['cells']
def is_prompt(c): return bool(c['metadata'].get('solveit_ai'))

def payloads(txt):
    "The base64 data of every attachment and image output of notebook text `txt` (its first 40 characters)"
    res = []
    for c in cells(txt):
        res += [''.join(v)[:40] for a in (c.get('attachments') or {}).values() for v in a.values()]
        res += [''.join(v)[:40] for o in c.get('outputs') or [] for k,v in o.get('data', {}).items() if k.startswith('image/')]
    return [o for o in res if len(o)==40]

def test_real_dialogs_present():
    assert len(DIALOGS) == 7 and (REAL/'SOURCES.md').exists()
    assert {p.name for p in REAL.glob('LICENSE-*')} == {'LICENSE-Apache-2.0.txt', 'LICENSE-MIT-solveit_demos.txt', 'LICENSE-MIT-solveit-tex.txt'}

@pytest.mark.parametrize('p', DIALOGS, ids=ids)
def test_reader(p):
    "Every answered prompt, in aidialog's reading of either form, has its reply; the messages are aidialog's otherwise"
    txt = text(p)
    d,plain = reads_dialog(txt),reads_ipynb(txt)
    assert [m.id for m in d.messages] == [m.id for m in plain.messages]
    for c,m,o in zip(cells(txt), d.messages, plain.messages):
        if not is_prompt(c): assert (m.content, m.output, m.msg_type) == (o.content, o.output, o.msg_type)
        else: assert (m.content, m.ai_res or None) == (prompt_qa(o)[0], prompt_qa(o)[1] or None)
    d.validate()

@pytest.mark.parametrize('p', DIALOGS, ids=ids)
def test_flat_document(p):
    "The flat document: no separator, HTML, tool JSON or base64; every question not skipped; every tool call as a DSL line"
    txt = text(p)
    d,pol = reads_dialog(txt),Policy()
    doc = dlg2compact(d)
    for o in LEAKS: assert o not in doc, o
    for o in payloads(txt): assert o not in doc
    for m in d.messages:
        q,r = prompt_qa(m)
        if m.skipped or m.msg_type!=sprompt: continue
        if q.strip():
            shown_q = compact_text(media_marks(q), '§', pol['user_toks'])
            assert shown_q in doc and ' '.join(media_marks(q).split())[:40] in ' '.join(shown_q.split())
        for p_ in (p_ for h in fmt2hist(r or '') for p_ in h.content if isinstance(p_, ToolUse)):
            assert compact_call(p_, pol['call_toks']) in doc, p_.name

@pytest.mark.parametrize('p', DIALOGS, ids=ids)
def test_dialog_compact_same_either_way(p):
    "aidialog's reader then `Dialog.compact()`, our reader then the same, and the in-place copy read back agree"
    txt = text(p)
    qa = lambda d: [(m.content, m.ai_res) for m in d.messages if m.msg_type==sprompt]
    mine = reads_dialog(txt).compact()
    assert qa(reads_ipynb(txt).compact()) == qa(mine)
    assert qa(reads_dialog(compact_ipynb(txt).text)) == qa(mine)

def cell_texts(txt):
    "The text of each cell, as it stands in notebook text `txt`, and the text between cells"
    spans = cell_spans(txt)
    ends = [(min(a for a,_ in sp.values()), max(b for _,b in sp.values())) for sp in spans]
    between = [txt[b:a] for (_,b),(a,_) in zip([(0, 0)]+ends, ends+[(len(txt), len(txt))])]
    return [txt[a:b] for a,b in ends], between

@pytest.mark.parametrize('p', DIALOGS, ids=ids)
def test_in_place_copy(p):
    "The copy keeps every cell id in order, every other cell byte for byte; aidialog reads each reply compacted; it shrinks"
    txt = text(p)
    made = compact_ipynb(txt)
    copy = made.text
    before,after = cells(txt),cells(copy)
    assert [c['id'] for c in after] == [c['id'] for c in before]
    (tb,sb),(ta,sa) = cell_texts(txt),cell_texts(copy)
    assert sa == sb   # all the bytes between cells (and the notebook's metadata) as they were
    for c,a,b in zip(before, ta, tb):
        if not is_prompt(c): assert a == b
    for b,a in zip(before, after):
        assert {k: v for k,v in a.items() if k!='source'} == {k: v for k,v in b.items() if k!='source'}   # type, metadata, attachments
    nb = json.loads(copy)
    conv_old_prompts(nb)   # as aidialog's own converter sees the copy
    back,orig = reads_ipynb(json.dumps(nb)).validate(),reads_dialog(txt)
    for m,o in zip(back.messages, orig.messages):
        if m.msg_type!=sprompt: continue
        q,r = prompt_qa(o)
        assert m.ai_res == (compact_reply(r, style=dlg_style) if r is not None else '')
    calls = dialog_stats(orig).calls
    st = made.stats
    assert st.calls == calls and (st.copy_size < st.size if calls else st.copy_size <= st.size) and st.size == len(txt.encode())
    assert st.copy_toks <= st.reply_toks and text(p) == txt

@pytest.mark.parametrize('p', DIALOGS, ids=ids)
def test_prompt_form_copy(p):
    "In aidialog's `%%prompt` form, the copy keeps each prompt a `%%prompt` cell, its compacted reply in its output"
    nb = json.loads(text(p))
    conv_old_prompts(nb)
    txt = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False)+'\n'
    copy = compact_ipynb(txt).text
    assert copy == json.dumps(json.loads(copy), indent=1, sort_keys=True, ensure_ascii=False)+'\n'   # written as the file was
    for b,a in zip(cells(txt), cells(copy)):
        assert (a['id'], a['cell_type'], a['metadata']) == (b['id'], b['cell_type'], b['metadata'])
        if not is_prompt(b): assert a == b
        else: assert ''.join(a['source']).startswith('%%prompt')
    qa = lambda d: [(m.content, m.ai_res) for m in d.messages if m.msg_type==sprompt]
    assert qa(reads_ipynb(copy).validate()) == qa(reads_dialog(text(p)).compact())

@pytest.mark.parametrize('p', DIALOGS, ids=ids)
def test_fit(p):
    "`fit_dialog` is within every target it can meet, grows to the uncut size with room, and says when a target is too small"
    d = reads_dialog(text(p))
    fit = lambda n: dialog_document(d, str(p), max_toks=n)   # the document: legend, state, conversation
    full = len_toks(dialog_document(d, str(p)).text)
    for n in (60, 150, 400, 1000, 3000, full-1, full, 10*full):
        try: doc = fit(n).text
        except ValueError as e:
            assert 'is too small' in str(e) and n<500, n   # the legend and the state take ~400
            continue
        assert len_toks(doc) <= n, (n, len_toks(doc))
        if n>=full: assert len_toks(doc) >= full
    assert fit(10*full).stats['dropped_msgs'] == 0
    assert '\n\n## State\n\n- ' in fit(1000).text

TEX = reads_dialog(text(REAL/'solveit_tex__solveit-tex_f7c6b77.ipynb'))

@settings(max_examples=20, derandomize=True, deadline=None)
@given(st.integers(250, 15_000))
def test_fit_any_target(n):
    "For any target the least rendering allows, a dialog's document is within it"
    assert len_toks(fit_dialog(TEX, n).text) <= n

@settings(max_examples=15, derandomize=True, deadline=None)
@given(st.integers(500, 15_000))
def test_document_any_target(n):
    "The continuation document (legend, state, conversation) is within any target from 500 tokens, its state said once"
    doc = dialog_document(TEX, 'tex.ipynb', max_toks=n).text
    assert len_toks(doc) <= n and doc.count('\n\n## State\n\n') == 1

def test_attachments_and_unanswered():
    "dutil's conn dialog: a pasted image is a marker (its base64 nowhere), unanswered prompts keep their questions"
    txt = text(REAL/'dutil__conn_5f88c82.ipynb')
    d = reads_dialog(txt)
    doc = dlg2compact(d)
    assert '[image: pasted_image_7ffbccad-506b-41b0-8411-5a8633d82367.png]' in doc
    unanswered = [m for m in d.messages if m.msg_type==sprompt and prompt_qa(m)[1] is None]
    assert len(unanswered) == 4 and all(f'§ {m.content} §' in doc for m in unanswered)
    att = next(c for c in cells(compact_ipynb(txt).text) if c.get('attachments'))
    assert att['attachments'] == next(c for c in cells(txt) if c['id']==att['id'])['attachments']

def test_flagless_prompts():
    "casblog has notes that hold a question and its reply (prompts whose flag was lost): flat, they read as prompts; copied, as notes"
    txt = text(REAL/'casblog__00_core_7e38d87.ipynb')
    notes = [c for c in cells(txt) if not is_prompt(c) and reply_sep in ''.join(c['source'])]
    assert len(notes) == 3
    doc = dlg2compact(reads_dialog(txt))
    assert '§ does the above check if plash_production exists or is truthy? §\n» It checks' in doc
    assert [c for c in cells(compact_ipynb(txt).text) if c['id'] in {n['id'] for n in notes}] == notes

def code_cell(outputs, src='run()'): return Message(src, msg_type=scode, output=outputs, id='c0de0009')

def test_error_and_rich_outputs():
    "An error keeps its diagnostic lines; images and bare HTML are markers; no base64 anywhere"
    tb = ['\x1b[0;31mTraceback (most recent call last)\x1b[0m'] + [f'  File "lib.py", line {i}, in f{i}' for i in range(60)]
    tb += ['\x1b[0;31mKeyError\x1b[0m: \'missing_key\'']
    err = dict(output_type='error', ename='KeyError', evalue="'missing_key'", traceback=tb)
    png = dict(output_type='display_data', metadata={}, data={'image/png': 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk',
                                                              'text/plain': '<Figure size 640x480 with 1 Axes>'})
    page = dict(output_type='execute_result', execution_count=1, metadata={}, data={'text/html': '<div>x</div>',
                                                                                    'text/plain': '<IPython.core.display.HTML object>'})
    r = compact_code(code_cell([png, page, err]))
    assert "KeyError: 'missing_key'" in r and '\x1b' not in r and 'lib.py", line 59' not in r
    assert '[image: png]' in r and '[html]' in r and 'iVBOR' not in r and '<div>' not in r
    svg = dict(output_type='display_data', metadata={}, data={'image/svg+xml': '<svg/>'})
    assert compact_code(code_cell([svg])).endswith('> [image: svg]')
    md = dict(output_type='display_data', metadata={}, data={'text/markdown': '![plot](data:image/png;base64,iVBORw0KGgo=)'})
    assert compact_code(code_cell([md])).endswith('> [image: plot]')

def test_note_with_inline_image():
    d = reads_dialog(json.dumps(dict(nbformat=4, nbformat_minor=5, metadata={}, cells=[
        dict(cell_type='markdown', id='n1', metadata={}, source='A chart: ![chart.png](attachment:abc)', attachments={'abc': {'image/png': 'iVBORw0KGgo='}}),
        dict(cell_type='markdown', id='p1', metadata={'solveit_ai': True}, source=f'Explain ![](data:image/png;base64,iVBORw0KGgo=){reply_sep}It is a chart.')])))
    doc = dlg2compact(d)
    assert doc == '§ A chart: [image: chart.png] §\n§ Explain [image: attachment] §\n» It is a chart. »'

def test_copy_keeps_the_files_form():
    "A BOM stays; a notebook written without indentation, or ASCII-only, is patched in its own form"
    txt = text(REAL/'dutil__ask_5f88c82.ipynb')
    assert compact_ipynb('\ufeff'+txt).text == '\ufeff'+compact_ipynb(txt).text
    for form in (dict(), dict(indent=2, ensure_ascii=True), dict(separators=(',', ':'))):
        t = json.dumps(json.loads(txt), **form)
        c = compact_ipynb(t).text
        assert c == json.dumps(json.loads(c), **form)   # every byte written as the file writes it
        assert [(a['id'], a==b) for a,b in zip(cells(c), cells(t))] == [(b['id'], not is_prompt(b)) for b in cells(t)]

# --- the service, the command and the skill, end to end, on every real dialog
_exe = Path(sys.executable).absolute().parent/'llmsurgery-compact'

def run(*args):
    p = subprocess.run([sys.executable, str(_exe), *map(str, args)], capture_output=True, timeout=300)
    return p.returncode, p.stdout.decode('utf-8'), p.stderr.decode('utf-8', 'replace')

def sha(p): return hashlib.sha256(Path(p).read_bytes()).hexdigest()

COPY_LINE = r'\d+ prompts: replies [\d,]+ -> [\d,]+ tokens; [\d.,]+ KB -> [\d.,]+ KB; compacted copy written to .*'

@pytest.mark.parametrize('p', DIALOGS, ids=ids)
def test_service(p, tmp_path):
    "The service on each dialog: the document (bounded by default), fitted to `max_toks`, the copy; the original untouched"
    from llmsurgery.service import compact_session, default_max_toks
    src = tmp_path/p.name
    shutil.copy(p, src)
    h = sha(src)
    c = compact_session(src)
    for o in LEAKS: assert o not in c.text, o
    assert ' tokens uncut -> ' in c.lines[-1] and len_toks(c.text) <= default_max_toks
    unbounded = compact_session(src, max_toks=0).text
    assert unbounded == dialog_document(reads_dialog(text(p)), str(src.resolve())).text
    if len_toks(unbounded) <= default_max_toks: assert c.text == unbounded   # within the bound: not grown
    assert len_toks(compact_session(src, max_toks=1500).text) <= 1500
    c = compact_session(src, in_place_copy=tmp_path/'copy.ipynb')
    assert c.text is None and re.fullmatch(COPY_LINE, c.lines[-1]), c.lines
    assert (tmp_path/'copy.ipynb').read_text(encoding='utf-8') == compact_ipynb(text(p)).text and sha(src) == h
    with pytest.raises(ValueError, match='max_toks fits a document'): compact_session(src, max_toks=900, in_place_copy=tmp_path/'c2.ipynb')
    with pytest.raises(ValueError, match="can't be resumed"): compact_session(src, resume=True)
    assert not (tmp_path/'c2.ipynb').exists() and sha(src) == h

@pytest.mark.parametrize('name', ['solveit_z2h__00_core.ipynb', 'dutil__conn_5f88c82.ipynb'])
def test_cli(name, tmp_path):
    "`llmsurgery-compact dialog.ipynb`, with `--max-tokens`, and `--in-place-copy`, as a user runs it"
    src = tmp_path/name
    shutil.copy(REAL/name, src)
    h = sha(src)
    rc,doc,err = run(src)
    assert rc == 0, err
    for o in LEAKS: assert o not in doc, o
    assert ' tokens uncut -> ' in err and sha(src) == h
    rc,fitted,err = run(src, '--max-tokens', 1500)
    assert rc == 0, err
    assert len_toks(fitted.rstrip('\n')) <= 1500 and sha(src) == h
    rc,out,err = run(src, '--in-place-copy', tmp_path/'copy.ipynb')
    assert rc == 0 and out == '', err
    assert re.fullmatch(COPY_LINE+'\n', err), err
    assert (tmp_path/'copy.ipynb').read_text(encoding='utf-8') == compact_ipynb(text(REAL/name)).text and sha(src) == h
    rc,_,err = run(src, '--in-place-copy', tmp_path/'c2.ipynb', '--max-tokens', 900)
    assert rc == 2 and '--max-tokens' in err and not (tmp_path/'c2.ipynb').exists(), err

@pytest.mark.parametrize('p', DIALOGS, ids=ids)
def test_skill(p, tmp_path, monkeypatch):
    "The skill's `dialog_doc` (also with `max_toks`) and `dialog_copy` do the same, and leave the dialog as it was"
    for k in ('HOME', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME'): monkeypatch.setenv(k, str(tmp_path/'home'))
    from llmsurgery.skill import dialog_doc, dialog_copy
    src = tmp_path/p.name
    shutil.copy(p, src)
    h = sha(src)
    doc = dialog_doc(src)
    for o in LEAKS: assert o not in doc, o
    from llmsurgery.service import compact_session
    assert doc == compact_session(src).text   # the skill's document is the command's
    assert len_toks(dialog_doc(src, max_toks=1200)) <= 1200
    assert dialog_copy(src, tmp_path/'copy.ipynb') == str(tmp_path/'copy.ipynb')
    assert (tmp_path/'copy.ipynb').read_text(encoding='utf-8') == compact_ipynb(text(p)).text and sha(src) == h

# --- issue 30: a dialog's document as good as a session's: recall by id, no noise, a state
_nothing_re = re.compile(r'\w')
def says_nothing_line(l): return '…' in l and len(_nothing_re.findall(l)) < 8
_id_arg_re = re.compile(r"\b(?:id|ids|msgid)=('[^'\n]*'?)")

@pytest.mark.parametrize('p', DIALOGS, ids=ids)
def test_document_recall_and_noise(p, tmp_path):
    "Every prompt's id opens its turn and `--show` of it prints it whole; notes and code keep theirs; no empty result; no id cut"
    from llmsurgery.service import compact_session
    from llmsurgery.recall import show_session
    src = tmp_path/p.name
    shutil.copy(p, src)
    d = reads_dialog(text(p))
    flat,bounded = compact_session(src, max_toks=0).text,compact_session(src).text
    for doc in (flat, bounded):
        conv = doc.partition('\n\n## Conversation\n\n')[2]
        assert '`llmsurgery-compact <dialog> --show _ID`' in doc and "the skill's `recall`" in doc
        state = doc.partition('\n\n## State\n\n')[2].partition('\n\n## Conversation\n\n')[0]
        assert '- Task (the first prompt, #_' in state and '- Latest reply (to #_' in state, state
        assert [l for l in conv.splitlines() if l.startswith('>') and says_nothing_line(l)] == []
        assert [v for v in _id_arg_re.findall(conv) if '…' in v] == []
    for m in shown(d):
        q,r = prompt_qa(m)
        if m.msg_type==sprompt and (q.strip() or r): assert f'\n*** #_{m.id}\n' in '\n'+flat, m.id
        elif m.msg_type!=sprompt and (q.strip() or m.msg_type==scode): assert f'#_{m.id}\n' in flat, m.id
        if m.msg_type==sprompt and q.strip():
            shown_ = show_session(src, f'_{m.id}', max_toks=0).text
            assert shown_.startswith(f'#_{m.id}\n') and compact_text(media_marks(q), '§', None) in shown_

def test_reply_noise_rules():
    "In a dialog document's reply: an error keeps its diagnostic line, repeated lines are counted, an id in a call stays whole"
    tb = 'Traceback (most recent call last):\n' + ''.join(f'  File "lib.py", line {i}, in f{i}\n' for i in range(40)) + "KeyError: 'content'"
    block = lambda i, name, args, res: fenced(json.dumps(dict(id=f't{i}', name=name, args=args, result=res)), 'json {.tool}')
    reply = '\n\n'.join([block(1, 'msg_str_replace', dict(id='_59d8bd9b', old_str='x = 1\n'*50, new_str='y'), tb),
                         block(2, 'run', {}, 'tick\n'*200), 'Done.'])
    r = compact_reply(reply, call_toks=12, result_toks=10, style=dlg_style)
    assert "▶ msg_str_replace(id='_59d8bd9b'" in r and "KeyError: 'content'" in r and '> tick (×200)' in r, r
    spec = compact_reply(reply, call_toks=12, result_toks=10)   # the spec's DSL cuts by its own rules
    assert "KeyError: 'content'" not in spec
