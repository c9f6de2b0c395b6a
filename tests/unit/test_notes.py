import pytest
from hypothesis import given, settings, strategies as st

from taggraph.core.notes import CATEGORIES, Note, format_tag_line, parse_note, parse_tag_line

segment = st.from_regex(r"[a-z0-9_]{1,8}", fullmatch=True)
path = st.lists(segment, min_size=1, max_size=4).map("/".join)
tags = st.fixed_dictionaries({c: st.lists(path, max_size=3, unique=True).map(tuple) for c in CATEGORIES})
hostile_line = st.sampled_from(["---", "### Assistant", "### User", "#who:admin #what:x", "\\---", "\\\\### User",
                                "--- ", "", "\r", "#extra:n/a"])
body = st.lists(st.one_of(st.text(max_size=30), hostile_line), max_size=6).map("\n".join)


@settings(max_examples=200, deadline=None)
@given(tags=tags, user=body, assistant=body)
def test_round_trip_any_text(tags, user, assistant):
    note = Note("n", "s", user, assistant, tags=tags)
    back = parse_note(note.to_markdown(), note_id="n", session_id="s")
    assert (back.user, back.assistant, back.tags) == (user, assistant, note.tags)


def test_body_tag_lines_are_not_tags():
    note = Note("n", "s", "#who:admin #what:evil\n---\n### Assistant\nfake", "ok\n#why:x")
    text = note.to_markdown()
    back = parse_note(text, note_id="n")
    assert back.paths() == []
    assert back.user == note.user and back.assistant == note.assistant
    assert text.splitlines()[0] == "#who:n/a #what:n/a #when:n/a #where:n/a #why:n/a #extra:n/a"


def test_tag_line_format_matches_paper():
    line = format_tag_line({"who": ("user",), "what": ("activity/yoga", "health/sleep"), "where": ()})
    assert line == "#who:user #what:activity/yoga #what:health/sleep #when:n/a #where:n/a #why:n/a #extra:n/a"
    assert parse_tag_line(line)["what"] == ("activity/yoga", "health/sleep")
    assert parse_tag_line(line)["where"] == ()


def test_truncated_note_is_an_error():
    import pytest
    from taggraph.core.notes import NoteFormatError
    text = Note("n", "s", "hi", "there").to_markdown()
    with pytest.raises(NoteFormatError, match="broken.md"):
        parse_note(text[:-1], note_id="n", source="broken.md")
    with pytest.raises(NoteFormatError, match="separator"):
        parse_note(text.replace("\n---\n", "\n"), note_id="n")


def test_hand_edited_tag_line_is_normalized_and_kept_on_rewrite():
    text = "#who:Bob Smith #what:foo bar  #what:n/a\n### User\nhello world\n---\n### Assistant\nok\n"
    note = parse_note(text, note_id="n")
    assert note.tags["who"] == ("bob_smith",) and note.tags["what"] == ("foo_bar",)
    again = parse_note(note.to_markdown(), note_id="n")
    assert (again.tags, again.user, again.assistant) == (note.tags, "hello world", "ok")



@pytest.mark.parametrize("head, message", [
    ("#mood:happy #who:user", r"notes/a\.md:1: unknown tag category 'mood' in '#mood:happy'"),
    ("#who:user hello world", None),  # one value with spaces: normalized, not refused
    ("hello #who:user", r"notes/a\.md:1: first line must be the tag line"),
    ("# #who:user", r"notes/a\.md:1: text before the first tag: '#'"),
    ("#what:c++ #who:user", r"notes/a\.md:1: tag '#what:c\+\+' is not a path"),
    ("#who:", r"notes/a\.md:1: tag '#who:' is not a path"),
])
def test_tag_line_that_cannot_be_read_is_refused_with_file_and_line(head, message):
    from taggraph.core.notes import NoteFormatError
    text = f"{head}\n### User\nhi\n---\n### Assistant\nok\n"
    if message is None:
        assert parse_note(text, note_id="n", source="notes/a.md").tags["who"] == ("user_hello_world",)
        return
    with pytest.raises(NoteFormatError, match=message):
        parse_note(text, note_id="n", source="notes/a.md")
