"""Two of the spec's contracts, checked directly: `compact_chat`'s `last_n` defaults to 0, and a result its tool marked
`full` (aidialog's `ToolResult(full=True)`, fastllm's `FullResponse`) is kept whole exactly as a `𝍁`-wrapped one."""
from aidialog.msg_parts import Msg, ToolResult, mk_msg
from llmsurgery.compact import compact_chat, compact_doc, compact_result, compact_tool, len_toks, tool_part

long = 'a long line of output that says a great deal about nothing at all ' * 40
chat = [mk_msg('Run the check. ' * 20), mk_msg(['Running it.', tool_part('Bash', command='make check')], role='assistant'),
        Msg('tool', [ToolResult(text=long)]), mk_msg('Done: ' + 'all green. ' * 30, role='assistant')]

def test_last_n_defaults_to_zero():
    spec_style = compact_chat(chat, 8, 8, 8, 6)   # the spec's positional budgets, no last_n
    assert spec_style == compact_chat(chat, 8, 8, 8, 6, last_n=0)
    assert len_toks(spec_style) < 60 < len_toks(compact_chat(chat, 8, 8, 8, 6, last_n=5))
    assert long.strip() not in spec_style

def test_the_document_keeps_its_own_tail():
    doc = compact_doc(chat, '/tmp/s.jsonl')   # the continuation document keeps its default of 5 whole messages
    assert long.strip()[:200] in doc and ('all green. '*30).strip() in doc

def test_full_result_kept_whole():
    full, plain = Msg('tool', [ToolResult(text=long, full=True)]), Msg('tool', [ToolResult(text=long)])
    assert compact_tool(full, 20) == compact_result('𝍁' + long + '𝍁', 20) == '> ' + long.strip()
    assert len_toks(compact_tool(plain, 20)) <= 20
    assert long.strip() in compact_chat(chat[:2] + [full], 8, 8, 8, 6)
    assert long.strip() not in compact_chat(chat[:2] + [plain], 8, 8, 8, 6)
