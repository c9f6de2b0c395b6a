"""offline-v2: the offline extractor with a typed ontology, still model-free.

Same spaCy pipeline, rules, disk cache and batching as ``offline``
(`taggraph.extractors.offline`); what changes is where tags sit in the hierarchy:

- what: each noun of a noun run is its own atomic tag (tag rules 1-2: "prefer multiple
  simple tags"), WordNet collocations kept whole (``blood_pressure``), typed by the
  nearest WordNet anchor (`taggraph.extractors.lexicon`): ``dish/pizza``,
  ``computer/laptop``, ``sport/tennis``; the keyword table of ``offline`` wins where it has
  the word (``activity/yoga``, ``programming/python``). No ``topic/`` catch-all: a noun
  WordNet lacks goes under its lexical type (``term/``) only when it is not a stopword.
  Free proper nouns and -ing words get a tag only when WordNet types them as a sport,
  exercise, game, art, cooking, travel or recreation (``activity``-like, tag rule 1);
  lowercase "proper nouns" (tagger errors: ``lasagna``) are typed as nouns.
- extra: breeds (WordNet hyponyms of dog/cat, plus BREEDS) -> ``breed/shiba_inu``; with a
  possession cue nearby ("my", "adopted", "named") also ``pet/dog``, and "named Miso" ->
  ``pet/dog/miso``; "my <noun>" typed as a possession (``clothing/jacket``).
- who/when/where/why: as ``offline`` (NER + rules); short all-caps ORG acronyms are typed
  like nouns instead of ``topic/``.
- category words on the path (rules 4): WordNet's anchor word sits between the category and
  the noun when it is another word (``accessory/jewelry/necklace``, ``drink/beverage/coffee``),
  and a keyword-table tag gains a narrowing WordNet category (``activity/sport/tennis``,
  ``family/relative/aunt``), so "a piece of jewelry" or "my relatives" meets the tag.
- reuse: as ``offline``, an existing path with the same last segment is reused.
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from importlib.metadata import version

from taggraph.extractors.lexicon import ANCHORS, LEXFILE_CATEGORY, lexicon
from taggraph.extractors.offline import (GENERIC, MODEL, OWNED, PREFIX_CATEGORY, RULES_VERSION as BASE_RULES,
                                         TOPICS, OfflineExtractor, _Candidates, _entities, _rules, _topics)
from taggraph.core.ontology import NORMALIZATION_VERSION, singular

RULES_VERSION = "4"
MAX_TAGS = 8  # per 5W category (offline: 6); atomic nouns need more slots (Extraction caps at 12)
MAX_UNIT = 3  # longest WordNet collocation looked up in a noun run
OOV = "term"  # category of a noun WordNet does not know (e.g. "podcast", "kubernetes")
POSSESSION_CUES = {"my", "our", "adopted", "adopt", "adopting", "got", "named", "called", "rescued"}
CUE_WINDOW = 8  # tokens before a breed searched for a possession cue
# breeds WordNet 3.x lacks (free choice: common in conversations)
BREEDS = {"shiba_inu": "dog", "akita": "dog", "goldendoodle": "dog", "labradoodle": "dog", "cockapoo": "dog",
          "maltipoo": "dog", "cavapoo": "dog", "australian_shepherd": "dog", "maine_coon": "cat",
          "ragdoll": "cat", "sphynx": "cat", "british_shorthair": "cat", "bengal_cat": "cat"}
SPECIES = {"dog": "dog", "puppy": "dog", "cat": "cat", "kitten": "cat"}
# categories a "my X" possession keeps in extra (WordNet anchors of owned things)
POSSESSIONS = {"computer", "phone", "electronics", "appliance", "vehicle", "instrument", "clothing", "accessory",
               "furniture", "device", "equipment", "tool", "toy", "cosmetic", "kitchenware"}
TABLE_TAGS = {p for p in [*TOPICS.values(), *OWNED.values()] if p.count("/") == 1}  # offline's keyword tables
# WordNet categories a keyword-table tag may gain below its table head (free choice: the ones that
# narrow the head; WordNet's most frequent sense elsewhere is often another word: python, monitor)
TABLE_SUBCATEGORIES = {
    "activity": {"sport", "exercise", "game", "recreation", "travel"},
    "food": {"dish", "drink", "meal", "dairy", "meat", "baked_good", "dessert", "fruit", "vegetable", "ingredient"},
    "health": {"condition", "symptom", "injury", "medication"}, "music": {"instrument"},
    "relation": {"professional"}, "device": {"computer", "phone", "electronics", "equipment", "appliance"},
    "home": {"building"}, "family": {"relative"}}
ACTIVITIES = {"sport", "exercise", "game", "art", "cooking", "travel", "recreation"}
# every category this extractor mints, by 5W slot (for ontology reuse across slots)
V2_PREFIX_CATEGORY = ({c: "what" for c in [*ANCHORS, *LEXFILE_CATEGORY.values(), OOV]}
                      | PREFIX_CATEGORY | {"breed": "extra"})


def _units(words: list[str]) -> list[str]:
    """A noun run split into atomic units, longest WordNet/table collocation first."""
    lex, out, i = lexicon(), [], 0
    while i < len(words):
        for n in range(min(MAX_UNIT, len(words) - i), 0, -1):
            unit = "_".join(words[i:i + n - 1] + [lex.lemma(singular(words[i + n - 1]))])
            if n == 1 or unit in TOPICS or unit in lex or unit in BREEDS:
                break
        out.append(unit)
        i += n
    return out


def noun_tag(unit: str) -> str | None:
    """``pizza`` -> ``dish/pizza``; a stopword-like or too short unit -> None."""
    if unit in TOPICS:
        return TOPICS[unit]
    if unit.split("_")[-1] in GENERIC or len(unit) <= 2 or not unit.replace("_", "").isalpha():
        return None
    if unit in BREEDS:
        return f"breed/{unit}"
    prefix = lexicon().prefix(unit) or OOV
    return unit if prefix == unit else f"{prefix}/{unit}"


def _typed_run(run: list, cand: _Candidates) -> None:
    for unit in _units([t.lower_ for t in run]):
        cand.add("what", noun_tag(unit), run[0].i)


def _activity_word(tok) -> str | None:
    """A free PROPN or -ing word that WordNet types as an activity (``surfing`` -> ``sport/surfing``);
    a lowercase PROPN is a tagger error for a common noun (``lasagna``) and is typed like one."""
    word = tok.lower_
    if tok.pos_ == "PROPN" and tok.text.islower():
        return noun_tag(lexicon().lemma(singular(word)))
    category = lexicon().category(word)
    return f"{lexicon().prefix(word)}/{word}" if category in ACTIVITIES else None


@lru_cache(maxsize=1 << 16)  # pure over the bundled WordNet: a word is looked up once per process
def _head(word: str) -> str:
    """The WordNet lemma of a unit's last word, singular (``poodles`` -> ``poodle``)."""
    return lexicon().lemma(singular(word))


