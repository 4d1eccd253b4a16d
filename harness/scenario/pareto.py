"""Pure geometry in the plane of the two parties' utilities (x: the first party's, y: the second's).

The feasible set that matters is a union of translates of one concave chain: the divisible resources' frontier
(`chain`, closed form) moved to each undominated point of the indivisible resources (`indivisible_front`, exact
enumeration with pruning). Its Pareto frontier (`frontier`) is computed exactly, as a list of straight `Piece`s:

- For divisible rival resources with values ``(a_i, b_i)`` (the fraction f to the first party, 1 - f to the second),
  the frontier of their Minkowski sum is the chain that starts with every resource at the second party (except those
  only the first values) and hands resources to the first party in decreasing order of ``a_i / b_i``.
- Two translates ``F_j(t) = y_j + D(t - x_j)`` of a concave chain ``D`` (flat to the left of its start, ending at its
  end) with ``x_j < x_k`` differ by a non-increasing function of t, so they cross at most once and each translate
  holds one interval of the upper envelope, in the order of ``x_j``: a stack sweep finds those intervals, and the
  crossing of two translates is solved exactly on the merged breakpoints. The pieces are the decreasing parts of the
  envelope, plus the isolated end points where the envelope drops (indivisible outcomes).

Optima over the frontier are exact too: on a straight piece the Nash product is a concave quadratic, the smaller
gain is the minimum of two linear functions, and the sum is linear.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

Point = tuple[float, float]
T = TypeVar("T")
EPS = 1e-12


@dataclass(frozen=True, slots=True)
class Piece:
    """A straight piece of the frontier (``start == end`` for an isolated point) on translate ``curve``."""

    start: Point
    end: Point
    curve: int

    def at(self, s: float) -> Point:
        return (self.start[0] + s * (self.end[0] - self.start[0]), self.start[1] + s * (self.end[1] - self.start[1]))


@dataclass(frozen=True, slots=True)
class Optimum:
    """The best point found: its value, where it is and on which piece."""

    value: float
    point: Point
    piece: int


def chain(items: Sequence[Point]) -> tuple[list[Point], list[int], list[int]]:
    """The closed-form frontier of divisible rival items ``(a_i, b_i) >= 0``.

    Returns the chain's vertices, the item moved to the first party along each segment (in order), and the items
    the first party holds from the start (those only it values).
    """
    start_a = [i for i, (a, b) in enumerate(items) if a > 0 and b <= 0]
    moving = sorted((i for i, (a, b) in enumerate(items) if a > 0 and b > 0), key=lambda i: -items[i][0] / items[i][1])
    x = sum(items[i][0] for i in start_a)
    y = sum(b for a, b in items if not (a > 0 and b <= 0))
    vertices = [(x, y)]
    for i in moving:
        x, y = x + items[i][0], y - items[i][1]
        vertices.append((x, y))
    return vertices, moving, start_a


def undominated(points: Sequence[tuple[Point, T]]) -> list[tuple[Point, T]]:
    """The points no other point weakly dominates (duplicates kept once), by increasing x (so decreasing y)."""
    ordered = sorted(points, key=lambda p: (-p[0][0], -p[0][1]))
    kept: list[tuple[Point, T]] = []
    best_y = -np.inf
    for item in ordered:
        if item[0][1] > best_y + EPS:
            kept.append(item)
            best_y = item[0][1]
    return kept[::-1]


def indivisible_front(items: Sequence[Point]) -> list[tuple[Point, tuple[int, ...]]]:
    """Undominated (sum of a over items held by the first party, sum of b over the second's), with the holders.

    Each item goes whole to party 0 or party 1 (giving an asset to neither is always weakly dominated); the set is
    built item by item and pruned after each, which keeps it small.
    """
    front: list[tuple[Point, tuple[int, ...]]] = [((0.0, 0.0), ())]
    for a, b in items:
        grown = [((x + a, y), (*h, 0)) for (x, y), h in front] + [((x, y + b), (*h, 1)) for (x, y), h in front]
        front = undominated(grown)
    return front


class _Translates:
    """The functions ``F_j(t) = y_j + D(t - x_j)``: flat left of the chain's start, minus infinity past its end."""

    def __init__(self, points: Sequence[Point], vertices: Sequence[Point]) -> None:
        self.px = np.array([p[0] for p in points], dtype=float)
        self.py = np.array([p[1] for p in points], dtype=float)
        self.cx = np.array([v[0] for v in vertices], dtype=float)
        self.cy = np.array([v[1] for v in vertices], dtype=float)

    def value(self, j: int, t: np.ndarray | float) -> np.ndarray:
        """F_j(t); a t within `EPS` past the chain's end still counts as its end (float rounding)."""
        u = np.asarray(t, dtype=float) - self.px[j]
        y = np.interp(np.minimum(u, self.cx[-1]), self.cx, self.cy) + self.py[j]
        return np.where(u > self.cx[-1] + EPS, -np.inf, y)

    def end(self, j: int) -> float:
        return float(self.px[j] + self.cx[-1])

    def crossing(self, j: int, k: int) -> float:
        """The first t at which translate k (further right) is at least as high as translate j (inf: never)."""
        ts = np.unique(np.concatenate([self.px[j] + self.cx, self.px[k] + self.cx]))
        with np.errstate(invalid="ignore"):
            g = self.value(j, ts) - self.value(k, ts)
        below = np.nonzero(~(g > EPS))[0]
        if not len(below):  # k is never higher: its point lies within rounding of j's and below it
            return np.inf
        i = int(below[0])
        if i == 0:
            return float(ts[0])
        t0, t1, g0, g1 = float(ts[i - 1]), float(ts[i]), float(g[i - 1]), float(g[i])
        if not np.isfinite(g1):  # translate j ended at t0 while still higher: the envelope drops there
            return t0
        return t0 + (t1 - t0) * g0 / (g0 - g1)


def frontier(points: Sequence[Point], vertices: Sequence[Point]) -> list[Piece]:
    """The exact Pareto frontier of the union of the chain ``vertices`` translated to each of ``points``.

    ``points`` must be undominated and sorted by increasing x (as `indivisible_front` returns them).
    """
    tr = _Translates(points, vertices)
    stack: list[tuple[int, float]] = []
    for k in range(len(points)):
        start = -np.inf
        while stack:
            j, s = stack[-1]
            c = tr.crossing(j, k)
            if c <= s + EPS:
                stack.pop()
                continue
            start = c
            break
        if start < np.inf:
            stack.append((k, start))
    pieces: list[Piece] = []
    for n, (j, a) in enumerate(stack):
        b = stack[n + 1][1] if n + 1 < len(stack) else tr.end(j)
        nxt = stack[n + 1][0] if n + 1 < len(stack) else None
        pieces += _interval_pieces(tr, j, a, b, nxt)
    return pieces


def _interval_pieces(tr: _Translates, j: int, a: float, b: float, nxt: int | None) -> list[Piece]:
    """The decreasing pieces of translate j on [a, b], and its end point when the envelope drops after it."""
    out = []
    for k in range(len(tr.cx) - 1):
        lo, hi = max(a, tr.px[j] + tr.cx[k]), min(b, tr.px[j] + tr.cx[k + 1])
        if hi - lo > EPS:
            out.append(Piece((float(lo), float(tr.value(j, lo))), (float(hi), float(tr.value(j, hi))), j))
    if abs(b - tr.end(j)) <= EPS:
        y = float(tr.value(j, b))
        after = float(tr.value(nxt, b)) if nxt is not None else -np.inf
        if y > after + EPS and not out:
            out.append(Piece((float(b), y), (float(b), y), j))
    return out


def _nash_on(piece: Piece, d: Point) -> tuple[float, float] | None:
    """(product, s) of the best Nash product on a piece where both gain strictly, or None.

    Along a decreasing piece the product of the gains is a concave quadratic in s, zero where either gain is and
    largest halfway between those two roots; clamped to the piece, that point is the piece's best, and when a gain
    is not positive there, no point of the piece has both positive."""
    (x0, y0), (x1, y1) = piece.start, piece.end
    dx, dy, alpha, beta = x1 - x0, y1 - y0, x0 - d[0], y0 - d[1]
    s = min(max(-(dx * beta + dy * alpha) / (2 * dx * dy), 0.0), 1.0) if dx * dy != 0 else 0.0
    gain = (alpha + s * dx, beta + s * dy)
    if gain[0] <= EPS or gain[1] <= EPS:
        return None
    return gain[0] * gain[1], s


def nash(pieces: Sequence[Piece], d: Point) -> Optimum | None:
    """The frontier point maximising ``(u1 - d1)(u2 - d2)`` among those where both gain strictly; None if none."""
    best: Optimum | None = None
    for n, piece in enumerate(pieces):
        found = _nash_on(piece, d)
        if found and (best is None or found[0] > best.value + EPS):
            best = Optimum(found[0], piece.at(found[1]), n)
    return best


def _min_gain_on(piece: Piece, d: Point) -> tuple[float, float]:
    (x0, y0), (x1, y1) = piece.start, piece.end
    dx, dy, alpha, beta = x1 - x0, y1 - y0, x0 - d[0], y0 - d[1]
    candidates = [0.0, 1.0]
    if abs(dx - dy) > EPS:
        candidates.append(min(max((beta - alpha) / (dx - dy), 0.0), 1.0))
    return max((min(alpha + s * dx, beta + s * dy), s) for s in candidates)


def egalitarian(pieces: Sequence[Piece], d: Point) -> Optimum:
    """The frontier point maximising the smaller gain ``min(u1 - d1, u2 - d2)`` (ties: the first along the frontier)."""
    best: Optimum | None = None
    for n, piece in enumerate(pieces):
        value, s = _min_gain_on(piece, d)
        if best is None or value > best.value + EPS:
            best = Optimum(value, piece.at(s), n)
    assert best is not None
    return best


def utilitarian(pieces: Sequence[Piece], d: Point) -> Optimum:
    """The frontier point maximising ``u1 + u2``; among ties, the one with the largest smaller gain over ``d``."""
    top = max(e[0] + e[1] for piece in pieces for e in (piece.start, piece.end))
    tied = []
    for piece in pieces:
        ends = [e for e in (piece.start, piece.end) if e[0] + e[1] >= top - 1e-9]
        if len(ends) == 2:
            tied.append(piece)
        elif ends:
            tied.append(Piece(ends[0], ends[0], piece.curve))
    best = egalitarian(tied, d)
    return Optimum(top, best.point, _piece_index(pieces, best.point))


def _piece_index(pieces: Sequence[Piece], point: Point) -> int:
    return min(range(len(pieces)), key=lambda n: point_to_piece(point, pieces[n]))


def point_to_piece(p: Point, piece: Piece) -> float:
    """Euclidean distance from a point to a piece."""
    (x0, y0), (x1, y1) = piece.start, piece.end
    dx, dy = x1 - x0, y1 - y0
    length2 = dx * dx + dy * dy
    s = 0.0 if length2 == 0 else min(max(((p[0] - x0) * dx + (p[1] - y0) * dy) / length2, 0.0), 1.0)
    return float(np.hypot(p[0] - (x0 + s * dx), p[1] - (y0 + s * dy)))


def distance(pieces: Sequence[Piece], p: Point) -> float:
    """Euclidean distance from a point to the frontier."""
    return min(point_to_piece(p, piece) for piece in pieces)


def polylines(pieces: Sequence[Piece]) -> list[list[Point]]:
    """The frontier as connected polylines (a lone point is a polyline of one vertex), collinear vertices removed."""
    lines: list[list[Point]] = []
    for piece in pieces:
        if lines and _close(lines[-1][-1], piece.start):
            lines[-1].append(piece.end)
        else:
            lines.append([piece.start] if _close(piece.start, piece.end) else [piece.start, piece.end])
    return [_drop_collinear(line) for line in lines]


def _close(p: Point, q: Point, tol: float = 1e-9) -> bool:
    return abs(p[0] - q[0]) <= tol and abs(p[1] - q[1]) <= tol


def _drop_collinear(line: list[Point]) -> list[Point]:
    out = [line[0]]
    for i in range(1, len(line)):
        if _close(line[i], out[-1]):
            continue
        if i + 1 < len(line) and len(out) >= 1:
            (ax, ay), (bx, by), (cx, cy) = out[-1], line[i], line[i + 1]
            if abs((bx - ax) * (cy - ay) - (by - ay) * (cx - ax)) <= 1e-12:
                continue
        out.append(line[i])
    return out
