"""Turn whatever a model returned into a clean `Extraction`, field by field.

`parse_and_repair` never raises. It accepts a JSON string (or an already parsed
dict, or None) and returns ``(extraction, repairs)``; `repairs` lists short
notes such as ``"what: string -> list"`` or ``"dropped unknown key(s): mood"``
so callers can count and inspect how often a model broke the schema.

Rules:
- text over MAX_RAW_CHARS is cut before parsing; when the whole text is not JSON,
  the first balanced ``{...}`` object in it is tried (code fences, chatter around
  the object), then again without trailing commas;
- output that is not a JSON object at all (null, a list, garbage, nesting deep
  enough to hit the recursion limit), or an object with none of the schema's keys,
  gives an empty Extraction with `error` set;
- an object whose values hold numbers or booleans and no text is a failed extraction too (`error` set,
  so it is never cached); an object of empty lists and strings is an empty extraction;
- category keys are matched case-insensitively; unknown keys are dropped;
- a category that is missing, null, "n/a", empty, or a lone number or boolean becomes
  []; a string becomes a list (split on commas, semicolons and newlines); nested lists
  and dicts are flattened to their values (at most MAX_NESTING deep); a value that is
  not text (a number, true, null) is no tag: dropped, and the repair says how many;
- each value goes through `normalize_tag` (lowercase, underscores, singular,
  depth <= 4); values over MAX_TAG_CHARS are whole sentences, not tags, and are
  dropped; each category keeps at most MAX_TAGS_PER_CATEGORY distinct tags;
- the summary becomes one line (numbers in it become text) of at most
  MAX_SUMMARY_WORDS words and MAX_SUMMARY_CHARS characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from taggraph.extractors.base import MAX_SUMMARY_CHARS, MAX_TAGS_PER_CATEGORY, Extraction
from taggraph.core.notes import CATEGORIES
from taggraph.core.ontology import EMPTY_VALUES, normalize_tag

MAX_RAW_CHARS = 50_000
MAX_TAG_CHARS = 80
MAX_SUMMARY_WORDS = 30
MAX_NESTING = 3
_SPLIT = re.compile(r"[,;\n]+")
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def _first_object(text: str) -> str | None:
    """The first balanced {...} in `text`, honouring JSON strings; None if there is none."""
    start = text.find("{")
    if start < 0:
        return None
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


def _loads(text: str, repairs: list[str]) -> object:
    """json.loads with salvage; raises ValueError (or RecursionError) when nothing parses."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    candidate = _first_object(text)
    if candidate is None:
        raise ValueError("no JSON object found")
    uncomma = _TRAILING_COMMA.sub(r"\1", candidate)
    # Raw control characters inside strings: llama.cpp's JSON grammar lets a small model write a newline there.
    for attempt, strict, note in ((candidate, True, "salvaged JSON object from surrounding text"),
                                  (uncomma, True, "removed trailing commas"),
                                  (uncomma, False, "accepted control characters inside strings")):
        try:
            value = json.loads(attempt, strict=strict)
        except ValueError:
            continue
        repairs.append(note)
        return value
    raise ValueError("invalid JSON")


def _leaves(value: object, depth: int = 0) -> Iterator[object]:
    """The scalars inside `value`: itself, or the items of its nested lists/dicts (at most MAX_NESTING deep)."""
    if not isinstance(value, (list, tuple, dict)):
        yield value
    elif depth < MAX_NESTING:
        for item in value.values() if isinstance(value, dict) else value:
            yield from _leaves(item, depth + 1)


