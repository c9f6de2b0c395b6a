"""One user-assistant interaction as a Markdown note (paper, appendix A).

A note file is::

    #who:user #what:activity/yoga #when:time/morning #where:n/a #why:n/a #extra:n/a
    ### User
    <user text>
    ---
    ### Assistant
    <assistant text>

Only the first line carries tags. A hand-edited tag line is read leniently where
the intent is clear and refused otherwise (`parse_tag_line`). Body lines that could be mistaken for the
format's own structure (``---``, ``### ...``, a leading ``#who:``-style tag line)
are escaped with one leading backslash, so any conversation text round-trips
byte for byte (a CR or CRLF in a turn is kept as it is: only LF ends a line of
the format) and never changes a note's tags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from taggraph.errors import InputError

CATEGORIES: tuple[str, ...] = ("who", "what", "when", "where", "why", "extra")
EMPTY_TAG = "n/a"

Tags = dict[str, tuple[str, ...]]

# Lines escaped in the body: any number of backslashes, then a structural prefix.
_STRUCTURAL = re.compile(r"^(\\*)(---|###|#(?:who|what|when|where|why|extra):)")
_ESCAPED = re.compile(r"^\\(\\*(?:---|###|#(?:who|what|when|where|why|extra):))")
_TAG_START = re.compile(r"(?:^|(?<=\s))#(\w+):")  # "#category:" at the start of the line or after a space
_PATH = re.compile(r"^\w+(?:/\w+)*$")


class NoteFormatError(InputError):
    """A note file does not follow the note format; the message says where."""


def empty_tags() -> Tags:
    return {c: () for c in CATEGORIES}


@dataclass
class Note:
    """One interaction with its extracted tags. `index` is its position in the case."""

    note_id: str
    session_id: str
    user: str
    assistant: str
    timestamp: str = ""
    tags: Tags = field(default_factory=empty_tags)
    summary: str = ""
    index: int = 0

    def __post_init__(self) -> None:
        self.tags = {c: tuple(self.tags.get(c, ())) for c in CATEGORIES}

    def tag_pairs(self) -> list[tuple[str, str]]:
        """(category, path) for every tag, in category order, without duplicates."""
        seen: dict[tuple[str, str], None] = {}
        for c in CATEGORIES:
            for path in self.tags[c]:
                seen[(c, path)] = None
        return list(seen)

    def paths(self) -> list[str]:
        """Distinct tag paths regardless of category, in first-seen order."""
        return list(dict.fromkeys(p for _, p in self.tag_pairs()))

    @property
    def tag_line(self) -> str:
        return format_tag_line(self.tags)

    @property
    def raw_text(self) -> str:
        """The interaction as the user and assistant wrote it (OpenClaw reads this)."""
        return f"User: {self.user}\nAssistant: {self.assistant}"

    def to_markdown(self) -> str:
        return (
            f"{self.tag_line}\n### User\n{_escape(self.user)}\n---\n"
            f"### Assistant\n{_escape(self.assistant)}\n"
        )


def format_tag_line(tags: Tags) -> str:
    parts = []
    for c in CATEGORIES:
        paths = tags.get(c, ())
        if paths:
            parts.extend(f"#{c}:{p}" for p in paths)
        else:
            parts.append(f"#{c}:{EMPTY_TAG}")
    return " ".join(parts)


def parse_tag_line(line: str, source: str = "<note>") -> Tags:
    """The tags of a tag line; `source` names the file in errors.

    A tag's value runs to the next ``#category:``, so a hand-typed value with spaces
    is one tag: ``#who:Bob Smith`` reads as ``bob_smith`` (lowercase, spaces -> ``_``).
    An unknown category, text before the first tag, or a value that is still not a
    path of word characters after that raises NoteFormatError naming the file and line.
    """
    canonical = _written_tags(line)
    if canonical is not None:
        return canonical
    tags: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    starts = list(_TAG_START.finditer(line))
    before = line[:starts[0].start()] if starts else line
    if before.strip():
        raise NoteFormatError(f"{source}:1: text before the first tag: {before.strip()[:60]!r}; the first line "
                              f"holds only tags (#who:... #what:...)")
    for m, end in zip(starts, [n.start() for n in starts[1:]] + [len(line)]):
        category, value = m.group(1), line[m.end():end].strip()
        if category not in tags:
            raise NoteFormatError(f"{source}:1: unknown tag category {category!r} in {line[m.start():end].strip()!r}; "
                                  f"categories: {', '.join(CATEGORIES)}")
        path = "_".join(value.lower().split())
        if path == EMPTY_TAG:
            continue
        if not _PATH.match(path):
            raise NoteFormatError(f"{source}:1: tag {line[m.start():end].strip()!r} is not a path of letters, digits "
                                  f"and _ separated by / (write {EMPTY_TAG} for none)")
        if path not in tags[category]:
            tags[category].append(path)
    return {c: tuple(v) for c, v in tags.items()}


def _written_tags(line: str) -> Tags | None:
    """The tags of a line as `format_tag_line` writes them (``#category:path`` one space apart, lowercase paths),
    read without the lenient parse (the same tags it would read); None for any other line."""
    tags: dict[str, list[str]] = {c: [] for c in CATEGORIES}
    for part in line.split(" "):
        category, sep, path = part[1:].partition(":")
        if not part.startswith("#") or not sep or category not in tags:
            return None
        if path == EMPTY_TAG:
            continue
        if path != path.lower() or not _PATH.match(path):
            return None
        if path not in tags[category]:
            tags[category].append(path)
    return {c: tuple(v) for c, v in tags.items()}


def _escape(text: str) -> str:
    if "---" not in text and "#" not in text:  # no line can need escaping (most turns): skip the line by line pass
        return text
    return "\n".join(_STRUCTURAL.sub(r"\\\1\2", line) for line in text.split("\n"))


def _unescape(text: str) -> str:
    if "\\" not in text:  # an escaped line starts with a backslash
        return text
    return "\n".join(_ESCAPED.sub(r"\1", line) for line in text.split("\n"))


def parse_note(markdown: str, *, note_id: str, session_id: str = "", timestamp: str = "",
               summary: str = "", index: int = 0, source: str = "<note>") -> Note:
    """Parse a note file's text, read as written (no newline translation); `source` names the file in errors.
    Lines end with LF; a file an editor saved with CRLF (its line 2 is '### User' + CRLF) is read with CRLF
    as the line end."""
    if markdown.partition("\n")[2].startswith("### User\r\n"):
        markdown = markdown.replace("\r\n", "\n")
    head, sep, rest = markdown.partition("\n")
    if not sep or not head.startswith("#"):
        raise NoteFormatError(f"{source}:1: first line must be the tag line (#who:... #what:...)")
    if not rest.startswith("### User\n"):
        raise NoteFormatError(f"{source}:2: line 2 must be '### User'")
    body = rest[len("### User\n"):]
    user, sep, assistant = body.partition("\n---\n### Assistant\n")
    if not sep:
        raise NoteFormatError(f"{source}: missing the '---' / '### Assistant' separator")
    if not assistant.endswith("\n"):
        raise NoteFormatError(f"{source}: file is truncated (no final newline)")
    return Note(
        note_id=note_id, session_id=session_id, timestamp=timestamp, summary=summary,
        index=index, user=_unescape(user), assistant=_unescape(assistant[:-1]),
        tags=parse_tag_line(head, source),
    )
