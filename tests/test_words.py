"""Words in the repository: no comment or doc points at the issue tracker, which is not in the repository.

A reference like "(issue 13)" tells a reader nothing they can open; the text says what it is about instead.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("robot", "firmware/cube_robot", "firmware/harness", "tests", "bench", "scripts", "docs")
SUFFIXES = {".py", ".cpp", ".h", ".c", ".ino", ".sh", ".md", ".yaml"}
TRACKER_REFERENCE = re.compile(r"\bissues? ?#?\d+", re.IGNORECASE)


def _text_files():
    yield from (ROOT / name for name in ("README.md", "config.yaml") if (ROOT / name).exists())
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file():
                yield path


def test_no_comment_or_doc_cites_a_tracker_issue_number():
    this = Path(__file__).resolve()
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
             for path in _text_files() if path.resolve() != this
             for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
             if TRACKER_REFERENCE.search(line)]
    assert not found, "say what it is about instead of the tracker's number:\n" + "\n".join(found)
