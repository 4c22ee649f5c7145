"""doctor's `folders` rows: where this copy keeps each of its files (robot/paths.py's rule)."""

from __future__ import annotations

from pathlib import Path

from .. import paths
from ..config import project_path
from ..checks import INFO, Result
from ..config_types import Config


def check_folders(config: Config, args) -> list[Result]:
    def row(what: str, path: Path, detail: str = "") -> Result:
        state = "exists" if path.exists() else "not made yet (made on first use)"
        return Result(f"{what} {path}", INFO, f"{state}{'; ' + detail if detail else ''}")

    assert config.path is not None  # the doctor checks a loaded config file
    scan = config.scan
    calibration = {project_path(scan.colours_file).parent, project_path(scan.regions_file).parent}
    runs = {project_path(scan.images_dir).parent, project_path(scan.preview_dir).parent}
    rows = [Result(f"data folder {paths.data_root()}", INFO, f"{paths.data_root_rule()}; relative paths "
                   "in config.yaml are relative to it"),
            row("config", Path(config.path).resolve(), "" if args.config else "the default config file")]
    rows.append(row("tables", project_path(config.tables.dir), "tables.dir"))
    rows.append(row("data", project_path(config.run.data_dir), "run.data_dir (solve log)"))
    rows += [row("runs", folder, "scan.images_dir, scan.preview_dir") for folder in sorted(runs)]
    rows += [row("calibration", folder, "scan.colours_file, scan.regions_file") for folder in sorted(calibration)]
    rows.append(row("firmware", paths.FIRMWARE_DIR, f"sources; built into {paths.firmware_build_dir()}"))
    return rows
