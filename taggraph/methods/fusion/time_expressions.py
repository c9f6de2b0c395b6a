"""Time expressions in a question, read against the date it is asked, as windows of days.

`question_windows("What did I buy two weeks ago?", asked_on)` finds the phrases that name a time,
has dateparser (a maintained parser, its English data only) resolve each against ``asked_on``, and
turns the resolved date and its period (day, week, month, year) into a `Window` of days since
1970-01-01 with a tolerance. The phrases are found by our own shapes (`SHAPES`) rather than by
`dateparser.search.search_dates`, which reads "may", "now" or "second" in ordinary sentences as dates;
dateparser alone decides what each phrase means. A few phrases dateparser does not read ("a couple of
days ago", "last weekend", "the first week of June", "in the past week") are rewritten into ones it
does before it is asked.

A phrase "before / after / since <something that is no date>" ("before I moved") is an `Anchor`: its
clause names an event of the history, not a date; the retriever resolves it (TagGraph-Fusion dates it by
the note that best matches the clause).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from functools import lru_cache

import numpy as np
from dateparser.date import DateDataParser

EPOCH = date(1970, 1, 1)
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
COUNTS = {"a couple of": "2", "couple of": "2", "a few": "3", "few": "3", "several": "4", "a": "1", "an": "1",
          "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
          "nine": "9", "ten": "10", "eleven": "11", "twelve": "12"}
DAY_TOLERANCE = 1.0    # free choice: a named day also matches the day before or after, fading (exp(-1) at 1 day)
SPAN_TOLERANCE = 7.0   # free choice: a named week, month or year fades out over a week past its edges
_NUM = r"(\d+|" + "|".join(sorted(map(re.escape, COUNTS), key=len, reverse=True)) + r")"
_MONTH = r"(" + "|".join(MONTHS) + r")"
_ORDINAL = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3, "last": -1}
# the shapes of phrases that name a time (lowercased text); each is resolved by dateparser below
SHAPES = {
    "ago": re.compile(_NUM + r"\s+(day|week|month|year)s?\s+ago\b"),
    "past": re.compile(r"\b(?:past|last)\s+(?:" + _NUM + r"\s+)?(day|week|month|year)s?\b"),
    "weekday": re.compile(r"\blast\s+(" + "|".join(WEEKDAYS) + r"|weekend)\b"),
    "yesterday": re.compile(r"\b(yesterday|the day before yesterday)\b"),
    "week_of": re.compile(r"\b(first|second|third|fourth|last|1st|2nd|3rd|4th)\s+week\s+of\s+" + _MONTH + r"\b"),
    "day_of": re.compile(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b|\b(\d{1,2})(?:st|nd|rd|th)?\s+of\s+"
                         + _MONTH + r"\b"),
    "month": re.compile(r"\b(in|on|during|since|of|early|late|mid-?|by)\s+" + _MONTH + r"(?:\s+(\d{4}))?\b"),
    "year": re.compile(r"\b(in|during|since)\s+((?:19|20)\d\d)\b"),
}
# "before I moved", "after my trip to Japan", "since we adopted the dog": an event, not a date
_ANCHOR = re.compile(r"\b(before|after|since)\s+((?:i|we|my|our|the|you)\b[^,.;?!]{3,80})")


@dataclass(frozen=True)
class AnchorDate:
    """Where an anchor clause's date came from: the note that matched `clause` best, its date ("2023-06-04") and
    the clause's words it holds (`matched`); `direction`: "before" or "after"."""

    clause: str
    direction: str
    note_id: str
    date: str
    matched: tuple[str, ...]

    def words(self) -> str:
        """'the date of demo_s23#0, the best match for 'the chicago marathon' (its words 'chicago', 'marathon')'."""
        said = ", ".join(f"'{w}'" for w in self.matched)
        return (f"the date of {self.note_id}, the best match for '{self.clause}'"
                + (f" (its words {said})" if said else ""))


@dataclass(frozen=True)
class Window:
    """Days since 1970-01-01, ``start`` to ``end`` inclusive; a date ``tolerance`` days outside still counts,
    fading as exp(-distance / tolerance). `anchor`: the note that dated it, for a window from "before / after
    <event>" (None for a date the question names)."""

    start: float
    end: float
    tolerance: float
    anchor: AnchorDate | None = field(default=None, compare=False)

    def closeness(self, days):
        """1 inside the window, exp(-distance / tolerance) outside (a day or an array of days)."""
        distance = np.maximum(self.start - days, 0) + np.maximum(days - self.end, 0)
        return np.exp(-distance / self.tolerance)


@dataclass(frozen=True)
class Anchor:
    """"before / after / since <clause>": the window is the time before or after the event the clause names."""

    direction: str  # "before" or "after" ("since" reads as after)
    clause: str


def _day(d: date | datetime) -> float:
    return float(((d.date() if isinstance(d, datetime) else d) - EPOCH).days)


