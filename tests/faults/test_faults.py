"""Each section of attacks (`attacks.SECTIONS`) as a test: it fails on a row marked DEFECT, FAILED or BUG, and
each known defect (`KNOWN_DEFECTS`) is a strict xfail of its own, so fixing one fails until it leaves the list."""

from functools import lru_cache

import pytest

from tests.faults import attacks

VERDICTS = ("DEFECT", "FAILED", "(BUG)")
# (section, the row's label) -> why it still fails; a row put here must keep failing (strict xfail)
KNOWN_DEFECTS: dict[tuple[str, str], str] = {
    ("int8_embedder", "int8 embedder: `explain --param OpenClaw.embedder=minilm-int8` and `bench --embedder "
                      "minilm-int8` without onnxruntime"):
        "explain's one-line error is not its last line: the notice skipping TagGraph-Fusion (no onnxruntime) is "
        "printed after it",
}


@lru_cache(maxsize=None)
def rows(section: str) -> tuple[tuple[str, str], ...]:
    """The rows of section `section`, run once per process."""
    return tuple(attacks.rows_of(next(s for s in attacks.SECTIONS if s.__name__ == section)))


def failed(what: str) -> bool:
    return what.startswith(VERDICTS[:2]) or VERDICTS[2] in what


@pytest.mark.parametrize("section", [s.__name__ for s in attacks.SECTIONS])
def test_every_attack_of_the_section_holds(section):
    found = rows(section)
    assert found, f"section {section} made no attack"
    broken = [f"{label}: {what}" for label, what in found if failed(what) and (section, label) not in KNOWN_DEFECTS]
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("section, label", [pytest.param(*key, marks=pytest.mark.xfail(reason=why, strict=True))
                                            for key, why in KNOWN_DEFECTS.items()])
def test_a_known_defect_still_fails(section, label):
    what = dict(rows(section))[label]
    assert not failed(what), what
