"No speed-up changes a document: each pinned document (bundled, genuine and real sessions; default and `--all`; plain and fitted; three policies) is recomputed and compared by sha256"
import pytest
from doc_pins import inputs, changed, pinned, real_dir

pins = pinned()

@pytest.mark.parametrize('path', inputs(), ids=lambda p: p.name)
def test_documents_unchanged(path):
    assert changed(path, pins) == []

def test_every_pin_is_checked():
    "The pins cover exactly the inputs, the real sessions among them"
    names = {p.name for p in inputs()}
    assert names == pins.keys() and {p.name for p in real_dir.glob('*.jsonl')} <= names and len(names) >= 12