def _category(name: str, value: object, repairs: list[str]) -> list[str]:
    empty = value.strip().lower() in EMPTY_VALUES if isinstance(value, str) else \
        not isinstance(value, (list, tuple, dict))  # null, or a lone number or boolean: no tag
    if empty:
        repairs.append(f"{name}: {value!r:.12} -> []")
        return []
    if isinstance(value, str):
        repairs.append(f"{name}: string -> list")
        leaves: list[object] = list(_SPLIT.split(value))
    elif isinstance(value, list):
        if any(isinstance(v, (list, dict)) for v in value):
            repairs.append(f"{name}: flattened nested values")
        leaves = list(_leaves(value))
    else:
        repairs.append(f"{name}: {type(value).__name__} -> list")
        leaves = list(_leaves(value, depth=1))
    values = [v for v in leaves if isinstance(v, str)]
    if len(values) < len(leaves):
        repairs.append(f"{name}: dropped {len(leaves) - len(values)} value(s) that are not text")
    tags: dict[str, None] = {}
    changed = dropped = 0
    for raw in values:
        if len(raw) > MAX_TAG_CHARS:
            dropped += 1
            continue
        path = normalize_tag(raw)
        if path is None:
            dropped += 1
        else:
            changed += path != raw.strip()
            tags[path] = None
    if changed:
        repairs.append(f"{name}: normalized {changed} tag(s)")
    if dropped:
        repairs.append(f"{name}: dropped {dropped} empty or overlong value(s)")
    if len(tags) > MAX_TAGS_PER_CATEGORY:
        repairs.append(f"{name}: kept {MAX_TAGS_PER_CATEGORY} of {len(tags)} tags")
    return list(tags)[:MAX_TAGS_PER_CATEGORY]


def _summary(value: object, repairs: list[str]) -> str:
    text = " ".join(str(v) for v in _leaves(value) if isinstance(v, (str, int, float)) and not isinstance(v, bool))
    if not isinstance(value, str) and value is not None:
        repairs.append(f"summary: {type(value).__name__} -> string")
    if text.strip().lower() in EMPTY_VALUES:
        return ""
    words = text.split()
    short = " ".join(words[:MAX_SUMMARY_WORDS])[:MAX_SUMMARY_CHARS].strip()
    if len(words) > MAX_SUMMARY_WORDS or len(short) < len(" ".join(words)):
        repairs.append(f"summary: cut to {MAX_SUMMARY_WORDS} words / {MAX_SUMMARY_CHARS} chars")
    return short


def parse_and_repair(raw: str | dict | None) -> tuple[Extraction, list[str]]:
    """Clean `raw` model output into an Extraction plus notes on what was repaired."""
    repairs: list[str] = []
    data: object = raw
    if isinstance(raw, str):
        if len(raw) > MAX_RAW_CHARS:
            repairs.append(f"output cut from {len(raw)} to {MAX_RAW_CHARS} chars")
            raw = raw[:MAX_RAW_CHARS]
        try:
            data = _loads(raw, repairs)
        except (ValueError, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            repairs.append(f"unparseable output: {reason}")
            return Extraction(error=f"model output unparseable: {reason}"), repairs
    if not isinstance(data, dict):
        kind = "null" if data is None else type(data).__name__
        repairs.append(f"output is {kind}, not an object")
        return Extraction(error=f"model output is {kind}, not a JSON object"), repairs

    fields: dict[str, object] = {}
    unknown: list[str] = []
    for key, value in data.items():
        name = str(key).strip().lower()
        if name in CATEGORIES or name == "summary":
            fields.setdefault(name, value)
        else:
            unknown.append(str(key)[:30])
    if unknown:
        repairs.append(f"dropped unknown key(s): {', '.join(unknown[:5])}"
                       + (f" (+{len(unknown) - 5})" if len(unknown) > 5 else ""))
    missing = [c for c in (*CATEGORIES, "summary") if c not in fields]
    if not fields:
        return Extraction(error=f"model output has none of the keys {', '.join(missing)}"), repairs
    if missing:
        repairs.append(f"missing key(s): {', '.join(missing)}")
    leaves = [leaf for value in fields.values() for leaf in _leaves(value) if leaf is not None]
    others = [leaf for leaf in leaves if not isinstance(leaf, str)]
    if others and not any(isinstance(leaf, str) and leaf.strip() for leaf in leaves):
        repairs.append("no value is text")  # {"what": [2023, true]}: a reply, but not of tags; asked again
        return Extraction(error=f"model output holds no text, only values such as {str(others[0])[:20]!r} "
                                f"({type(others[0]).__name__})"), repairs
    result = {c: _category(c, fields[c], repairs) if c in fields else [] for c in CATEGORIES}
    return Extraction(**result, summary=_summary(fields.get("summary"), repairs)), repairs
