"""Where solver tables are kept: files with a manifest of their checksums, written so that nothing
but our own files is ever replaced.

The 2x2x2 tables (robot/solver/tables.py) and the 3x3x3 ones (robot/solver3/tables.py) are stored
alike: a table whose checksum or size does not match, built by another format version, or for
another robot profile, is rebuilt with a message and never used; a valid table is swapped for its
rebuilt one only once that is verified; a file at a table's name that the manifest does not list is
someone else's and is refused.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import secrets
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from .config import project_path
from .config_types import Config
from .progress import ProgressBar

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
class TableError(RuntimeError):
    """Tables cannot be loaded or built."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class TableStore:
    """Reads and writes table files with their manifest entries."""

    def __init__(self, directory: Path, log=None, show_progress: bool | None = None, explicit: bool = False):
        """explicit: a build asked for (`tables build`), not one made on the way to a first use."""
        self.directory = Path(directory)
        self.log = log or (lambda text: print(f"tables: {text}", file=sys.stderr))
        self.show_progress = show_progress
        self.explicit = explicit

    @property
    def manifest_path(self) -> Path:
        return self.directory / MANIFEST

    def manifest(self) -> dict:
        """The manifest; the files another format version listed stay listed (they are ours) with
        only that version as their entry, so they are rebuilt, never used."""
        try:
            data = json.loads(self.manifest_path.read_text())
        except (OSError, ValueError):
            return {"format_version": FORMAT_VERSION, "files": {}}
        if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
            return {"format_version": FORMAT_VERSION, "files": {}}
        if data.get("format_version") != FORMAT_VERSION:
            old = data.get("format_version")
            return {"format_version": FORMAT_VERSION, "files": {name: {"format_version": old} for name in data["files"]}}
        return data

    def check_ours(self, names) -> None:
        """Refuse (TableError naming it) a file at a table's name that the manifest does not list:
        someone else's, never overwritten."""
        listed = self.manifest()["files"]
        for name in names:
            path = self.directory / name
            if name not in listed and (path.exists() or path.is_symlink()):
                raise TableError(
                    f"{path} was not written by cube-robot (the tables manifest {self.manifest_path} does not "
                    "list it), so it is not overwritten: move it away, or set tables.dir in config.yaml to "
                    "another folder; nothing was written")

    def problem(self, name: str, profile: dict | None) -> str | None:
        """Why a stored table cannot be used (None if it can)."""
        entry = self.manifest()["files"].get(name)
        path = self.directory / name
        if entry is None or not path.exists():
            return "not built yet"
        if "sha256" not in entry:
            return f"{name} was built by table format {entry.get('format_version')}, this program's is {FORMAT_VERSION}"
        if path.stat().st_size != entry.get("bytes"):
            return f"{name} is truncated or was changed ({path.stat().st_size} bytes, manifest says {entry.get('bytes')})"
        if profile is not None and entry.get("profile") != profile:
            return f"{name} was built for robot profile {_profile_changes(entry.get('profile'), profile)}"
        if _sha256(path) != entry.get("sha256"):
            return f"{name} is corrupt (SHA-256 does not match the manifest)"
        return None

    def load_or_build(self, name: str, profile: dict | None, builder, what: str, total: int,
                      force: bool = False):
        """The table, loaded when valid, else built into a temporary file, verified, then swapped in.

        A valid table is never removed before its replacement is ready (Ctrl-C during a rebuild leaves
        it as it was), and only files named in the manifest or our own temporary files are written.
        """
        problem = self.problem(name, profile)
        path = self.directory / name
        if problem is None and not force:
            return _read(path)
        self.check_ours([name])
        self.check_writable(what)
        if problem is None:
            self.log(f"rebuilding the {what} (--force; the current one stays until the new one is verified)")
        elif problem != "not built yet":
            self.log(f"{problem}: rebuilding")
        else:
            first_use = "" if self.explicit else "first use; "
            self.log(f"building the {what} ({first_use}saved to {self.directory})")
        started = time.monotonic()
        with ProgressBar(total, f"  {what}", enabled=self.show_progress) as bar:
            value = builder(bar)
        self._save(name, value, what, profile, started)
        return value

    def _save(self, name: str, value, what: str, profile: dict | None, started: float) -> None:
        """Write the table and the manifest that lists it under new temporary names, then swap both
        in: a failure (a full disk) leaves the old table and manifest as they were."""
        temporaries = []
        try:
            tmp = _write_new_file(self.directory, name, lambda f: _write_value(f, value))
            temporaries.append(tmp)
            _verify_written(tmp, value)
            entry = {"sha256": _sha256(tmp), "bytes": tmp.stat().st_size,
                     "built_seconds": round(time.monotonic() - started, 2)}
            if profile is not None:
                entry["profile"] = profile
            data = self.manifest()
            data["files"][name] = entry
            text = json.dumps(data, indent=2, sort_keys=True).encode()
            temporaries.append(_write_new_file(self.directory, MANIFEST, lambda f: f.write(text)))
            os.replace(temporaries[0], self.directory / name)
            os.replace(temporaries[1], self.manifest_path)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise TableError(self._no_space(what, _bytes_needed(value))) from None
            raise
        finally:
            for tmp in temporaries:
                tmp.unlink(missing_ok=True)  # ours: a build cut short leaves nothing behind

    def _no_space(self, what: str, needed: int) -> str:
        try:
            free = f"{shutil.disk_usage(self.directory).free / 2**20:.1f} MiB free"
        except OSError:
            free = "free space unknown"
        return (f"no space left on the disk of the tables folder {self.directory}: the {what} needs about "
                f"{needed / 2**20:.1f} MiB there ({free}); free some space, or set tables.dir in config.yaml "
                "to a folder on another disk; the tables already there are unchanged")

    def check_writable(self, what: str = "tables") -> None:
        """One clear line when the tables folder cannot be written (the fix included)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _write_new_file(self.directory, "write-test", lambda f: None).unlink()
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise TableError(self._no_space(what, 0)) from None
            raise TableError(
                f"the tables folder {self.directory} cannot be written ({exc.strerror or exc}), so the {what} "
                f"cannot be built: make it writable (chmod u+w {self.directory}) or set tables.dir in "
                "config.yaml to a writable folder, then run 'cube-robot tables build'") from None


def _write_new_file(directory: Path, name: str, write) -> Path:
    """A new file '.NAME.RANDOM.tmp' in directory, created exclusively (so never someone else's
    file), filled by write(binary file); its path.  Removed again if writing fails."""
    for _ in range(100):
        path = directory / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 collisions of 48 random bits
        raise TableError(f"no unused temporary name for {name} in {directory}")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path


def _write_value(file, value) -> None:
    if isinstance(value, dict):
        np.savez(file, **value)
    else:
        np.save(file, value)


def _bytes_needed(value) -> int:
    arrays = value.values() if isinstance(value, dict) else [value]
    return sum(a.nbytes + 1024 for a in arrays)  # the data and a generous header per array


def _read(path: Path, archive: bool | None = None):
    """A table file: .npz -> dict of arrays, .npy -> array (archive says which for temporary names)."""
    if path.name.endswith(".npz") if archive is None else archive:
        with np.load(path) as data:
            return {k: data[k] for k in data.files}
    return np.load(path)


def _verify_written(path: Path, value) -> None:
    """The file on disk reads back as what was built (else the old table stays)."""
    stored = _read(path, archive=isinstance(value, dict))
    expected = value if isinstance(value, dict) else {"": value}
    got = stored if isinstance(stored, dict) else {"": stored}
    if expected.keys() != got.keys() or any(not np.array_equal(expected[k], got[k]) for k in expected):
        raise TableError(f"{path} does not read back as the table just built (disk full or failing?)")


def tables_dir(config: Config) -> Path:
    return project_path(config.tables.dir)


def _profile_changes(built: dict | None, now: dict) -> str:
    """The settings that differ, e.g. "quarter_turn_ms 80, config now says 81"."""
    built = built or {}
    changed = [_change(key, built.get(key), now.get(key))
               for key in sorted(set(built) | set(now)) if built.get(key) != now.get(key)]
    return "; ".join(changed) or f"{built}, config now says {now}"


def _change(key: str, built, now) -> str:
    """One setting's change; a table of costs (a mapping) names only the entries that changed."""
    if isinstance(built, dict) and isinstance(now, dict):
        entries = sorted(k for k in set(built) | set(now) if built.get(k) != now.get(k))
        return f"{key} changed for {', '.join(entries)}"
    return f"{key} {built}, config now says {now}"
