# Sourced by the scripts that run the real models of configs/models/models.txt (scripts/model-report.sh,
# tests/models/model_test.sh): how a list line's inputs and an input set in the cache are read, once.
# A list line is: NAME SOURCE SHA256 INPUTS OPTIONS, INPUTS a comma list of name|dtype|shape|lo|hi.

# model_parse_inputs INPUTS OPTIONS: sets model_input_names (the inputs in the model's order),
# model_shape_args (--input-shape NAME=SHAPE for each input of a `dynamic` model, whose shapes
# npuforge must be told) and model_input_lo/model_input_hi (the last input's random range).
model_parse_inputs() {
  local inputs=$1 options=$2 spec in_name in_shape
  local -a specs
  model_input_names=()
  model_shape_args=()
  model_input_lo=-1
  model_input_hi=1
  IFS=, read -ra specs <<< "$inputs"
  for spec in "${specs[@]}"; do
    IFS='|' read -r in_name _ in_shape model_input_lo model_input_hi <<< "$spec"
    model_input_names+=("$in_name")
    [[ ",$options," == *,dynamic,* ]] && model_shape_args+=(--input-shape "$in_name=$in_shape")
  done
  return 0
}

# model_input_sets CACHE NAME [SEEDS]: sets model_sets to the input sets of NAME in the cache:
# seed<K> for each K of the comma list SEEDS (default: every seeded set present), then every real
# sample (sample_*). A set's files are CACHE/inputs/NAME/<set>_in<I>.npy.
model_input_sets() {
  local cache=$1 name=$2 seeds=${3:-} f s
  local -a seed_list
  model_sets=()
  if [ -n "$seeds" ]; then
    IFS=, read -ra seed_list <<< "$seeds"
    for s in "${seed_list[@]}"; do model_sets+=("seed$s"); done
  else
    for f in "$cache/inputs/$name"/seed*_in0.npy; do
      [ -e "$f" ] && model_sets+=("$(basename "$f" _in0.npy)")
    done
  fi
  for f in "$cache/inputs/$name"/sample_*_in0.npy; do
    [ -e "$f" ] && model_sets+=("$(basename "$f" _in0.npy)")
  done
  return 0
}

# model_option OPTIONS KEY: the value of KEY=VALUE in the comma list OPTIONS (empty when absent).
model_option() {
  tr , '\n' <<< "$1" | sed -n "s/^$2=//p"
}
