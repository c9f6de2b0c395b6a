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

Not networkx.pagerank: scipy.sparse power iteration on a matrix kept current
incrementally (edges appended as notes arrive) is >20x faster; the parity test
is tests/unit/test_adaptive.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Annotated, Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from pydantic import Field

from taggraph.core.graph import concept_node, file_node
from taggraph.core.notes import Note
from taggraph.methods.base import Evidence, Retriever
from taggraph.methods.params import Component
from taggraph.methods.index import STOPWORD_DF, concept_matcher, filter_tokens, term_index
from taggraph.core.text import query_tokens

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
    total = s.sum()
    s = s / total if total > 0 else np.full(len(s), 1.0 / max(len(s), 1))
    if iterations is None:
        y = solver(s) if solver is not None else spla.spsolve(
            (sp.identity(P.shape[0], format="csc") - alpha * P).tocsc(), s)
        return y / y.sum()
    x = s.copy()
    for _ in range(iterations):
        x = alpha * (P @ x + x[dangling].sum() * s) + (1 - alpha) * s
    return x


def _teleport(s: np.ndarray) -> np.ndarray:
    """The teleport `personalized_pagerank` uses for the seed vector `s`: normalized, uniform when all zero."""
    total = s.sum()
    return s / total if total > 0 else np.full(len(s), 1.0 / max(len(s), 1))


