"""AdaptiveGraph: Personalized PageRank over the base graph (paper, section 3.3.4).

Transition graph: the base graph plus chronological links between consecutive
files. Teleport vector s: each ontology concept matched by a (stopword-filtered)
query token gets mass 1 per token; each file gets its TF-IDF content overlap
(in [0, 1]; "file seeding"); s is normalized to sum 1. Then 20 iterations of
``x <- a M^T x + (1 - a) s`` with a = 0.85, starting from x = s, where M is the
row-stochastic transition matrix and the mass of dangling nodes returns to s
(as networkx.pagerank does). Files rank by final x.

Ablation switches: ``iterations=0`` (no diffusion: ranks by s), ``chronological=False``,
``file_seeding=False``. ``iterations=None`` (beyond the paper) uses the exact
fixed point instead of 20 steps. A query with no matched tag and no shared term
(all-zero seed) falls back to a uniform teleport, i.e. plain PageRank
centrality, instead of dividing by zero; `explain` says so.

Not networkx.pagerank: scipy.sparse power iteration is >20x faster; the parity test
is tests/unit/test_adaptive.py. The walk (taggraph.methods.walk, one per store, shared by every
AdaptiveGraph over it, TagGraph-Fusion's graph part included) keeps the 0/1 adjacency A of the graph (csr)
and 1/out-degree per node: a note's links are appended to A's rows in one pass (`grown`),
and a query steps x -> A (x / deg), which is P x bit for bit (`AdaptiveGraph.step`), so a
node whose degree changes rescales nothing. Explanations trace shortest paths breadth-first
over A (scipy.sparse.csgraph: one walk from the note serves every seed tag).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse import csgraph
from pydantic import Field

from taggraph.core.graph import FILE, TAG, concept_node, file_node
from taggraph.core.notes import Note
from taggraph.methods.base import Evidence, Retriever
from taggraph.methods.params import Component
from taggraph.methods.scores import Scores
from taggraph.methods.index import STOPWORD_DF, concept_matcher, filter_tokens, term_index
from taggraph.core.text import query_tokens
from taggraph.methods.walk import NodeIndex, walk_of

ALPHA = 0.85  # paper, appendix E
ITERATIONS = 20  # paper, appendix E
# free choice: a bound on power-iteration steps; 20 already converge to ~0.85^20 = 4% of the start,
# 1,000 to 1e-71 (use iterations=None for the exact fixed point)
MAX_ITERATIONS = 1000
# free choices: the walk `evidence` names is the target's 3 largest in-flows, each traced back <= 4 edges
WALK_WIDTH = 3
WALK_LENGTH = 4


def personalized_pagerank(P: sp.csr_matrix, dangling: np.ndarray, s: np.ndarray, alpha: float = ALPHA,
                          iterations: int | None = ITERATIONS, solver=None) -> np.ndarray:
    """Personalized PageRank x = alpha (P x + (dangling . x) s) + (1 - alpha) s, summing to 1.

    P is the column-stochastic transition matrix M^T (csr); `dangling` marks nodes
    without out-edges (their mass returns to s). With an integer `iterations`,
    that many power-iteration steps from x = s (the paper's method: 20). With
    ``iterations=None``, the exact fixed point: x is proportional to
    (I - alpha P)^-1 s (the dangling term only rescales it), solved with
    `solver` (a cached ``splu(I - alpha P).solve``) or spsolve.
    An all-zero `s` is replaced by the uniform vector.
    """
    s = _teleport(s)
    if iterations is None:
        y = solver(s) if solver is not None else spla.spsolve(
            (sp.identity(P.shape[0], format="csc") - alpha * P).tocsc(), s)
        return y / y.sum()
    return power_iteration(P.dot, dangling, s, alpha, iterations)[0]


def power_iteration(step, dangling: np.ndarray, s: np.ndarray, alpha: float,
                    iterations: int) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """`iterations` steps of x <- alpha (P x + (dangling . x) s) + (1 - alpha) s from x = s, `step(x)` giving P x:
    (the last x, the x the last step started from, each step's teleport factor alpha (dangling . x_t) + 1 - alpha).
    `dangling`: a mask or the indexes of the nodes without out-edges; `s` sums to 1."""
    x, previous, factors = s.copy(), s, []
    rest = (1 - alpha) * s
    for _ in range(iterations):
        mass = x[dangling].sum()
        factors.append(alpha * mass + 1 - alpha)
        y = step(x)
        y += mass * s
        y *= alpha
        y += rest
        previous, x = x, y
    return x, previous, factors


def _teleport(s: np.ndarray) -> np.ndarray:
    """The teleport `personalized_pagerank` uses for the seed vector `s`: normalized, uniform when all zero."""
    total = s.sum()
    return s / total if total > 0 else np.full(len(s), 1.0 / max(len(s), 1))


def _seed_split(shares: np.ndarray, kinds: np.ndarray, name, own: int) -> str:
    """Where a note's PPR mass came from, by seed: its own file seed, the seed tags, other notes' file seeds."""
    seeded = np.flatnonzero(shares)
    parts = [f"{shares[own]:.0%} from its own file seed (its TF-IDF overlap with the query)"] if shares[own] >= 0.005 else []
    for kind, group in (("seed tags", seeded[kinds[seeded] <= TAG]),
                        ("other notes' file seeds", seeded[(kinds[seeded] == FILE) & (seeded != own)])):
        total = sum(shares[group].tolist())  # in node order, one by one
        if total >= 0.005:
            top = group[np.argmax(shares[group])]
            parts.append(f"{total:.0%} from {kind} (most: {name(top).partition(':')[2]}, {shares[top]:.0%})")
    return ", ".join(parts) or "from seeds each under 0.5%"


def _largest(values: np.ndarray, ids: np.ndarray, m: int) -> np.ndarray:
    """The positions of the `m` largest `values`, largest first, ties by larger id first (the order of sorting the
    (value, id) pairs in reverse); found by partition when m is smaller."""
    if m < len(values):
        keep = np.flatnonzero(values >= np.partition(values, len(values) - m)[len(values) - m])
    else:
        keep = np.arange(len(values))
    return keep[np.lexsort((ids[keep], values[keep]))[::-1][:m]]


@dataclass(frozen=True)
class _Query:
    """What one question gives over the graph's nodes: the seeds (`AdaptiveGraph.seeds`), the seed vector `s`
    before normalization and the power iteration's (x, x before the last step, teleport factors) from it; `step` is
    None when nothing ran (no seed and no diffusion: every score 0)."""
    concepts: dict[str, float]
    files: Scores
    dropped: list[str]
    s: np.ndarray
    x: np.ndarray
    step: tuple[np.ndarray, np.ndarray, list[float]] | None


# Its ablations (paper, appendix F): one component removed each (Params), and the pair the distractor
# sweep needs (section 6.1: diffusion's value without file seeding).
class AdaptiveGraph(Retriever):
    @dataclass(frozen=True)
    class Params:
        alpha: Annotated[float, Field(ge=0, lt=1)] = ALPHA
        iterations: Annotated[int | None, Field(ge=0, le=MAX_ITERATIONS), Component("Diffusion", off=0)] = ITERATIONS
        chronological: Annotated[bool, Component("Chronological")] = True
        file_seeding: Annotated[bool, Component("FileSeeding")] = True
        stopword_df: Annotated[float, Field(gt=0, le=1)] = STOPWORD_DF
        stopword_fallback: bool = False

    def __init__(self, store, params: Params | None = None) -> None:
        super().__init__(store, params)
        self.terms = term_index(store)
        self.matcher = concept_matcher(store)
        self.walk = walk_of(store, self.params.chronological)  # one per store, shared with every AdaptiveGraph
        self.node_index = NodeIndex(store, lambda: self.walk.nodes)
        self._cached: dict[str, tuple[int, Any]] = {}  # name -> (the walk's version, value): what depends on params

    def add(self, note: Note) -> None:
        """Nothing yet: the walk's structure is extended from the base graph on the next query or explain."""

    def _sync(self) -> None:
        """The walk with every note the base graph holds (`Walk.sync`: nothing is rebuilt)."""
        self.walk.sync()

    def _cache(self, name: str, make):
        """`make()`, computed once per state of the walk and this method's parameters."""
        hit = self._cached.get(name)
        if hit is None or hit[0] != self.walk.version:
            hit = self._cached[name] = (self.walk.version, make())
        return hit[1]

    def adjacency(self) -> sp.csr_matrix:
        """The walk's 0/1 adjacency A over the graph's nodes (symmetric: every link both ways, a repeated link
        once), synced on demand."""
        return self.walk.adjacency()

    def step(self, x: np.ndarray) -> np.ndarray:
        """P x for the column-stochastic P = A D^-1 (D: out-degrees), as A (x / D): each product x[i] / deg(i) is
        P's entry times x[i] rounded once, summed in the same order as csr P x sums them, so the result is P x bit
        for bit, and a note that changes a node's degree rescales nothing."""
        return self.adjacency() @ (x * self.walk.inverse_degree)

    def step_back(self, v: np.ndarray) -> np.ndarray:
        """P^T v, bit for bit as the transpose of csr P gives it: row i of P^T is node i's neighbours, each entry
        1/deg(i), summed in neighbour order; its values are made once per graph state."""
        A = self.adjacency()
        back = self.walk.cached("back", lambda: sp.csr_matrix(
            (np.repeat(self.walk.inverse_degree, np.diff(A.indptr)), A.indices, A.indptr), shape=A.shape))
        return back @ v

    def transition(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """(column-stochastic P, dangling mask) of the current graph, synced on demand; P is A's structure with
        each entry 1/deg of its column, made once per graph state (the queries read `step`)."""
        A = self.adjacency()

        def made():
            dangling = np.zeros(A.shape[0], dtype=bool)
            dangling[self.walk.dangling] = True
            return sp.csr_matrix((self.walk.inverse_degree[A.indices], A.indices, A.indptr), shape=A.shape), dangling
        return self.walk.cached("transition", made)

    def exact_solver(self):
        """LU factorization of (I - alpha P) for ``iterations=None``: factorized again, lazily, after the graph grows."""
        def factorized():
            P, _ = self.transition()
            return spla.splu((sp.identity(P.shape[0], format="csc") - self.params.alpha * P).tocsc()).solve
        return self._cache("solver", factorized)

    def seeds(self, text: str) -> tuple[dict[str, float], Scores, list[str]]:
        """(concept -> mass, note index -> TF-IDF overlap, dropped tokens) before normalization."""
        kept, dropped = filter_tokens(query_tokens(text), self.terms, True, self.params.stopword_df,
                                      self.params.stopword_fallback)
        concepts: dict[str, float] = {}
        for token in kept:
            for path in self.matcher.match(token):
                concepts[path] = concepts.get(path, 0.0) + 1.0
        files = self.terms.tfidf_overlap(kept) if self.params.file_seeding else Scores.of_dense(np.zeros(0))
        return concepts, files, dropped

    def _query(self, text: str) -> _Query:
        """The seeds and power iteration of `text`, computed once per question and graph state (score and every
        explained note read them)."""
        self._sync()
        memo = self._cached.get("query")
        if memo is not None and memo[0] == self.walk.version and memo[1][0] == text:
            return memo[1][1]
        concepts, files, dropped = self.seeds(text)
        s = np.zeros(self.walk.nodes)
        for path, mass in concepts.items():
            s[self.store.graph.concept_number(path)] += mass
        s[self._file_nodes()[files.index]] += files.value  # file nodes are no concept: each one added to 0
        if s.sum() == 0 and self.params.iterations == 0:
            query = _Query(concepts, files, dropped, s, s, None)  # nothing to rank without diffusion
        else:
            step = self._last_step(_teleport(s))
            query = _Query(concepts, files, dropped, s, step[0], step)
        self._cached["query"] = (self.walk.version, (text, query))
        return query

    def scores_all(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(final x, teleport s) over all graph nodes."""
        query = self._query(text)
        return query.x, query.s

    def score(self, text: str, *, asked_on: datetime | None = None) -> Scores:
        """Every note's final PPR mass, zeros included: PPR ranks all files (ties: earlier note first),
        so without diffusion unseeded notes still follow the seeded ones, as in the paper's sweep."""
        if not self.store.notes:
            return Scores.of_dense(np.zeros(0))
        x = self._query(text).x
        return Scores(np.arange(len(self.store.notes)), x[self._file_nodes()])

    def _file_nodes(self) -> np.ndarray:
        """Each note's file node, for the notes the walk holds."""
        return self.store.graph.file_nodes[:self.walk.files]

    def _last_step(self, s_norm: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[float]]:
        """(x, the iterate the last step started from, each step's teleport factor alpha (dangling . x_t) + 1 - alpha)
        of `personalized_pagerank` from the normalized teleport `s_norm`; at the exact fixed point both iterates are x."""
        self._sync()
        a, steps = self.params.alpha, self.params.iterations
        if steps is None:
            y = self.exact_solver()(s_norm)
            x = y / y.sum()
            return x, x, [a * x[self.walk.dangling].sum() + 1 - a]
        return power_iteration(self.step, self.walk.dangling, s_norm, a, steps)

    def seed_shares(self, s: np.ndarray, target: int, step=None) -> np.ndarray:
        """Each node's share of x[target] that its own teleport mass brought: the exact split of the note's PPR mass
        by seed, summing to 1 when x[target] > 0. Once each step's dangling mass is fixed the iteration is linear in
        the teleport, so one backward pass from the note gives every seed's part. `step`: `_last_step` of `s`'s
        teleport, when the caller has it."""
        s_norm = _teleport(s)
        x, _, factors = step or self._last_step(s_norm)
        if x[target] <= 0:
            return np.zeros(len(s))
        pick = np.zeros(len(s))
        pick[target] = 1.0
        if self.params.iterations is None:  # x[target] = y[target] / sum(y), y = (I - alpha P)^-1 s: s . z = y[target]
            parts = s_norm * self.exact_solver()(pick, trans="T")  # z solves the transposed system
            return parts / parts.sum()
        # x_k = A^k s + sum_t factor_t A^(k-1-t) s with A = alpha P; reach = d x_k[target] / d s
        reach, back = np.zeros(len(s)), pick
        for factor in reversed(factors):
            reach += factor * back
            back = self.params.alpha * self.step_back(back)
        reach += back
        return s_norm * reach / x[target]

    def flow_walk(self, s: np.ndarray, target: int, width: int = WALK_WIDTH,
                  length: int = WALK_LENGTH, step=None) -> tuple[list[list[str]], list[dict[str, Any]], float]:
        """The edges that carried most of the PPR mass to node `target`: its `width` in-edges with the largest flow
        alpha x[u] P[target, u] in the last step (x: the iterate that step started from, so the flows and the
        teleport add up to x[target]), each traced back along the largest in-flow of its source until a seeded node
        (s > 0) or `length` edges. Returns (walk edges, the target's in-flows as {from, flow, share} with share of
        x[target], the teleport's share of x[target]); without diffusion every bit of the mass is teleport.
        `step`: `_last_step` of `s`'s teleport, when the caller has it."""
        self._sync()
        name = self.store.graph.node_name
        s_norm = _teleport(s)
        x, previous, factors = step or self._last_step(s_norm)
        mass = x[target] or 1.0
        if not factors:
            return [], [], 1.0
        indptr, indices, inverse = self.walk.indptr, self.walk.indices, self.walk.inverse_degree

        def into(v: int, at: np.ndarray, m: int) -> list[tuple[float, int]]:
            """The `m` largest in-flows (flow, from node) of node `v` from the iterate `at`, largest first."""
            sources = indices[indptr[v]:indptr[v + 1]]
            flows = self.params.alpha * inverse[sources] * at[sources]
            best = _largest(flows, sources, m)
            return list(zip(flows[best].tolist(), sources[best].tolist()))

        inflow = into(target, previous, width)
        walk: dict[tuple[str, str], None] = {}
        for _, u in inflow:
            v, seen, chain = target, {target}, []
            while True:
                chain.append((name(u), name(v)))
                if s[u] > 0 or len(seen) > length or u in seen:
                    break
                seen.add(u)
                best = next((w for _, w in into(u, x, len(seen) + 1) if w not in seen), None)
                if best is None:
                    break
                v, u = u, best
            walk.update(dict.fromkeys(reversed(chain)))  # read from where the mass came towards the note
        teleport = float(factors[-1] * s_norm[target] / mass)
        flows = [{"from": name(u), "flow": float(f), "share": float(f / mass)} for f, u in inflow]
        return [list(e) for e in walk], flows, teleport

    def _walk_from(self, target: int) -> tuple[np.ndarray, np.ndarray]:
        """(nodes in breadth-first order, predecessor of every node) of a breadth-first walk from node `target` over
        the walk's links: a shortest path from a node to the target follows its predecessors (-9999: none)."""
        return csgraph.breadth_first_order(self.adjacency(), target, directed=True, return_predecessors=True)

    @staticmethod
    def _hops(order: np.ndarray, predecessor: np.ndarray, most: int = WALK_LENGTH) -> np.ndarray:
        """Each node's edges from the walk's start (`_walk_from`) up to `most`, -1 beyond or unreached."""
        hops = np.full(len(predecessor), -1)
        hops[order[0]] = 0
        rest = order[1:]  # level by level: a node is one hop further than its predecessor
        for hop in range(1, most + 1):
            here = hops[predecessor[rest]] == hop - 1
            hops[rest[here]] = hop
            rest = rest[~here]
        return hops

    def breaks(self, dropped: list[str], target: str, seeded: bool, seed_tags=(),
               walk: tuple[np.ndarray, np.ndarray] | None = None) -> list[dict[str, str]]:
        """Where the diffusion towards `target` had no start, each {node, why}: a tag a dropped stopword matches
        within WALK_LENGTH edges of the note and no kept token seeds (`seed_tags`), the note itself when nothing
        was seeded. `walk`: `_walk_from` the note, when the caller has it."""
        hops = self._hops(*(walk or self._walk_from(self.node_index[target]))) if dropped else None
        out: dict[str, str] = {}
        for token in dropped:
            for path in self.matcher.match(token):
                if hops[self.store.graph.concept_number(path)] >= 0 and path not in seed_tags:
                    out.setdefault(concept_node(path), f"no walk starts here: query token '{token}' matches this tag "
                                   f"but was dropped as a stopword (in more than {self.params.stopword_df:.0%} of "
                                   f"the {len(self.store)} notes), so it gets no teleport mass")
        if not seeded:
            out.setdefault(target, "no seed: no tag matched and no note shares a query term, so "
                           + ("no PPR ran and every note scores 0" if self.params.iterations == 0 else
                              "PPR ran with a uniform teleport (plain PageRank centrality)"))
        return [{"node": n, "why": why} for n, why in out.items()]

    def evidence(self, text: str, note: Note, *, asked_on: datetime | None = None) -> Evidence:
        query = self._query(text)  # the question's power iteration, as `score` ran it
        concepts, files, dropped, s, x = query.concepts, query.files, query.dropped, query.s, query.x
        total = s.sum() or 1.0
        target = file_node(note.note_id)
        name = self.store.graph.node_name
        at = int(self._file_nodes()[note.index])
        shares = self.seed_shares(s, at, query.step) if s.sum() > 0 else np.zeros(len(s))
        walk_from = self._walk_from(at) if concepts or dropped else None
        paths = []
        for path, mass in sorted(concepts.items(), key=lambda kv: -kv[1])[:20]:
            predecessor = walk_from[1]
            trail = [self.store.graph.concept_number(path)]
            if predecessor[trail[0]] < 0:
                continue  # no path to the note
            while trail[-1] != at:
                trail.append(predecessor[trail[-1]])
            paths.append({"seed": path, "seed_mass": round(mass / total, 5), "path": [name(i) for i in trail],
                          "share": round(float(shares[trail[0]]), 5)})
        paths.sort(key=lambda p: -p["share"])
        walk, inflows, teleport = self.flow_walk(s, at, step=query.step) if x[at] > 0 else ([], [], 0.0)
        seeds = np.flatnonzero(shares >= 0.0005)
        by_seed = {name(j): float(shares[j]) for j in seeds[np.argsort(-shares[seeds], kind="stable")[:10]]}
        detail: dict[str, Any] = {
            "dropped_as_stopwords": dropped,
            "seed_tags": {p: round(m / total, 5) for p, m in concepts.items()},
            "file_seed_mass": round(files.get(note.index, 0.0) / total, 5),
            "teleport_total_on_files": round(sum(files.value.tolist()) / total, 5),
            "mass_by_seed": {name: round(share, 4) for name, share in by_seed.items()},
            "main_paths": paths[:3],
            "walk": walk,
            "mass_from": {**{f["from"]: round(f["share"], 4) for f in inflows}, "teleport": round(teleport, 4)},
            "walk_breaks": self.breaks(dropped, target, s.sum() > 0, concepts, walk_from),
        }
        ev = Evidence(detail=detail)
        came = ", ".join(f"{f['share']:.0%} over the edge from {f['from']}" for f in inflows if f["share"] >= 0.005)
        came += (", " if came and teleport >= 0.005 else "") + (f"{teleport:.0%} by teleport" if teleport >= 0.005 else "")
        if s.sum() == 0:
            kept = [t for t in dict.fromkeys(query_tokens(text)) if t not in dropped]
            why = (f"every query token was dropped as a stopword (in more than {self.params.stopword_df:.0%} of "
                   f"the {len(self.store)} notes)" if dropped and not kept else
                   "no query token matches a tag and the note shares no query term"
                   + (f" ({', '.join(dropped)} dropped as stopwords)" if dropped else ""))
            ev.fallback = (f"no seed: {why}, so " + ("no PPR ran and every note scores 0 (their order is tie order)"
                                                     if self.params.iterations == 0 else
                                                     "PPR ran with a uniform teleport (plain PageRank centrality)"))
        elif x[at] > 0:
            ev.summary = f"PPR mass {x[at]:.3g}: " + _seed_split(shares, self.store.graph.node_kinds, name, at)
        if came and x[at] > 0 and s.sum() > 0:
            ev.summary += f"; in the last step it arrived {came}"
        elif came and x[at] > 0:
            ev.summary = f"PPR mass {x[at]:.3g}: it arrived {came}"
        if x[at] <= 0:
            ev.missing = "no seed reaches the note: no matched tag connects to it and it shares no query term"
        return ev
