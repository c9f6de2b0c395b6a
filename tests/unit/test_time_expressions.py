"""Time expressions read against the question date (taggraph.methods.fusion.time_expressions), and TagGraph-Fusion's
time component built on them. The expressions are written here."""

from datetime import date, datetime, timedelta

import numpy as np
import pytest

from taggraph.methods.fusion.time_expressions import EPOCH, question_anchors, question_windows

ASKED = datetime(2024, 3, 12, 10, 0)  # a Tuesday


def spans(text: str, asked_on: datetime = ASKED) -> list[tuple[str, str, float]]:
    """(first day, last day, tolerance) of each window, as ISO dates."""
    def iso(d):
        return (EPOCH + timedelta(days=d)).isoformat()
    return [(iso(w.start), iso(w.end), w.tolerance) for w in question_windows(text, asked_on)]


@pytest.mark.parametrize("text, expected", [
    ("Which soup did I cook two weeks ago?", [("2024-02-27", "2024-02-27", 3.5)]),
    ("What did I fix a couple of days ago?", [("2024-03-10", "2024-03-10", 2.0)]),
    ("What did the plumber say 3 months ago?", [("2023-12-12", "2023-12-12", 22.75)]),
    ("Which gadget did I order last Saturday?", [("2024-03-09", "2024-03-09", 1.0)]),
    ("Where did we hike last weekend?", [("2024-03-09", "2024-03-10", 1.0)]),
    ("What did I tell you yesterday about the roof?", [("2024-03-11", "2024-03-11", 1.0)]),
    ("Which novel did I start in January?", [("2024-01-01", "2024-01-31", 7.0)]),
    ("What did I plant in the first week of June?", [("2023-06-01", "2023-06-07", 1.0)]),
    ("What did I plant in the last week of June?", [("2023-06-24", "2023-06-30", 1.0)]),
    ("Which tiles did I pick on February 3rd?", [("2024-02-03", "2024-02-03", 1.0)]),
    ("What did I buy on the 5th of January?", [("2024-01-05", "2024-01-05", 1.0)]),
    ("Who came to the party in May 2022?", [("2022-05-01", "2022-05-31", 7.0)]),
    ("Which friends visited in 2023?", [("2023-01-01", "2023-12-31", 7.0)]),
    ("What changed since February?", [("2024-02-01", "2024-03-12", 7.0)]),
    ("How many runs did I log in the past month?", [("2024-02-12", "2024-03-12", 7.25)]),
    ("How often did I swim last week?", [("2024-03-05", "2024-03-12", 2.0)]),
])
def test_expressions_become_windows_read_against_the_question_date(text, expected):
    assert spans(text) == expected


def test_a_month_not_yet_come_this_year_is_last_years():
    assert spans("What did I grow in October?")[0][:2] == ("2023-10-01", "2023-10-31")
    assert spans("What did I grow in October?", datetime(2024, 11, 2))[0][:2] == ("2024-10-01", "2024-10-31")


@pytest.mark.parametrize("text", [
    "May I ask what you think of my plan?",  # the modal "may"
    "What was the second thing I mentioned?",
    "How many days did the trip last?",
    "What is my favourite colour now?",  # an order cue, not a date
])
def test_text_without_a_date_has_no_window(text):
    assert question_windows(text, ASKED) == []


def test_a_date_after_the_question_is_not_read():
    assert spans("What will I do in 2030?") == []


def test_before_and_after_an_event_are_anchors_not_dates():
    assert [(a.direction, a.clause) for a in question_anchors("Which car did I drive before I moved to Lisbon?")] \
        == [("before", "i moved to lisbon")]
    assert [a.direction for a in question_anchors("What did I read since we adopted the dog?")] == ["after"]
    assert question_anchors("What did I do after March 3rd?") == []  # a date, read as one by question_windows
    assert question_anchors("Brush before bed.") == []


def test_closeness_is_one_inside_and_fades_outside():
    (window,) = question_windows("What did I cook two weeks ago?", ASKED)
    day = (date(2024, 2, 27) - EPOCH).days
    assert window.closeness(day) == 1.0
    assert window.closeness(day - 3.5) == pytest.approx(np.exp(-1))
    assert window.closeness(day + 7) < window.closeness(day + 3.5) < 1.0
