#!/usr/bin/env bash
# Installs what the real-model tests need beyond scripts/install-deps.sh, skipping what is
# present: Debian's torch and torchvision (to export the torch models), python3-onnx (checker),
# numpy, Pillow and the DejaVu fonts (inputs; calibration text is drawn in DejaVu), node and npm (onnxruntime-node, npm pack). Use with /usr/bin/python3.
set -euo pipefail
packages=(python3-torch python3-torchvision python3-onnx python3-numpy python3-pil fonts-dejavu-core)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm may come from elsewhere than Debian (e.g. a nodesource build bundling npm).
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-model-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-model-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
start=$(date +%s)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-model-deps: installed ${#missing[@]} package(s) in $(( $(date +%s) - start )) s"
