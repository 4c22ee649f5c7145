"""3x3x3 support (issue 15), first slice.

Done and tested: cube3 (facelets, cubies, moves, the 16 U-D symmetries, validation with one
named error per problem), coords (coordinates and move/symmetry tables), tables (numpy-built,
symmetry-reduced phase-1 table and phase-2 tables, checksummed manifest in tables/3x3x3/).

Not done: search.py is an unfinished vectorised two-phase search (NOT wired into the CLI; its
first benchmark run exhausted memory); `cube-robot solve --puzzle 3x3x3` does not exist yet.
"""
