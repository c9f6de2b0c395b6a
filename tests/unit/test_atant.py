from pathlib import Path

import pandas as pd
import pytest

from taggraph.datasets import DatasetError
from taggraph.datasets.atant import AtantCase, content_match, load_atant
from taggraph.evaluation.benchmark_metrics import atant_metrics
from taggraph.runs.bench import run_bench

FIXTURES = Path(__file__).parents[1] / "fixtures" / "atant"


def test_loads_one_case_per_question_with_batches_as_sessions():
    cases = load_atant(FIXTURES / "core", split="Core")
    assert len(cases) == 8 and all(isinstance(c, AtantCase) and c.split == "Core" for c in cases)
    career = [c for c in cases if c.story_id == "career01"]
    assert [c.case_id for c in career] == ["career01q1", "career01q2", "career01q3"]  # questions, then final_verification
    assert [i.session_id for i in career[0].interactions] == [f"career01:b{n}" for n in (1, 2, 3, 4)]
    assert all(i.assistant == "" for i in career[0].interactions)
    assert career[0].category == career[0].question_type == "Career"
    assert load_atant(FIXTURES / "r2")[0].split == "r2"  # default split: folder name


def test_strict_and_permissive_gold_by_content_match():
    by_id = {c.case_id: c for c in load_atant(FIXTURES / "core")}
    salary = by_id["career01q2"]  # ["Brightlane", "92,000"]
    assert salary.gold_session_ids == ["career01:b4"]
    assert salary.permissive_session_ids == ["career01:b1", "career01:b3", "career01:b4"]
    beds = by_id["daily02q1"]  # case-insensitive, whole expected substrings
    assert beds.gold_session_ids == ["daily02:b1"]
    split_facts = by_id["daily02q3"]  # tomatoes and aphids never appear in one batch
    assert split_facts.gold_session_ids == [] and split_facts.permissive_session_ids == ["daily02:b2", "daily02:b3"]
    assert content_match("APHIDS ate it", ["aphids", "basil"]) == (False, True)


def _rank(case_id, method, ranked):
    return {"question_id": case_id, "method": method, "ranked_session_ids": ranked}


def test_atant_metrics_strict_permissive_and_unjudged():
    cases = load_atant(FIXTURES / "core")
    by_id = {c.case_id: c for c in cases}
    rankings = pd.DataFrame([
        _rank("career01q2", "M", ["career01:b1", "career01:b4"]),  # strict RR 1/2, permissive RR 1
        _rank("daily02q3", "M", ["daily02:b1", "daily02:b3"]),  # no strict gold: permissive only, RR 1/2
        _rank("health03q1", "M", ["health03:b2"]),  # relevant note not retrieved: RR 0
    ])
    table = atant_metrics(rankings, [by_id[q] for q in rankings["question_id"]]).set_index("category")
    assert table.loc["all", "n_questions"] == 3
    assert table.loc["all", "n_strict"] == 2 and table.loc["all", "MRR_strict"] == pytest.approx(0.25)
    assert table.loc["all", "n_permissive"] == 3 and table.loc["all", "MRR_permissive"] == pytest.approx(0.5)
    assert table.loc["Career", "MRR_strict"] == pytest.approx(0.5)
    assert pd.isna(table.loc["Daily Life", "MRR_strict"]) and table.loc["Daily Life", "n_strict"] == 0
    assert list(table.index)[0] == "all"


def test_bench_over_atant_splits():
    cases = load_atant(FIXTURES / "core", split="Core") + load_atant(FIXTURES / "r2", split="R2")
    bench = run_bench(cases, ["BM25"], extractor="none")
    table = atant_metrics(bench.rankings, cases)
    overall = table[table["category"] == "all"].set_index("split")
    assert overall.loc["Core", "n_strict"] == 7 and overall.loc["R2", "n_questions"] == 2
    # BM25 finds the tutor's name: "Marta" is in batches 1 and 2, both relevant
    marta = bench.rankings.set_index("question_id").loc["learn04q1"]
    assert marta["ranked_session_ids"][0] in ("learn04:b1", "learn04:b2")
    assert 0 < overall.loc["Core", "MRR_strict"] <= overall.loc["Core", "MRR_permissive"] + 1e-9


@pytest.mark.parametrize("text,message", [
    ("story_id: x\ncategory: Career\nbatches: [\n", "invalid YAML"),
    ("- just\n- a list\n", "must be a mapping"),
    ("story_id: x\ncategory: Career\nbatches:\n  - {batch: 1, time: t}\nquestions:\n"
     "  - {question: q, expected_contains: [a]}\n", r"batches\[0\]: missing field 'user_input'"),
    ("story_id: x\ncategory: Career\nbatches:\n  - {batch: 1, user_input: hi}\n  - {batch: 1, user_input: yo}\n"
     "questions:\n  - {question: q, expected_contains: [a]}\n", r"batches\[1\]: field 'batch' repeats"),
    ("story_id: x\ncategory: Career\nbatches:\n  - {batch: 1, user_input: hi}\nfinal_verification:\n"
     "  - {question: q, expected_contains: a}\n", r"final_verification\[0\]: field 'expected_contains' must be list"),
    ("story_id: x\ncategory: Career\nbatches:\n  - {batch: 1, user_input: hi}\n", "no questions"),
    ("story_id: x\nbatches:\n  - {batch: 1, user_input: hi}\n", "missing field 'category'"),
])
def test_malformed_story_names_file_and_field(tmp_path, text, message):
    (tmp_path / "bad_story.yaml").write_text(text)
    with pytest.raises(DatasetError, match=message) as err:
        load_atant(tmp_path)
    assert "bad_story.yaml" in str(err.value)


def test_folder_errors(tmp_path):
    with pytest.raises(DatasetError, match="no .yaml/.yml"):
        load_atant(tmp_path)
    with pytest.raises(DatasetError, match="not a folder"):
        load_atant(tmp_path / "missing")
