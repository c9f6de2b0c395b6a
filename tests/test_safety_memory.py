"""Nothing a `Memory` saves is lost (issue 33, items 2 and 3): a second loaded copy cannot overwrite the
first's notes, and any text round-trips byte for byte through save and load."""

import pytest

import taggraph as tg
from taggraph.store import StoreError


@pytest.fixture
def saved(tmp_path):
    memory = tg.Memory()
    memory.remember("I adopted my dog Miso.", "Congratulations!", session="s1")
    memory.save(tmp_path / "m")
    return tmp_path / "m"


def test_a_second_copy_saving_over_the_first_is_refused(saved):
    first, second = tg.Memory.load(saved), tg.Memory.load(saved)
    first.remember("I moved to Lisbon.", session="s2")
    second.remember("I started yoga.", session="s3")
    first.save(saved)
    with pytest.raises(StoreError, match="changed on disk since this store was loaded") as refused:
        second.save(saved)
    assert "\n" not in str(refused.value)
    assert [n.user for n in tg.Memory.load(saved).notes] == ["I adopted my dog Miso.", "I moved to Lisbon."]
    second.save(saved.parent / "other")  # the refused copy can still be kept elsewhere
    first.remember("I bought a bike.", session="s4")
    first.save(saved)  # the copy that saved last saves again
    assert len(tg.Memory.load(saved)) == 3


def test_a_crash_left_journal_counts_as_a_change(saved):
    memory = tg.Memory.load(saved)
    (saved / "manifest.journal").write_text('{"note_id": "x"}\n', encoding="utf-8")
    memory.remember("later", session="s2")
    with pytest.raises(StoreError, match="changed on disk"):
        memory.save(saved)
