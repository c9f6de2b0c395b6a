"""Time rules at the calendar's edges: a question dated 0001-01-01 or 9999-12-31 (a common
"unknown" sentinel) gets windows clipped to the calendar or none, never a ValueError/OverflowError."""

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taggraph.errors import ConfigError
from taggraph.methods.fusion.signals import window_label
from taggraph.core.text import parse_datetime, parse_timestamp
from taggraph.methods.fusion.time_expressions import EPOCH, question_windows

from tests.helpers.methods import WordCount
from tests.helpers.fusion import DATED, dated_store, fusion

PHRASES = ["What did I do in December?", "What did I buy last Saturday?", "Where did we hike last weekend?",
           "What did I say yesterday?", "the day before yesterday", "two weeks ago", "3 years ago",
           "in the past 5 years", "last month", "last year", "in the first week of January",
           "in the last week of December", "on December 31st", "on the 1st of January", "since December",
           "in May 2022", "in 2023", "since 2020", "99999999 years ago", "in the past week"]
FUSION = fusion(dated_store(DATED))  # built once: the hypothesis examples only ask it
# any moment, a third of the draws in the calendar's first or last month
MOMENTS = st.one_of(st.datetimes(max_value=datetime(1, 1, 31)), st.datetimes(min_value=datetime(9999, 12, 1)),
                    st.datetimes())
FIRST, LAST = float((date.min - EPOCH).days), float((date.max - EPOCH).days)


def test_december_asked_on_the_last_day_of_the_calendar_ends_with_it():
    (window,) = question_windows("What did I do in December?", datetime(9999, 12, 31, 23, 59))
    assert (window.start, window.end) == ((date(9999, 12, 1) - EPOCH).days, LAST)


def test_last_saturday_before_the_first_day_of_the_calendar_is_dropped():
    assert question_windows("What did I buy last Saturday?", datetime(1, 1, 1)) == []


@settings(max_examples=300, deadline=None)
@given(asked_on=MOMENTS, text=st.sampled_from(PHRASES))
def test_any_question_date_gives_windows_inside_the_calendar(asked_on, text):
    for window in question_windows(text, asked_on):
        assert FIRST <= window.start <= window.end <= LAST
        window_label(window)


@settings(max_examples=60, deadline=None)
@given(moment=MOMENTS, hours=st.integers(-23, 23),
       text=st.sampled_from(PHRASES))
def test_fusion_reads_any_question_date_and_offset(moment, hours, text):
    day = moment.date()
    asked_on = f"{day.isoformat()}T00:00{'+' if hours >= 0 else '-'}{abs(hours):02d}:00"
    assert parse_timestamp(asked_on) == pytest.approx((day - EPOCH).days - hours / 24, abs=1e-12)  # days + hours/24 rounds
    assert len(FUSION.query(text, k=3, asked_on=asked_on)) == 3


def test_a_note_dated_past_the_calendar_anchors_and_explains():
    store = dated_store([*DATED, ("m", "I moved to Lisbon in a hurry.", "Good luck.", "9999-12-31T23:00-05:00")])
    asked_on = "9999-12-31T23:30-05:00"
    retriever = fusion(store)
    assert [w.end for w in retriever.windows("What did I buy before I moved to Lisbon?", datetime.fromisoformat(asked_on))]
    for hit in retriever.query("What did I buy before I moved to Lisbon?", k=2, asked_on=asked_on):
        assert retriever.explain("What did I buy before I moved to Lisbon?", hit.note_id, k=2, asked_on=asked_on).reason


@pytest.mark.parametrize("moment", [date(2023, 5, 30), datetime(2023, 5, 30, 23, 40),
                                    datetime(2023, 5, 30, 23, 40, tzinfo=timezone(timedelta(hours=-5)))])
def test_a_date_or_datetime_question_date_reads_as_its_iso_string(moment):
    text = "What bike did I buy two weeks ago?"
    as_string = FUSION.query(text, k=3, asked_on=moment.isoformat())
    assert [(r.note_id, r.score) for r in FUSION.query(text, k=3, asked_on=moment)] == \
        [(r.note_id, r.score) for r in as_string]
    assert FUSION.explain(text, as_string[0].note_id, k=3, asked_on=moment).reason == \
        FUSION.explain(text, as_string[0].note_id, k=3, asked_on=moment.isoformat()).reason


def test_a_question_date_of_another_type_is_one_line():
    with pytest.raises(ConfigError, match="asked_on must be a date string, a datetime.date or a datetime.datetime, "
                                          "got int '20230530'"):
        FUSION.query("What bike did I buy?", asked_on=20230530)


class SeesTheDate(WordCount):
    """Records what `asked_on` each call gets."""

    seen: list = []

    def score(self, text, *, asked_on=None):
        SeesTheDate.seen.append(asked_on)
        return super().score(text, asked_on=asked_on)


def test_every_method_gets_the_question_date_as_a_datetime_read_once_where_the_data_is_loaded(clean_registry):
    """The bench passes `Case.asked_on` (the case's date read once, at the dataset), `Memory` and `query` read a
    string or a date into a datetime: no method parses a date string; a string `Memory` cannot read is refused."""
    import taggraph as tg
    from taggraph._infra.config import DEMO_DATA
    from taggraph.runs.bench import run_bench

    case = tg.load(DEMO_DATA, limit=1)[0]
    assert case.asked_on == datetime(2023, 6, 20, 10, 15) and case.question_date == "2023/06/20 (Tue) 10:15"
    tg.register_method("SeesTheDate", SeesTheDate)
    SeesTheDate.seen.clear()
    run_bench([case], ["SeesTheDate"], extractor="none", backend=None)
    assert SeesTheDate.seen and set(SeesTheDate.seen) == {datetime(2023, 6, 20, 10, 15)}
    memory = tg.Memory(method="SeesTheDate", extractor="none")
    memory.remember("I adopted a dog.", "Congratulations!")
    SeesTheDate.seen.clear()
    memory.query("dog", asked_on="2023/05/30 (Tue) 23:40")
    memory.query("dog", asked_on=date(2023, 5, 30))
    assert SeesTheDate.seen == [datetime(2023, 5, 30, 23, 40), datetime(2023, 5, 30)]
    with pytest.raises(ConfigError, match="asked_on 'next tuesday' is not a date: write 2023/05/30"):
        memory.query("dog", asked_on="next tuesday")


@settings(max_examples=60, deadline=None)
@given(st.dates(), st.integers(0, 6), st.booleans())
def test_a_date_reads_with_its_own_weekday_and_not_with_another(day, shift, long_name):
    """"2023/05/30 (Mon)" names two days: neither is read, so the time rules see no date (the loaders warn)."""
    named = day + timedelta(days=shift)
    weekday = named.strftime("%A" if long_name else "%a")
    text = f"{day.year:04d}/{day.month:02d}/{day.day:02d} ({weekday}) 10:00"
    expected = datetime(day.year, day.month, day.day, 10) if shift == 0 else None
    assert parse_datetime(text) == expected


def test_other_words_in_parentheses_are_ignored():
    assert parse_datetime("2023/05/30 (home) 23:40") == datetime(2023, 5, 30, 23, 40)
