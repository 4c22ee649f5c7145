"""3x3x3 two-phase solver.

Modules: cube3 (facelets, cubies, moves, the 16 U-D symmetries, validation with one named
error per problem), coords (coordinates, move and symmetry tables), tables (numpy-built,
symmetry-reduced phase-1 table and phase-2 tables, checksummed manifest in tables/3x3x3/,
built only by `cube-robot tables build --puzzle 3x3x3`), search (the two-phase driver: six
views of the cube taking turns), phase1 / phase2 (the two phases, vectorised with numpy),
api (this public API), commands (CLI).

Public API (stable; the robot3 planner builds on it)::

    from robot import solver3
    s = solver3.solve("UUUUUUUUURRR...", metric="htm", max_length=None, time_limit=None)
    s.moves      # "R U2 F' ..." (standard notation, space-separated; "" if solved)
    s.length     # length in `metric`;  s.htm: face moves;  s.solve_ms;  s.metric
    for s in solver3.solutions(facelets, metric="axial", time_limit=1.0):
        ...      # successively better Solutions (strictly decreasing s.length)

    solutions(facelets=None, *, scramble=None, metric="htm", max_length=None,
              time_limit=None, tables_dir=None, search=None) -> Iterator[Solution]
    solve(...same...) -> Solution

* facelets: 54 symbols in Kociemba's layout (faces U R F D L B, each row-major on the
  standard net; any 6 symbols, the centres say which is which), or scramble="R U F' ...".
  Invalid cubes raise a cube3.Cube3Error subclass naming the facelets and pieces.
* metric: "htm" (any face turn is 1), "qtm" (a half turn is 2), "axial" (turns of two
  opposite faces in a row, e.g. "U D'" or "R2 L", count as 1).  The search runs in HTM;
  qtm/axial costs rate its solutions, so those are good, not optimal, in their metric.
  "robot" raises MetricNotReady (it belongs to the four-arm robot3 planner, not done yet).
* solutions() is lazy: each Solution is yielded as soon as it is found and only if it is
  shorter (in `metric`) than every one before; stop iterating whenever you like.  It ends
  when time_limit seconds have passed since the call (but never before the first
  solution, unless max_length was given: then time_limit is a hard limit), or when no
  shorter solution exists within the search (phase-1 lengths up to the bound).
  Every solution has at most 20 face moves (and at most max_length in `metric`).
* solve() returns the first solution (no time_limit) or the best one found within
  time_limit; raises search.Unsolvable if there is none within max_length / time_limit.
* The tables are loaded once per process (load_search); they raise tables.NotBuilt when
  `cube-robot tables build --puzzle 3x3x3` has not been run.  Loading is not counted in
  solve_ms.
"""

from .api import METRICS, MetricNotReady, Solution, load_search, solutions, solve
from .cube3 import Cube3Error
from .search import Unsolvable
from .tables import NotBuilt

__all__ = ["solve", "solutions", "Solution", "METRICS", "MetricNotReady", "Unsolvable", "NotBuilt",
           "Cube3Error", "load_search"]
