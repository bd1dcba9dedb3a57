#!/usr/bin/env bash
# Set up mcusim on a fresh Debian/Ubuntu machine and run the bundled examples on mcu-d.
#   - system packages: the Arm cross toolchain with newlib, QEMU (differential tests), gdb-multiarch
#     (the GDB server's tests), Chromium (timeline.json through Chrome's trace importer), make, a
#     host C compiler (the speed workloads' expected values are checked against a host build)
#   - a virtual environment in .venv with mcusim and its test extras
#   - the firmware kit built, then `hello` run from the package and from firmware/build
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm gdb-multiarch make gcc libc6-dev python3-venv)
# Debian's chromium; Ubuntu has only a snap (chromium-browser): install that yourself for the one test needing it
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || ! grep -qi '^ID=debian' /etc/os-release \
    || packages+=(chromium)
missing=()
for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"

make -C firmware -j"$(nproc)" -s PYTHON="$PWD/.venv/bin/python"
echo "setup: mcusim prepare (compiles the simulator's native code once, about a minute)"
.venv/bin/mcusim prepare
echo "setup: mcusim run --example hello --board mcu-d"
.venv/bin/mcusim run --example hello --board mcu-d
echo "setup: mcusim run firmware/build/mcu-d/exceptions.elf --board mcu-d"
.venv/bin/mcusim run firmware/build/mcu-d/exceptions.elf --board mcu-d
echo "setup: mcusim run --example person_detection-opt --board mcu-d --out build/person_detection, then mcusim report"
.venv/bin/mcusim run --example person_detection-opt --board mcu-d --out build/person_detection
.venv/bin/mcusim report build/person_detection
