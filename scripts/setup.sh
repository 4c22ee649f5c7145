#!/usr/bin/env bash
# Set up a fresh machine for cube-robot: the AVR toolchain + simavr (Debian
# packages, when we are root or have sudo) and a Python virtualenv in .venv
# with the package installed in editable mode.  Safe to run again: it only
# installs what is missing.  Used by start.sh, test.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(gcc-avr avr-libc binutils-avr arduino-core-avr make libsimavr-dev libelf-dev pkg-config gcc libc6-dev avrdude)

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
fi
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else SUDO="none"; fi
  if [ "$SUDO" = none ]; then
    echo "setup: cannot install ${missing[*]} (not root, no sudo); the firmware emulator will be unavailable" >&2
  else
    echo "setup: installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PYTHON" -m venv .venv
fi
if ! .venv/bin/python -c "import robot, cv2, serial, numpy, yaml, pytest, xdist, mypy" >/dev/null 2>&1; then
  echo "setup: installing Python packages into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[test]"
fi
