#!/usr/bin/env bash
# Installs with apt-get (as root, or through sudo) those of the named Debian packages that are
# not installed yet; the first argument names the caller in the messages.
#   scripts/apt-missing.sh TAG PACKAGE...
# The postinst scripts start no daemon here (policy-rc.d or no init system in containers).
set -euo pipefail
tag=$1
shift
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "$tag: all $# packages present"
  exit 0
fi
echo "$tag: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
