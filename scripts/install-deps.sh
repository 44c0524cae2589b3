#!/usr/bin/env bash
# Installs every Debian package npuforge needs, skipping the ones already present.
set -euo pipefail
exec bash "$(dirname "$0")/apt-missing.sh" install-deps \
  cmake g++ make pkg-config verilator libsystemc-dev libyaml-cpp-dev libgtest-dev \
  libbenchmark-dev libcli11-dev libfmt-dev libprotobuf-dev protobuf-compiler libonnx-dev \
  libonnx-testdata clang-14 libfuzzer-14-dev
