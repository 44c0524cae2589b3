#!/usr/bin/env bash
# Installs every Debian package npuforge needs, skipping the ones already present.
set -euo pipefail
packages=(cmake g++ make pkg-config verilator libsystemc-dev libyaml-cpp-dev libgtest-dev
          libbenchmark-dev libcli11-dev libfmt-dev libprotobuf-dev protobuf-compiler libonnx-dev
          libonnx-testdata clang-14 libfuzzer-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
