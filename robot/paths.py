"""Where cube-robot keeps its files: the one rule, for a checkout and for an installed copy.

A checkout (the package's parent folder holds pyproject.toml and firmware/cube_robot, as
after `git clone` and `pip install -e .`) keeps everything where it is today: config.yaml,
tables/, data/, runs/ and calibration/ at the checkout's root, the firmware in firmware/.

An installed copy (`pip install .`, a wheel, pipx) cannot write into site-packages, so
its files live in one per-user data folder: $CUBE_ROBOT_HOME if set, else
$XDG_DATA_HOME/cube-robot, else ~/.local/share/cube-robot.  The folder and its
config.yaml (a copy of the packaged default, never overwritten) are made on first use;
tables/, data/, runs/ and calibration/ are made inside it by whatever writes them.  The
firmware sources travel in the package (robot/_bundled/firmware, put there by setup.py)
and are built into the data folder's firmware-build/, never into site-packages.

Relative paths in config.yaml (tables.dir, run.data_dir, scan.*) are relative to
`data_root()` in both cases.  This module imports nothing from `robot`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
HOME_ENV = "CUBE_ROBOT_HOME"
CONFIG_NAME = "config.yaml"
BUNDLED_DIR = PACKAGE_DIR / "_bundled"  # what setup.py copies into a built package


def _checkout_root() -> Path | None:
    root = PACKAGE_DIR.parent
    if (root / "pyproject.toml").is_file() and (root / "firmware" / "cube_robot").is_dir():
        return root
    return None


CHECKOUT_ROOT = _checkout_root()
INSTALLED = CHECKOUT_ROOT is None


def data_root() -> Path:
    """The folder config.yaml, tables/, data/, runs/ and calibration/ live in."""
    if CHECKOUT_ROOT is not None:
        return CHECKOUT_ROOT
    if os.environ.get(HOME_ENV):
        return Path(os.environ[HOME_ENV]).expanduser().resolve()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return (base / "cube-robot").resolve()


def data_root_rule() -> str:
    """How data_root() was chosen, for doctor."""
    if CHECKOUT_ROOT is not None:
        return "a checkout: its root"
    if os.environ.get(HOME_ENV):
        return f"an installed copy: ${HOME_ENV}"
    if os.environ.get("XDG_DATA_HOME"):
        return "an installed copy: $XDG_DATA_HOME/cube-robot"
    return "an installed copy: ~/.local/share/cube-robot (set $CUBE_ROBOT_HOME to move it)"


# The firmware sources: the checkout's, or the copy carried in the package.
FIRMWARE_DIR = CHECKOUT_ROOT / "firmware" if CHECKOUT_ROOT is not None else BUNDLED_DIR / "firmware"
FIRMWARE_SRC = FIRMWARE_DIR / "cube_robot"
PACKAGED_CONFIG = CHECKOUT_ROOT / CONFIG_NAME if CHECKOUT_ROOT is not None else BUNDLED_DIR / CONFIG_NAME


def firmware_build_dir() -> Path:
    """Where make puts the firmware's .elf/.hex and the simavr harness."""
    if CHECKOUT_ROOT is not None:
        return FIRMWARE_DIR / "build"
    return data_root() / "firmware-build"


def make_command(*targets: str) -> list[str]:
    """`make` over the firmware sources, building into firmware_build_dir()."""
    command = ["make", "-C", str(FIRMWARE_DIR), *targets]
    if CHECKOUT_ROOT is None:  # the Makefile's BUILD (default build/, inside the sources)
        command.append(f"BUILD={firmware_build_dir()}")
    return command


def default_config_path() -> Path:
    return data_root() / CONFIG_NAME


def ensure_default_config() -> Path:
    """The default config.yaml; an installed copy's is made on first use from the packaged
    default (an existing file is never replaced)."""
    path = default_config_path()
    if CHECKOUT_ROOT is None and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(PACKAGED_CONFIG) as default, open(path, "x") as out:  # "x": never overwrite
                shutil.copyfileobj(default, out)
        except FileExistsError:
            pass  # made meanwhile by another process: keep it
    return path


def make_advice(*args: str) -> str:
    """The make command to tell a maker: `make -C firmware ...` in a checkout (run from its
    root, as the docs say), the full command over the packaged sources in an installed copy."""
    if CHECKOUT_ROOT is not None:
        return " ".join(("make -C firmware", *args))
    return " ".join(make_command(*args))
