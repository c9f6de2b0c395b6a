import pytest

from taggraph._infra.config import DEMO_DATA
from taggraph.datasets import load_dataset
from taggraph.extractors import get_extractor
from taggraph.runs.extract_job import case_folder, extract_to_stores
from taggraph.core.store import MemoryStore, StoreError


class Interrupting:
    """Wraps an extractor and dies (like Ctrl-C) after `budget` calls."""

    def __init__(self, inner, budget):
        self.inner, self.budget, self.name, self.cache_key = inner, budget, inner.name, inner.cache_key

    def extract(self, user, assistant, existing):
        if self.budget == 0:
            raise KeyboardInterrupt
        self.budget -= 1
        return self.inner.extract(user, assistant, existing)


def test_interrupted_extraction_resumes_to_the_same_stores(tmp_path):
    cases = load_dataset(DEMO_DATA, limit=2)
    offline = get_extractor("offline")
    with pytest.raises(KeyboardInterrupt):
        extract_to_stores(cases, Interrupting(offline, 30), tmp_path / "a")
    partial = MemoryStore.load(case_folder(tmp_path / "a", cases[1]))
    assert 0 < len(partial) < len(cases[1].interactions)  # the second case stopped midway, loadable
    table = extract_to_stores(cases, offline, tmp_path / "a")
    assert list(table["resumed_from"]) == [len(cases[0].interactions), len(partial)]
    extract_to_stores(cases, offline, tmp_path / "b")
    for case in cases:
        a = MemoryStore.load(case_folder(tmp_path / "a", case))
        b = MemoryStore.load(case_folder(tmp_path / "b", case))
        assert [(n.note_id, n.tags) for n in a] == [(n.note_id, n.tags) for n in b]
        assert a.extractor_name == "offline"  # recorded in the manifest


def test_folder_of_another_case_is_refused(tmp_path):
    cases = load_dataset(DEMO_DATA, limit=2)
    extract_to_stores(cases[:1], get_extractor("none"), tmp_path)
    case_folder(tmp_path, cases[0]).rename(case_folder(tmp_path, cases[1]))
    with pytest.raises(StoreError, match="holds case 'demo_q01'"):
        extract_to_stores(cases[1:2], get_extractor("none"), tmp_path)


def test_resuming_with_another_extractor_is_refused_naming_both(tmp_path):
    cases = load_dataset(DEMO_DATA, limit=1)
    with pytest.raises(KeyboardInterrupt):
        extract_to_stores(cases, Interrupting(get_extractor("offline"), 3), tmp_path)
    with pytest.raises(StoreError, match="extracted with 'offline', not 'none'"):
        extract_to_stores(cases, get_extractor("none"), tmp_path)
    assert MemoryStore.load(case_folder(tmp_path, cases[0])).extractor_name == "offline"  # manifest untouched


def test_questions_that_share_a_history_share_one_store(tmp_path):
    """LoCoMo's questions share their conversation: one store per conversation, named by its first question,
    as bench shares one memory (not one copy per question)."""
    from pathlib import Path

    cases = load_dataset(Path(__file__).parents[1] / "fixtures" / "locomo" / "locomo_tiny.json")
    table = extract_to_stores(cases, get_extractor("none"), tmp_path)
    firsts = [c for c in cases if c.case_id.endswith(":q0")]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(case_folder(tmp_path, c).name for c in firsts)
    assert list(table["case_id"]) == [c.case_id for c in firsts]
    assert list(table["questions"]) == [sum(c.case_id.split(":")[0] == f.case_id.split(":")[0] for c in cases)
                                        for f in firsts]
    assert list(table["notes"]) == [len(c.interactions) for c in firsts]


@pytest.mark.parametrize("field", ["assistant", "timestamp", "note_id"])
def test_rerunning_over_changed_data_is_refused_naming_the_note_and_field(tmp_path, field):
    import dataclasses
    (case,) = load_dataset(DEMO_DATA, limit=1)
    extract_to_stores([case], get_extractor("none"), tmp_path)
    changed = list(case.interactions)
    changed[0] = dataclasses.replace(changed[0], **{field: "CHANGED"})
    with pytest.raises(StoreError, match=rf"note 0 \('demo_s\d+#0'\) is not interaction 0 of the case as the data "
                                         rf"has it now \({field} differs\)"):
        extract_to_stores([dataclasses.replace(case, interactions=changed)], get_extractor("none"), tmp_path)
    extract_to_stores([case], get_extractor("none"), tmp_path)  # the data as it was still resumes


def test_a_folder_holding_anything_but_these_stores_is_refused_before_any_work(tmp_path):
    """`extract --out /` (or the project's folder, or the data's own) would scatter store folders among the
    files there; only a new folder, an empty one or this data's stores are taken."""
    from taggraph.errors import ConfigError

    cases = load_dataset(DEMO_DATA, limit=2)
    extract_to_stores(cases[:1], get_extractor("none"), tmp_path)
    (tmp_path / "turns.jsonl").write_text("{}\n")
    with pytest.raises(ConfigError, match=r"--out .*: holds 'turns.jsonl', which no history of this data would write"):
        extract_to_stores(cases, get_extractor("none"), tmp_path)
    assert not case_folder(tmp_path, cases[1]).exists()
    (tmp_path / "turns.jsonl").unlink()
    assert list(extract_to_stores(cases, get_extractor("none"), tmp_path)["resumed_from"]) == [
        len(cases[0].interactions), 0]
