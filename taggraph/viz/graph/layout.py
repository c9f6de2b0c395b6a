"""Where the graph page puts its nodes: the whole drawing by a seeded spring layout, the subgraph that explains a miss
in columns read left to right (question to notes), spaced by the labels' measured widths so none overlap and the
whole fits a 1280 px window.

Physics is off: positions come from ``spring_layout(seed=0)``, so the same store always draws the same picture and
large graphs open instantly (``kamada_kawai_layout`` took ~2 s for 116 nodes here, spring ~0.3 s; 400 nodes ~0.5 s)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import networkx as nx


def spring_positions(g: nx.Graph) -> dict[str, tuple[float, float]]:
    """Deterministic positions in pixels, spread by the graph's size, wider than tall (screens are).

    Components are tied to a hidden hub so they do not drift apart; nodes without
    any edge (untagged notes) go in rows under the drawing.
    """
    lone = sorted(n for n in g if g.degree(n) == 0)
    linked = nx.Graph()  # sorted: the layout depends on node order, the base graph's order on hash seeds
    linked.add_nodes_from(sorted(n for n in g if g.degree(n)))
    linked.add_edges_from(sorted(tuple(sorted(e)) for e in g.edges))
    hub = "\0hub"
    for comp in list(nx.connected_components(linked)):
        linked.add_edge(hub, min(comp, key=lambda n: (-linked.degree(n), n)))  # best-connected, ties by id
    pos = nx.spring_layout(linked, seed=0) if len(linked) else {}
    pos.pop(hub, None)
    scale = 60 * math.sqrt(max(len(g), 1))
    out = {n: (float(x) * scale * 1.6, float(y) * scale) for n, (x, y) in pos.items()}
    bottom = max((y for _, y in out.values()), default=0.0) + 80
    per_row = max(int(math.sqrt(len(lone))) * 2, 8)
    for i, n in enumerate(lone):
        out[n] = (scale * 1.6 * (2 * (i % per_row) / per_row - 1), bottom + 60 * (i // per_row))
    return out


# Advance widths in ems of vis's label font (arial; Liberation Sans here, the same metrics) by character class:
# a digit-heavy note id is a third wider than a name of the same length. Other characters count as 0.556 em,
# characters outside Latin-1 (★, ✕, CJK) as 1 em.
EM_WIDTHS = {**dict.fromkeys("ijl'", 0.222), **dict.fromkeys("ftI/:;.,!| ·", 0.278), **dict.fromkeys("r()-", 0.333),
             **dict.fromkeys("ckszvxyJ", 0.5), **dict.fromkeys("mw", 0.833), **dict.fromkeys("MW", 0.9)}
LABEL_PX = 14  # the page's label font size at scale 1


def label_width(label: str) -> float:
    """Pixels a label takes at the page's font (its longest line, `EM_WIDTHS`): 0.94-1.03 times Chromium's
    width, median 1.00, over 322 labels of demo and LongMemEval pages."""
    def line(text: str) -> float:
        return sum(EM_WIDTHS.get(ch, 0.667 if ch.isupper() else 0.556 if ord(ch) < 256 else 1.0) for ch in text)
    return LABEL_PX * max(map(line, label.split("\n")))


CANVAS = (1015, 530)  # the drawing's room in a 1280 x 800 window (1280 x 657 of page) beside the side panel
FRAME = (599, 476)  # its room in notebook 03's JupyterLab frame (860 x 720: the file browser open in a 1280 window)
LEGIBLE_PX = 11  # the smallest label drawn at 100% zoom: a drawing that would shrink labels below it shows fewer
LAYOUT_TRIES = 4096  # splits of the columns tried one by one (each well under 1 ms); more are searched greedily
MAX_SUBCOLUMNS = 6  # a tall column (40 notes on LongMemEval pages) zigzags over at most this many sub-columns
COLUMN_GAP, SUB_GAP = 30, 14  # pixels between columns, and between the sub-columns of a zigzag column
LINE_PX, ROW_GAP = 14, 14  # a label line's height at the 14 px font (measured in Chromium), the room under a label
RING_GROWTH = 6  # pixels a ringed note's size grows by (the page's highlight())


def columns_layout(g: nx.Graph, kinds: Mapping[str, str], matched: set[str], labels: Mapping[str, str],
                   sizes: Mapping[str, int], canvas: tuple[int, int] = CANVAS) -> dict[str, tuple[float, float]]:
    """`columns_fit`'s positions."""
    return columns_fit(g, kinds, matched, labels, sizes, canvas)[0]


