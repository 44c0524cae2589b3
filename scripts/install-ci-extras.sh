#!/usr/bin/env bash
# What the CI-only tests need beyond scripts/install-deps.sh, skipping what is present:
#   slurm_regress   a single-node Slurm (slurmctld slurmd slurm-client munge; ~3 s)
#   report_browser  headless Chromium to render the HTML report
# Without recommends: slurm-wlm's 35 packages are not needed, nor chromium's desktop extras.
set -euo pipefail
packages=(slurmctld slurmd slurm-client munge chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-ci-extras: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-ci-extras: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
# policy-rc.d or no init system: the packages' postinst scripts start no daemon here.
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