@lru_cache(maxsize=64)
def _parser(asked_on: datetime) -> DateDataParser:
    """English-only dateparser reading relative to `asked_on` (the first costs ~200 ms of language data, later ~1 ms)."""
    return DateDataParser(languages=["en"], settings={"RELATIVE_BASE": asked_on, "PREFER_DATES_FROM": "past"})


def resolve(phrase: str, asked_on: datetime) -> date | None:
    """dateparser's date for `phrase` read on `asked_on`, never after it; None if it reads none or the date
    falls outside the calendar `datetime` can hold (year 1 to 9999)."""
    try:
        found = _parser(asked_on).get_date_data(phrase).date_obj
    except (OverflowError, ValueError):  # dateparser steps past date.min/date.max ("last Saturday" on 0001-01-01)
        return None
    return found.date() if found is not None and found.date() <= asked_on.date() else None


def as_of(days: float) -> datetime:
    """The moment `days` days after 1970-01-01, clipped to the calendar `datetime` can hold."""
    epoch = datetime(1970, 1, 1)
    return epoch + min(max(timedelta(days=days), datetime.min - epoch), datetime.max - epoch)


def _month_span(first: date) -> tuple[date, date]:
    """The first and last day of `first`'s month (December 9999 ends on date.max)."""
    if (first.year, first.month) == (date.max.year, 12):
        return first, date.max
    nxt = date(first.year + first.month // 12, first.month % 12 + 1, 1)
    return first, nxt - timedelta(days=1)


def _count(word: str | None) -> str:
    return "1" if word is None else COUNTS.get(word, word)


def _phrases(text: str):
    """(shape name, match) for each time phrase of lowercased `text`, most specific shape first; a phrase
    inside one already found ("of June" in "the first week of June") is not read again."""
    taken: list[tuple[int, int]] = []
    for name in ("week_of", "day_of", "ago", "past", "weekday", "yesterday", "month", "year"):
        for m in SHAPES[name].finditer(text):
            if all(m.end() <= a or m.start() >= b for a, b in taken):
                taken.append(m.span())
                yield name, m


def _window(name: str, groups: tuple, asked_on: datetime) -> Window | None:
    """The window of one phrase of shape `name` (its regex groups), resolved by dateparser."""
    now = _day(asked_on)
    if name in ("ago", "past"):
        n, unit = _count(groups[0]), groups[1]
        if not (got := resolve(f"{n} {unit}s ago", asked_on)):
            return None
        day = _day(got)
        if name == "ago":
            return Window(day, day, max(2.0, (now - day) / 4))  # free choice: +-25% of the distance, >= 2 days
        return Window(day, now, max(2.0, (now - day) / 4))  # "last month": the past month up to now
    if name == "weekday":
        weekend = groups[0] == "weekend"
        got = resolve("last saturday" if weekend else f"last {groups[0]}", asked_on)
        return got and Window(_day(got), _day(got) + weekend, DAY_TOLERANCE)
    if name == "yesterday":
        got = resolve(groups[0], asked_on)
        return got and Window(_day(got), _day(got), DAY_TOLERANCE)
    if name == "week_of":
        if not (got := resolve(groups[1], asked_on)):
            return None
        first, last = _month_span(got.replace(day=1))
        index = _ORDINAL[groups[0]]
        start = last - timedelta(days=6) if index < 0 else first + timedelta(days=7 * index)
        return Window(_day(start), _day(start) + 6, DAY_TOLERANCE)
    if name == "day_of":
        month_a, day_a, day_b, month_b = groups
        got = resolve(f"{month_a or month_b} {day_a or day_b}", asked_on)
        return got and Window(_day(got), _day(got), DAY_TOLERANCE)
    if name == "month":
        word, month, year = groups
        if not (got := resolve(f"{month} {year or ''}".strip(), asked_on)):
            return None
        first, last = _month_span(got.replace(day=1))
        return Window(_day(first), now if word == "since" else _day(last), SPAN_TOLERANCE)
    word, year = groups  # "year"
    if int(year) > asked_on.year:
        return None
    end = now if word == "since" else _day(date(int(year), 12, 31))
    return Window(_day(date(int(year), 1, 1)), end, SPAN_TOLERANCE)


def question_windows(text: str, asked_on: datetime) -> list[Window]:
    """The windows of the dates `text` names relative to `asked_on` (see the module docstring)."""
    windows = (_window(name, m.groups(), asked_on) for name, m in _phrases(text.lower()))
    return [w for w in windows if w is not None]


def question_anchors(text: str) -> list[Anchor]:
    """The "before / after / since <event>" phrases of `text` whose clause names no date."""
    out = []
    for word, clause in _ANCHOR.findall(text.lower()):
        if not any(shape.search(clause) for shape in SHAPES.values()):
            out.append(Anchor("before" if word == "before" else "after", clause.strip()))
    return out
