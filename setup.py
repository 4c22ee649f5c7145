"""Packaging beyond pyproject.toml: a built package (wheel, `pip install .`, pipx) carries
what an installed copy needs from outside robot/: the firmware sources (its headers give
the host its protocol codes and limits; make builds and flashes from them) and the default
config.yaml.  They go into robot/_bundled/ (robot/paths.py finds them there).  An editable
install (`pip install -e .`) reads them from the checkout instead."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# (source in the checkout, destination under robot/_bundled/); firmware/build is never packaged.
BUNDLED = [("config.yaml", "config.yaml"), ("firmware/Makefile", "firmware/Makefile"),
           ("firmware/README.md", "firmware/README.md")]
BUNDLED_GLOBS = [("firmware/cube_robot", ("*.h", "*.cpp", "*.ino")), ("firmware/harness", ("*.c", "*.h"))]


def bundled_files():
    files = list(BUNDLED)
    for folder, patterns in BUNDLED_GLOBS:
        for pattern in patterns:
            files += [(str(p.relative_to(ROOT)), str(p.relative_to(ROOT))) for p in sorted((ROOT / folder).glob(pattern))]
    return files


class BuildPyWithBundle(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for source, destination in bundled_files():
            target = Path(self.build_lib) / "robot" / "_bundled" / destination
            self.mkpath(str(target.parent))
            self.copy_file(str(ROOT / source), str(target))


setup(cmdclass={"build_py": BuildPyWithBundle})
