#!/usr/bin/python3
"""Finds where npuforge's interpreter and onnxruntime part ways inside a model.

    /usr/bin/python3 scripts/model-divergence.py MODEL.onnx --npuforge BIN --input x.npy
        [--input-shape NAME=1x3x48x192] [--rtol 1e-4] [--show 10] [--work DIR]

Every intermediate value is made a graph output (types from ONNX shape inference), onnxruntime
runs that model (scripts/ort/run.js: one thread, no graph optimisation, so it computes exactly
the graph's nodes), npuforge runs the original with --dump-dir, and the values are compared node
by node in graph order with the model tests' metric (fp32: max|a-b| / max|ref|; integers: exact).
Prints the first nodes whose outputs differ while all their inputs agree: the op to look at.
Exit 0 when everything agrees, 1 when something differs.

--allow-tie-flips (for QDQ models, where Conv/Gemm/pools run in float between Dequantize and
Quantize): a root divergence is excused when it is a QuantizeLinear whose float input agrees
within rtol and every differing element is one step apart with x/scale within rtol*max|x|/scale
of a rounding tie (k + 0.5): the two float accumulations (onnxruntime in float32 in its own order,
npuforge in its own) landed on either side of the tie. Everything downstream of such a flip
differs as a consequence and is not judged. Exit 0 when every root divergence is such a flip.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import shape_inference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def expose_all(model, input_shapes):
    """The model with every typed intermediate value as an extra graph output."""
    for inp in model.graph.input:
        if inp.name in input_shapes:
            dims = inp.type.tensor_type.shape.dim
            for d, v in zip(dims, input_shapes[inp.name]):
                d.Clear()
                d.dim_value = v
    inferred = shape_inference.infer_shapes(model)
    typed = {v.name: v for v in inferred.graph.value_info if v.type.tensor_type.elem_type != 0}
    have = {o.name for o in model.graph.output}
    for node in model.graph.node:
        for out in node.output:
            if out and out not in have and out in typed:
                vi = onnx.ValueInfoProto()
                vi.name = out
                vi.type.tensor_type.elem_type = typed[out].type.tensor_type.elem_type
                model.graph.output.append(vi)
                have.add(out)
    return model


def npuforge_file(value):
    """npuforge run-model --dump-dir names a value's file like this (tools/cmd_model.cc)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", value) + ".npy"


def difference(a, b):
    """(differs, text) with the model tests' metric."""
    if a.dtype != b.dtype:
        return True, f"dtype {a.dtype} vs {b.dtype}"
    if a.shape != b.shape:
        return True, f"shape {a.shape} vs {b.shape}"
    if a.size == 0:
        return False, "empty"
    if np.issubdtype(a.dtype, np.floating):
        both_nan = np.isnan(a) & np.isnan(b)
        d = np.where(both_nan, 0, np.abs(a.astype(np.float64) - b.astype(np.float64)))
        ref = float(np.nanmax(np.abs(b))) if not np.all(np.isnan(b)) else 0.0
        rel = float(np.nanmax(d)) / max(ref, np.finfo(np.float32).tiny) if not np.isnan(d).any() else float("inf")
        i = int(np.nanargmax(d)) if not np.isnan(d).all() else 0
        return rel, f"rel {rel:.3e}, max|diff| {float(np.nanmax(d)):.3e}, ref max {ref:.3e}, worst [{i}] {a.flat[i]!r} vs {b.flat[i]!r}"
    diff = a.astype(np.int64) - b.astype(np.int64)
    n = int(np.count_nonzero(diff))
    i = int(np.argmax(np.abs(diff)))
    return n > 0, f"{n}/{a.size} differ, max|diff| {int(np.abs(diff).max())}, worst [{i}] {a.flat[i]} vs {b.flat[i]}"


