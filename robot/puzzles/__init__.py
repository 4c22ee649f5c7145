"""Puzzles as data: a twisty puzzle is a YAML file (robot/puzzles/data/), one engine solves them all.

  definition / source  the file format and its checks (errors name file, line and key)
  geometry             faces, places and turns -> permutations and orientation changes
  puzzle               Puzzle: flat numpy states, moves, rotations, facelet strings
  coords               coordinate rankers (permutation, combination, orientation): the solvers'
                       (robot/solver, robot/solver3) as well
  tables               move tables, BFS / bucketed-Dijkstra distance tables
  search               IDA* with pluggable heuristics, bidirectional BFS oracle

robot/cube.py stays the 2x2x2 cube model; this engine is checked against it and builds the 2x2x2
solver's move tables.
"""

from .puzzle import Puzzle, load_puzzle, shipped_puzzles
from .source import PuzzleFileError

__all__ = ["Puzzle", "PuzzleFileError", "load_puzzle", "shipped_puzzles"]