@lru_cache(maxsize=1 << 16)
def _species(unit: str) -> str | None:
    """``shiba_inu`` -> ``dog``; ``corgi`` -> ``dog`` (through WordNet); None if not a breed."""
    if unit in BREEDS:
        return BREEDS[unit]
    if lexicon().category(unit) != "breed":
        return None
    return "cat" if lexicon().is_a(unit, "domestic_cat") else "dog"


def _pets(toks: list, cand: _Candidates, used: set[int]) -> None:
    """Breeds and pet species with their names: "adopted a Shiba Inu named Miso"."""
    lowers, alpha = [t.lower_ for t in toks], [t.is_alpha for t in toks]  # read once, not once per unit length
    i = 0
    while i < len(toks):
        found = None
        for n in range(MAX_UNIT, 0, -1):
            if i + n > len(toks) or not all(alpha[i:i + n]):
                continue
            unit = "_".join(lowers[i:i + n - 1] + [_head(lowers[i + n - 1])])
            species = SPECIES.get(unit) if n == 1 and toks[i].pos_ == "NOUN" else None
            if species or (species := _species(unit)):
                found = (n, unit, species)
                break
        if found is None:
            i += 1
            continue
        n, unit, species = found
        end = i + n
        before = {t.lower_ for t in toks[max(0, i - CUE_WINDOW):i]}
        name = _pet_name(toks, end)
        owned = bool(before & POSSESSION_CUES) or name is not None
        slot = "extra" if owned else "what"
        if unit != species:
            cand.add(slot, f"breed/{unit}", i)
        if owned:
            cand.add("extra", f"pet/{species}", i)
        if name is not None:
            cand.add("extra", f"pet/{species}/{name[0]}", i)
            end = name[1]
        used.update(range(i, end))
        i = end


