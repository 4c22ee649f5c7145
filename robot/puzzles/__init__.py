"""Puzzles as data: a twisty puzzle is a YAML file (robot/puzzles/data/), one engine solves them all.

  definition / source  the file format and its checks (errors name file, line and key)
  geometry             faces, places and turns -> permutations and orientation changes
  puzzle               Puzzle: flat numpy states, moves, rotations, facelet strings
  coords               coordinate rankers (permutation, combination, orientation)
  tables               move tables, BFS / bucketed-Dijkstra distance tables
  search               IDA* with pluggable heuristics, bidirectional BFS oracle

robot/cube.py stays the fast 2x2x2 path; this engine is checked against it.
"""

from .puzzle import Puzzle, load_puzzle, shipped_puzzles
from .source import PuzzleFileError

__all__ = ["Puzzle", "PuzzleFileError", "load_puzzle", "shipped_puzzles"]
