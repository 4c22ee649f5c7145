#!/usr/bin/env bash
# Set up a fresh machine for cube-robot: the AVR toolchain + simavr and chromium (Debian
# packages, when we are root or have sudo) and a Python virtualenv in .venv
# with the package installed in editable mode.  Safe to run again: it only
# installs what is missing.  Used by start.sh, test.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(gcc-avr avr-libc binutils-avr arduino-core-avr make libsimavr-dev libelf-dev pkg-config gcc libc6-dev avrdude)
# The browser the panel's tests drive with Playwright (about 440 MB, so only when missing; never
# `playwright install`, which downloads one from a CDN).
BROWSER_PACKAGES=(chromium)

not_installed() {
  command -v dpkg-query >/dev/null 2>&1 || return 0
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || echo "$pkg"
  done
}
missing=($(not_installed "${APT_PACKAGES[@]}"))
missing_browser=($(not_installed "${BROWSER_PACKAGES[@]}"))
if ((${#missing[@]} + ${#missing_browser[@]})); then
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else SUDO="none"; fi
  if [ "$SUDO" = none ]; then
    if ((${#missing[@]})); then
      echo "setup: cannot install ${missing[*]} (not root, no sudo); the firmware emulator will be unavailable" >&2
    fi
    if ((${#missing_browser[@]})); then
      echo "setup: cannot install ${missing_browser[*]} (not root, no sudo); the panel's browser tests will be skipped" >&2
    fi
  else
    echo "setup: installing Debian packages: ${missing[*]} ${missing_browser[*]}"
    $SUDO apt-get update -qq
    if ((${#missing[@]})); then
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    if ((${#missing_browser[@]})); then
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing_browser[@]}" >/dev/null
    fi
  fi
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PYTHON" -m venv .venv
fi
if ! .venv/bin/python -c "import robot, cv2, serial, numpy, yaml, tornado, pytest, xdist, mypy, playwright" >/dev/null 2>&1; then
  echo "setup: installing Python packages into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[test]"
fi