def _pet_name(toks: list, start: int) -> tuple[str, int] | None:
    """(name, end) for "named Miso" / "called Miso" / "Miso" right after a pet word."""
    j = start
    if j < len(toks) and toks[j].lower_ in ("named", "called"):
        j += 1
    k = j
    while k < len(toks) and k - j < 2 and toks[k].pos_ == "PROPN" and toks[k].is_alpha:
        k += 1
    return ("_".join(t.lower_ for t in toks[j:k]), k) if k > j else None


def _possessions(toks: list, cand: _Candidates, used: set[int]) -> None:
    """"my jacket" -> extra ``clothing/jacket`` (what ``offline``'s "my X" table lacks)."""
    for tok in toks:
        if tok.lower_ not in ("my", "our") or tok.i + 1 >= len(toks):
            continue
        j = tok.i + 1
        while j < len(toks) and toks[j].pos_ in ("ADJ", "NUM") and j - tok.i <= 3:
            j += 1
        k = j
        while k < len(toks) and toks[k].pos_ == "NOUN" and k not in used:
            k += 1
        if k == j or _head_owned(toks[k - 1]):
            continue
        unit = _units([t.lower_ for t in toks[j:k]])[-1]
        category = lexicon().category(unit)
        if category in POSSESSIONS:
            cand.add("extra", unit if unit == category else f"{lexicon().prefix(unit)}/{unit}", tok.i)
            used.update(range(j, k))


def _head_owned(tok) -> bool:
    return singular(tok.lower_) in OWNED


def _retype(path: str) -> str:
    """``topic/seo`` (an all-caps ORG from ``offline``'s NER rule) -> a typed tag, else ``acronym/seo``;
    a keyword-table tag gains WordNet's category when it is another anchor (``activity/sport/swimming``)."""
    head, unit = path.split("/", 1)
    if head == "topic":
        prefix = lexicon().prefix(unit)
        return f"{prefix}/{unit}" if prefix else f"acronym/{unit}"
    if path not in TABLE_TAGS or head == "pet":  # pet/dog keeps its place: pet/dog/miso hangs below it
        return path
    prefix = lexicon().prefix(unit) or ""
    # family/aunt -> family/relative/aunt (WordNet: family's anchor word), activity/tennis -> activity/sport/tennis
    middle = prefix.split("/")[-1] if prefix.startswith(f"{head}/") else prefix.split("/")[0]
    return f"{head}/{middle}/{unit}" if middle in TABLE_SUBCATEGORIES.get(head, ()) and middle != unit else path


def _retype_all(cand: _Candidates) -> None:
    """`_retype` on every who/what/extra candidate, merging counts of paths that become one."""
    for slot_name in ("who", "what", "extra"):
        tags = cand.by_cat[slot_name]
        for path, new in [(p, _retype(p)) for p in tags if "/" in p]:
            if new == path:
                continue
            slot = tags.pop(path)
            merged = tags.setdefault(new, [0, slot[1]])
            merged[0] += slot[0]
            merged[1] = min(merged[1], slot[1])


class OfflineV2Extractor(OfflineExtractor):
    """``offline`` rules with WordNet-typed, atomic tags; deterministic, no network."""

    name = "offline-v2"
    prefix_category = V2_PREFIX_CATEGORY
    max_tags = MAX_TAGS

    @cached_property
    def cache_key(self) -> str:
        """v2 rules, offline rules, normalization, spaCy model, spaCy and WordNet package versions."""
        return (f"offline-v2-rules{RULES_VERSION}-base{BASE_RULES}-norm{NORMALIZATION_VERSION}-{MODEL}-"
                f"{version(MODEL)}-spacy{version('spacy')}-wn{version('wn')}")

    @staticmethod
    def _collect(doc, toks: list, matcher, cand: _Candidates, used: set[int]) -> None:
        _pets(toks, cand, used)
        _rules(doc, toks, matcher, cand, used)
        _possessions(toks, cand, used)
        _entities(doc, toks, cand, used)
        _topics(toks, cand, used, topic_run=_typed_run, word_tag=_activity_word)
        _retype_all(cand)
