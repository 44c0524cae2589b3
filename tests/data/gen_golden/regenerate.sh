#!/usr/bin/env bash
# Regenerates the golden digests: seeds 1-100 of every shipped profile through
# `npuforge gen` (default length, configs/npu/default.yaml), then sha256sum of the five
# outputs. Usage: tests/data/gen_golden/regenerate.sh [path/to/npuforge]
# Run it only when a change of the outputs is intended, and say why in the commit.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
npuforge="${1:-$root/build/tools/npuforge}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for profile in default stress-fragment near-full tiny-buffers; do
  (
    cd "$work"
    for seed in $(seq 1 100); do
      "$npuforge" gen --profile "$root/configs/gen/$profile.yaml" --npu "$root/configs/npu/default.yaml" \
        --seed "$seed" -o "$profile-$seed" > /dev/null
      sha256sum "$profile-$seed".s "$profile-$seed".bin "$profile-$seed".hex "$profile-$seed".memmap.yaml \
        "$profile-$seed".ddr.bin
      rm -f "$profile-$seed".*
    done
  ) > "$here/$profile.sha256"
done
