#!/usr/bin/env bash
# What the CI-only tests need beyond scripts/install-deps.sh, skipping what is present:
#   slurm_regress   a single-node Slurm (slurmctld slurmd slurm-client munge; ~3 s)
#   report_browser  headless Chromium to render the HTML report
#   check-format    clang-format-14 (git clang-format-14 for the changed lines)
# Without recommends: slurm-wlm's 35 packages are not needed, nor chromium's desktop extras.
set -euo pipefail
exec bash "$(dirname "$0")/apt-missing.sh" install-ci-extras slurmctld slurmd slurm-client munge chromium clang-format-14