def tie_flip(node, npf_value, ort_value, value_of, rtol):
    """Why the root divergence at `node` is not a rounding-tie flip, or None when it is one."""
    if node.op_type != "QuantizeLinear":
        return f"a {node.op_type}, not a QuantizeLinear"
    x, scale = value_of(node.input[0]), value_of(node.input[1])
    if x is None or scale is None or scale.size != 1:
        return "its input or per-tensor scale is not available"
    zp = value_of(node.input[2]) if len(node.input) > 2 and node.input[2] else None
    zp = 0 if zp is None else int(np.asarray(zp).ravel()[0])
    t = x.astype(np.float64).ravel() / float(scale.ravel()[0])
    window = rtol * float(np.max(np.abs(t)))
    q_npf, q_ort = npf_value.astype(np.int64).ravel(), ort_value.astype(np.int64).ravel()
    for i in np.nonzero(q_npf != q_ort)[0]:
        below = int(np.floor(t[i]))
        off_tie = abs(t[i] - below - 0.5)
        sides = {below + zp, below + 1 + zp}  # the two roundings of a tie
        if off_tie > window or q_npf[i] not in sides or q_ort[i] not in sides:
            return (f"element {i}: x/scale {t[i]!r} is {off_tie:.2e} from a tie (window {window:.2e}), "
                    f"q {q_npf[i]} vs {q_ort[i]}")
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--npuforge", required=True)
    p.add_argument("--input", action="append", required=True, help="x.npy in the model's input order")
    p.add_argument("--input-shape", action="append", default=[])
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--show", type=int, default=10)
    p.add_argument("--work", default=None)
    p.add_argument("--allow-tie-flips", action="store_true", help="excuse QuantizeLinear rounding-tie flips (QDQ models)")
    a = p.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="divergence-")
    os.makedirs(work, exist_ok=True)
    shapes = {}
    for s in a.input_shape:
        name, dims = s.split("=", 1)
        shapes[name] = [int(d) for d in dims.split("x")]

    model = onnx.load(a.model)
    inputs = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    exposed = os.path.join(work, "exposed.onnx")
    onnx.save(expose_all(model, shapes), exposed)
    ort_dir, npf_dir = os.path.join(work, "ort"), os.path.join(work, "npuforge")
    feeds = [x for name, f in zip(inputs, a.input) for x in ("--input", f"{name}={f}")]
    subprocess.run(["node", os.path.join(ROOT, "scripts", "ort", "run.js"), exposed, *feeds, "--output-dir", ort_dir], check=True)
    npf = [a.npuforge, "run-model", a.model, "--dump-dir", npf_dir]
    for f in a.input:
        npf += ["--input", f]
    for s in a.input_shape:
        npf += ["--input-shape", s]
    subprocess.run(npf, check=True, stdout=subprocess.DEVNULL)

    manifest = json.load(open(os.path.join(ort_dir, "outputs.json")))["outputs"]
    ort_file = {o["name"]: os.path.join(ort_dir, o["file"]) for o in manifest}
    initializers = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}

    def value_of(name):  # onnxruntime's value (Constant outputs are exposed too) or an initializer
        return np.load(ort_file[name]) if name in ort_file else initializers.get(name)

    differs = {}  # value -> bool, for values both sides have
    compared, roots, flips, unexcused = 0, 0, 0, 0
    for node in model.graph.node:
        for out in node.output:
            f = os.path.join(npf_dir, npuforge_file(out))
            if out not in ort_file or not os.path.exists(f):
                continue
            npf_value, ort_value = np.load(f), np.load(ort_file[out])
            bad, text = difference(npf_value, ort_value)
            bad = bool(bad is True or (not isinstance(bad, bool) and bad > a.rtol))
            differs[out] = bad
            compared += 1
            if not bad or not all(not differs.get(i, False) for i in node.input):
                continue
            roots += 1
            why_not = tie_flip(node, npf_value, ort_value, value_of, a.rtol) if a.allow_tie_flips else "not asked"
            if why_not is None:
                flips += 1
                verdict = "rounding-tie flip (excused)"
            else:
                unexcused += 1
                verdict = "" if not a.allow_tie_flips else f"NOT a tie flip: {why_not}"
            if roots <= a.show:
                print(f"DIVERGES at {node.op_type} '{node.name}' -> '{out}' (its inputs agree): {text}"
                      + (f"; {verdict}" if verdict else ""))
    total_bad = sum(differs.values())
    print(f"compared {compared} values: {total_bad} differ, {roots} where the inputs agree"
          + (f" ({flips} rounding-tie flips)" if a.allow_tie_flips else "") + f" (work dir {work})")
    if a.allow_tie_flips:
        return 1 if unexcused else 0
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