def _seed_split(shares: np.ndarray, names: list[str], own: int) -> str:
    """Where a note's PPR mass came from, by seed: its own file seed, the seed tags, other notes' file seeds."""
    tags = {n.removeprefix("concept:"): shares[j] for j, n in enumerate(names) if n.startswith("concept:") and shares[j]}
    files = {n.removeprefix("file:"): shares[j] for j, n in enumerate(names)
             if n.startswith("file:") and j != own and shares[j]}
    parts = [f"{shares[own]:.0%} from its own file seed (its TF-IDF overlap with the query)"] if shares[own] >= 0.005 else []
    for kind, group in (("seed tags", tags), ("other notes' file seeds", files)):
        if sum(group.values()) >= 0.005:
            top = max(group, key=group.get)
            parts.append(f"{sum(group.values()):.0%} from {kind} (most: {top}, {group[top]:.0%})")
    return ", ".join(parts) or "from seeds each under 0.5%"


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
        self.node_index: dict[str, int] = {}
        self.rows = np.zeros(0, dtype=np.int64)
        self.cols = np.zeros(0, dtype=np.int64)
        self._edges_seen = 0
        self._files_seen = 0
        self._matrix: tuple[sp.csr_matrix, np.ndarray] | None = None
        self._solver = None  # cached LU solve of (I - alpha P) for iterations=None
        self._nx = None  # networkx copy with chronological edges, for explanation paths

    def add(self, note: Note) -> None:
        self._matrix = self._solver = self._nx = None  # synced lazily on the next query or explain

    def _sync(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """Append nodes and edges added to the base graph since the last sync."""
        g = self.store.graph
        for node in islice(g.g.nodes, len(self.node_index), None):
            self.node_index[node] = len(self.node_index)
        new_edges = [(a, b) for a, b, _ in g.edge_log[self._edges_seen:]]
        self._edges_seen = len(g.edge_log)
        if self.params.chronological:
            new_edges += g.chronological_pairs()[max(self._files_seen - 1, 0):]
            self._files_seen = len(g.file_order)
        if new_edges:
            ends = np.array([(self.node_index[a], self.node_index[b]) for a, b in new_edges], dtype=np.int64)
            self.rows = np.concatenate([self.rows, ends[:, 0], ends[:, 1]])
            self.cols = np.concatenate([self.cols, ends[:, 1], ends[:, 0]])
        n = len(self.node_index)
        A = sp.csr_matrix((np.ones(len(self.rows)), (self.rows, self.cols)), shape=(n, n))
        A.data[:] = 1.0  # unweighted: a repeated link is one edge (csr construction summed duplicates)
        out = np.diff(A.indptr).astype(np.float64)
        inv = np.divide(1.0, out, out=np.zeros(n), where=out > 0)
        P = A.multiply(inv[:, None]).T.tocsr()
        self._matrix = (P, out == 0)
        return self._matrix

    def seeds(self, text: str) -> tuple[dict[str, float], dict[int, float], list[str]]:
        """(concept -> mass, note index -> overlap, dropped tokens) before normalization."""
        kept, dropped = filter_tokens(query_tokens(text), self.terms, True, self.params.stopword_df,
                                      self.params.stopword_fallback)
        concepts: dict[str, float] = {}
        for token in kept:
            for path in self.matcher.match(token):
                concepts[path] = concepts.get(path, 0.0) + 1.0
        files = self.terms.tfidf_overlap(kept) if self.params.file_seeding else {}
        return concepts, files, dropped

    def transition(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """(column-stochastic P, dangling mask) of the current graph, synced on demand."""
        return self._matrix or self._sync()

    def scores_all(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(final x, teleport s) over all graph nodes."""
        P, dangling = self.transition()
        concepts, files, _ = self.seeds(text)
        s = np.zeros(P.shape[0])
        for path, mass in concepts.items():
            s[self.node_index[concept_node(path)]] += mass
        for idx, mass in files.items():
            s[self.node_index[file_node(self.store.notes[idx].note_id)]] += mass
        if s.sum() == 0 and self.params.iterations == 0:
            return s, s  # nothing to rank without diffusion
        x = personalized_pagerank(P, dangling, s, self.params.alpha, self.params.iterations,
                                  self.exact_solver() if self.params.iterations is None else None)
        return x, s

    def exact_solver(self):
        """LU factorization of (I - alpha P), computed once per graph state."""
        if self._solver is None:
            P, _ = self.transition()
            self._solver = spla.splu((sp.identity(P.shape[0], format="csc") - self.params.alpha * P).tocsc()).solve
        return self._solver

    def score(self, text: str, *, asked_on: datetime | None = None) -> dict[int, float]:
        """Every note's final PPR mass, zeros included: PPR ranks all files (ties: earlier note first),
        so without diffusion unseeded notes still follow the seeded ones, as in the paper's sweep."""
        if not self.store.notes:
            return {}
        x, _ = self.scores_all(text)
        return {note.index: float(x[self.node_index[file_node(note.note_id)]]) for note in self.store.notes}

    def _last_step(self, s_norm: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[float]]:
        """(x, the iterate the last step started from, each step's teleport factor alpha (dangling . x_t) + 1 - alpha)
        of `personalized_pagerank` from the normalized teleport `s_norm`; at the exact fixed point both iterates are x."""
        P, dangling = self.transition()
        a, steps = self.params.alpha, self.params.iterations
        if steps is None:
            y = self.exact_solver()(s_norm)
            x = y / y.sum()
            return x, x, [a * x[dangling].sum() + 1 - a]
        x, previous, factors = s_norm.copy(), s_norm, []
        for _ in range(steps):
            factors.append(a * x[dangling].sum() + 1 - a)
            previous, x = x, a * (P @ x) + factors[-1] * s_norm
        return x, previous, factors

    def seed_shares(self, s: np.ndarray, target: int, step=None) -> np.ndarray:
        """Each node's share of x[target] that its own teleport mass brought: the exact split of the note's PPR mass
        by seed, summing to 1 when x[target] > 0. Once each step's dangling mass is fixed the iteration is linear in
        the teleport, so one backward pass from the note gives every seed's part. `step`: `_last_step` of `s`'s
        teleport, when the caller has it."""
        P, _ = self.transition()
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
            back = self.params.alpha * (P.T @ back)
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
        P, _ = self.transition()
        names = list(self.node_index)
        s_norm = _teleport(s)
        x, previous, factors = step or self._last_step(s_norm)
        mass = x[target] or 1.0
        if not factors:
            return [], [], 1.0

        def into(v: int, at: np.ndarray) -> list[tuple[float, int]]:
            row = P.getrow(v)
            return sorted(((self.params.alpha * w * at[u], int(u)) for u, w in zip(row.indices, row.data)), reverse=True)

        inflow = into(target, previous)
        walk: dict[tuple[str, str], None] = {}
        for _, u in inflow[:width]:
            v, seen, chain = target, {target}, []
            while True:
                chain.append((names[u], names[v]))
                if s[u] > 0 or len(seen) > length or u in seen:
                    break
                seen.add(u)
                best = next((w for f, w in into(u, x) if w not in seen), None)
                if best is None:
                    break
                v, u = u, best
            walk.update(dict.fromkeys(reversed(chain)))  # read from where the mass came towards the note
        teleport = float(factors[-1] * s_norm[target] / mass)
        flows = [{"from": names[u], "flow": float(f), "share": float(f / mass)} for f, u in inflow[:width]]
        return [list(e) for e in walk], flows, teleport

    def breaks(self, dropped: list[str], target: str, seeded: bool, seed_tags=()) -> list[dict[str, str]]:
        """Where the diffusion towards `target` had no start, each {node, why}: a tag a dropped stopword matches
        within WALK_LENGTH edges of the note and no kept token seeds (`seed_tags`), the note itself when nothing
        was seeded."""
        near = nx.single_source_shortest_path_length(self._nx, target, cutoff=WALK_LENGTH) if dropped else {}
        out: dict[str, str] = {}
        for token in dropped:
            for path in self.matcher.match(token):
                if concept_node(path) in near and path not in seed_tags:
                    out.setdefault(concept_node(path), f"no walk starts here: query token '{token}' matches this tag "
                                   f"but was dropped as a stopword (in more than {self.params.stopword_df:.0%} of "
                                   f"the {len(self.store)} notes), so it gets no teleport mass")
        if not seeded:
            out.setdefault(target, "no seed: no tag matched and no note shares a query term, so "
                           + ("no PPR ran and every note scores 0" if self.params.iterations == 0 else
                              "PPR ran with a uniform teleport (plain PageRank centrality)"))
        return [{"node": n, "why": why} for n, why in out.items()]

    def evidence(self, text: str, note: Note, *, asked_on: datetime | None = None) -> Evidence:
        concepts, files, dropped = self.seeds(text)
        x, s = self.scores_all(text)
        total = s.sum() or 1.0
        target = file_node(note.note_id)
        if self._nx is None:  # one copy per graph state, not one per explained note
            self._nx = self.store.graph.to_networkx(chronological=self.params.chronological)
        g = self._nx
        at = self.node_index[target]
        step = self._last_step(_teleport(s))  # one pass for the seed split and the in-flows
        shares = self.seed_shares(s, at, step) if s.sum() > 0 else np.zeros(len(s))
        paths = []
        for path, mass in sorted(concepts.items(), key=lambda kv: -kv[1])[:20]:
            try:
                trail = nx.shortest_path(g, concept_node(path), target)
            except nx.NetworkXNoPath:
                continue
            paths.append({"seed": path, "seed_mass": round(mass / total, 5), "path": trail,
                          "share": round(float(shares[self.node_index[concept_node(path)]]), 5)})
        paths.sort(key=lambda p: -p["share"])
        walk, inflows, teleport = self.flow_walk(s, at, step=step) if x[at] > 0 else ([], [], 0.0)
        names = list(self.node_index)
        by_seed = {names[j]: float(shares[j]) for j in np.argsort(-shares, kind="stable")[:10] if shares[j] >= 0.0005}
        detail: dict[str, Any] = {
            "dropped_as_stopwords": dropped,
            "seed_tags": {p: round(m / total, 5) for p, m in concepts.items()},
            "file_seed_mass": round(files.get(note.index, 0.0) / total, 5),
            "teleport_total_on_files": round(sum(files.values()) / total, 5),
            "mass_by_seed": {name: round(share, 4) for name, share in by_seed.items()},
            "main_paths": paths[:3],
            "walk": walk,
            "mass_from": {**{f["from"]: round(f["share"], 4) for f in inflows}, "teleport": round(teleport, 4)},
            "walk_breaks": self.breaks(dropped, target, s.sum() > 0, concepts),
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
            ev.summary = f"PPR mass {x[at]:.3g}: " + _seed_split(shares, names, at)
        if came and x[at] > 0 and s.sum() > 0:
            ev.summary += f"; in the last step it arrived {came}"
        elif came and x[at] > 0:
            ev.summary = f"PPR mass {x[at]:.3g}: it arrived {came}"
        if x[at] <= 0:
            ev.missing = "no seed reaches the note: no matched tag connects to it and it shares no query term"
        return ev