def columns_fit(g: nx.Graph, kinds: Mapping[str, str], matched: set[str], labels: Mapping[str, str],
                sizes: Mapping[str, int], canvas: tuple[int, int] = CANVAS) -> tuple[dict[str, tuple[float, float]], float]:
    """Positions that read left to right, question to notes: the matched concepts, the concepts
    further ontology hops away, topics, then notes; within a column nodes sit under one another in the
    mean order of their neighbours on the left (fewer crossings), spaced by their sizes and widest
    `labels` (drawn under the node) so that no two overlap. A column too tall for `CANVAS` zigzags over
    up to MAX_SUBCOLUMNS sub-columns, whichever split of the columns fits the whole largest in `canvas` (tried one
    by one up to LAYOUT_TRIES splits, else grown greedily); the positions and the scale vis-network fits them at
    (``network.fit``: 1.1 times the extent, at most 1). A node labelled "" takes its shape's room."""
    concepts = [n for n in g if kinds[n] in ("tag", "ontology")]
    onto = g.subgraph(concepts)
    sources = [c for c in matched if c in onto]
    hops = nx.multi_source_dijkstra_path_length(onto, sources) if sources else {}
    deepest = max(hops.values(), default=0)
    column = {n: int(hops.get(n, 1)) if n in concepts else int(deepest) + (2 if kinds[n] == "file" else 1) for n in g}
    columns = [sorted(n for n in g if column[n] == c) for c in range(max(column.values(), default=-1) + 1)]
    columns = [c for c in columns if c]
    if not columns:
        return {}, 1.0
    row: dict[str, int] = {}
    for members in columns:
        placed = {n: [row[m] for m in g[n] if m in row] for n in members}
        members.sort(key=lambda n: (sum(placed[n]) / len(placed[n]) if placed[n] else math.inf, labels[n]))
        row.update((n, i) for i, n in enumerate(members))
    # a node's slot: its shape (a note grows by RING_GROWTH when ringed), its label's lines, then ROW_GAP
    # an unlabelled node ("") takes its shape's room and half the gap
    height = {n: 2 * (sizes[n] + RING_GROWTH * (kinds[n] == "file")) + (
        LINE_PX * (1 + labels[n].count("\n")) + ROW_GAP if labels[n] else ROW_GAP / 2) for n in g}
    width = {n: max(label_width(labels[n]), 2 * (sizes[n] + RING_GROWTH * (kinds[n] == "file"))) for n in g}

    def place(splits: list[int]) -> tuple[dict[str, tuple[float, float]], float]:
        """Positions with column c over splits[c] sub-columns, and the scale at which they fit CANVAS."""
        pos, left, top, bottom = {}, 0.0, 0.0, 0.0
        for members, m in zip(columns, splits):
            hs = [height[n] for n in members]
            # row i and row i + m share a sub-column: every step between them is at least the taller over m
            steps = [max(hs[max(i - m + 1, 0):i + m + 1]) / m for i in range(len(hs))]
            sub = [max(width[n] for n in members[j::m]) for j in range(m)]  # each sub-column as wide as its widest
            xs = [left + sum(sub[:j]) + j * SUB_GAP + sub[j] / 2 for j in range(m)]
            y = -sum(steps) / 2
            for i, n in enumerate(members):
                pos[n] = (xs[i % m], y)
                top, bottom = min(top, y - hs[i] / 2), max(bottom, y + hs[i] / 2)
                y += steps[i]
            left += sum(sub) + (m - 1) * SUB_GAP + COLUMN_GAP
        return pos, min(canvas[0] / (1.1 * (left - COLUMN_GAP)), canvas[1] / (1.1 * (bottom - top)), 1.0)

    choices = [range(1, min(MAX_SUBCOLUMNS, (len(members) + 1) // 2) + 1) for members in columns]
    if math.prod(map(len, choices)) <= LAYOUT_TRIES:  # every split, the best fit
        return max((place(list(splits)) for splits in itertools.product(*choices)), key=lambda r: r[1])
    splits = [1] * len(columns)
    best = place(splits)
    while True:  # greedy: one column one sub-column more at a time
        tries = [splits[:c] + [splits[c] + 1] + splits[c + 1:] for c in range(len(columns))
                 if splits[c] + 1 in choices[c]]
        found = max((place(t) + (t,) for t in tries), key=lambda r: r[1], default=None)
        if found is None or found[1] <= best[1] + 0.01:
            return best
        best, splits = found[:2], found[2]


def label_tiers(g: nx.Graph, kinds: Mapping[str, str], matched: set[str], labels: Mapping[str, str],
                sizes: Mapping[str, int], order: list[str], least: int) -> list[tuple[int, dict[str, tuple[float, float]]]]:
    """Layouts of `g` (`columns_fit`) with fewer labels each, as (how many of `order` keep their label, positions):
    every label, then two thirds as many each time down to `least`, the first of `order` first; each fitted to `CANVAS`
    until one fits it with labels of LEGIBLE_PX or more, the next ones to `FRAME`, until one fits that. The page
    shows the first whose labels its own frame draws legibly."""
    need, tiers, count = LEGIBLE_PX / LABEL_PX, [], len(order)
    for canvas in (CANVAS, FRAME):
        while True:
            pos, scale = columns_fit(g, kinds, matched, {n: labels[n] if i < count else "" for i, n in enumerate(order)},
                                     sizes, canvas)
            tiers.append((count, pos))
            if scale >= need or count <= least:
                break
            count = max(least, count * 2 // 3)
    return tiers
