#!/usr/bin/env bash
# Installs the Debian 12 packages trnsim needs, only those missing. Uses sudo when not root.
# python3 runs the NKI front end (src/frontend); NKI kernels commonly import numpy.
# Usage: install-deps.sh [--test]   (--test: also what the tests use: Chromium renders the HTML
# reports and Pillow decodes its screenshots; slurm-wlm and munge start the single-node Slurm the sweep test submits the example job
# array to (tests/slurm); util-linux `script`, which gives the progress test a terminal, is in
# Debian's base)
set -euo pipefail
packages=(build-essential cmake pkg-config libsystemc-dev libboost-dev libspdlog-dev libfmt-dev
          nlohmann-json3-dev libcli11-dev libgtest-dev googletest python3 python3-numpy)
if [ "${1:-}" = "--test" ]; then
  packages+=(chromium python3-pil slurm-wlm munge)
fi
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "trnsim: installing missing packages: ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
