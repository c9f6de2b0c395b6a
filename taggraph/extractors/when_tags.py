"""The offline extractors' *when* tags: dates, months, weekdays, seasons, parts of the day, durations, ages and
clock times read from the user's words with regular expressions."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z]+")
_MONTHS = "january february march april may june july august september october november december".split()
_MONTH_ABBR = {m[:3]: m for m in _MONTHS if m != "may"} | {"sept": "september"}
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_SEASONS = {"spring", "summer", "fall", "autumn", "winter"}
_DAY_PARTS = {"morning", "afternoon", "evening", "night", "noon", "midnight", "dawn", "weekend", "bedtime",
              "lunchtime", "tonight"}
_NUMBER = r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|few|a few|several|a couple of"
_DURATION = re.compile(rf"^(?:for |about |over |around )?({_NUMBER})[ -]"
                       r"(second|minute|hour|day|week|month|year|decade)s?$")
_AGO = re.compile(r"^(.+) ago$")
_RELATIVE = re.compile(r"^(?:the )?(last|next|past|coming|previous) (week|weekend|month|year|semester|summer|winter|"
                       r"spring|fall|autumn)$")
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)(s?)\b")
_AGE = re.compile(r"\b(\d{1,3})[ -]*(?:years?|yrs?)[ -]*old\b")
_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d\d))? ?([ap])\.?m\b")
_DAY_OF_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\b")


def when_tags(text: str) -> list[str]:
    """Tags for one DATE/TIME entity: "May 2023" -> [year/2023, month/may]."""
    t = text.lower().strip(" .,")
    out: list[str] = []
    if m := _AGE.search(t):
        return [f"age/{m.group(1)}"]
    if m := _DURATION.match(t):
        return [f"duration/{m.group(1)}_{m.group(2)}"]
    if m := _AGO.match(t):
        return [f"date/{t}"]
    out += [f"{'decade' if s else 'year'}/{y}{s}" for y, s in _YEAR.findall(t)]
    words = _WORD.findall(t)
    months = [m for w in words if (m := w if w in _MONTHS else _MONTH_ABBR.get(w))]
    out += [f"month/{m}" for m in months]
    if months and (d := _DAY_OF_MONTH.search(_YEAR.sub("", t))):
        out.append(f"date/{months[0]}_{int(d.group(1))}")
    out += [f"weekday/{w.rstrip('s')}" for w in words if w.rstrip("s") in _WEEKDAYS]
    out += [f"season/{w}" for w in words if w in _SEASONS]
    out += [f"time/{w}" for w in words if w in _DAY_PARTS]
    if m := _CLOCK.search(t):
        out.append(f"time/{int(m.group(1))}{'_' + m.group(2) if m.group(2) else ''}_{m.group(3)}m")
    if m := _RELATIVE.match(t):
        out.append(f"date/{m.group(1)}_{m.group(2)}")
    if t in ("yesterday", "tomorrow"):
        out.append(f"date/{t}")
    return out
