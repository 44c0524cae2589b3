#!/usr/bin/env node
'use strict';
// Compares an output of npuforge with onnxruntime's (the reference), both .npy.
//
//   node scripts/ort/compare.js ACTUAL.npy REFERENCE.npy [--rtol 1e-4] [--atol 0] [--label TEXT]
//
// Shapes and dtypes must be equal. Integer (and bool) tensors must be equal element for element.
// Floating tensors pass when
//     max_i |a_i - b_i|  /  max(max_i |b_i|, FLT_MIN)  <=  rtol
// i.e. the worst absolute error relative to the reference's largest magnitude. Why not a
// per-element relative error: a sum of many terms of both signs (a Conv, a MatMul) carries an
// absolute rounding error of about eps * sum|terms|, whatever the size of the result, so for
// outputs near zero a per-element ratio measures cancellation, not a bug. Scaling by the
// tensor's largest value keeps the test scale-free and still tight (1e-4 is ~800 float32 ulps of
// the largest value), and a single wrong element of any size shows up (unlike a norm-based
// error, which dilutes one wrong element among many). NaN must match NaN at the same place.
// --atol A also passes when max|a-b| <= A: only for outputs where the reference itself is known
// to be less accurate than that (configs/models/models.txt says where and why).
// --min-cosine C judges a quantized model's output against the float one instead: it passes when
// the cosine similarity of the two (as flat vectors) is at least C. Why a second criterion: an
// int8 model is not equal to its float model within float tolerances, and its quality is how
// closely it follows the float output's direction (scripts/model-report.sh uses it). Integer
// outputs are then judged the same way, centred on the reference's mean (a zero point is an offset),
// with the count of differing elements and the largest difference in steps beside it.
// Prints one line with the numbers, the cosine and the top-1 (along the last axis) of each;
// exit 0 when equal enough, 1 otherwise.
const { readNpy } = require('./npy');

function parse(argv) {
  const a = { actual: null, reference: null, rtol: 1e-4, atol: 0, minCosine: null, label: '' };
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--rtol') a.rtol = Number(argv[++i]);
    else if (argv[i] === '--atol') a.atol = Number(argv[++i]);
    else if (argv[i] === '--label') a.label = argv[++i];
    else if (argv[i] === '--min-cosine') a.minCosine = Number(argv[++i]);
    else rest.push(argv[i]);
  }
  const cosineOk = a.minCosine === null || (a.minCosine >= -1 && a.minCosine <= 1);
  if (rest.length !== 2 || !(a.rtol >= 0) || !(a.atol >= 0) || !cosineOk) {
    throw new Error('usage: compare.js ACTUAL.npy REFERENCE.npy [--rtol R] [--atol A] [--min-cosine C in [-1, 1]] [--label TEXT]');
  }
  [a.actual, a.reference] = rest;
  return a;
}

function argmax(data, begin, end) {
  let best = begin;
  for (let i = begin + 1; i < end; i++) if (data[i] > data[best]) best = i;
  return best - begin;
}

// Top-1 along the last axis: the class of a classifier, the symbol per step of a recogniser.
function top1(a, b, dims) {
  const n = dims.length > 0 ? dims[dims.length - 1] : 1;
  if (n <= 1 || dims.length > 3) return '';  // not for maps (NCHW), where it means nothing
  const rows = a.length / n;
  if (rows === 1) return `; top-1 ${argmax(a, 0, n)} vs ${argmax(b, 0, n)}`;
  let agree = 0;
  for (let r = 0; r < rows; r++) if (argmax(a, r * n, (r + 1) * n) === argmax(b, r * n, (r + 1) * n)) agree++;
  return `; top-1 along the last axis agrees in ${agree}/${rows} rows`;
}

function compareInts(a, b, minCosine) {
  let mismatches = 0;
  let first = -1;
  let maxDiff = 0n;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) {
      mismatches++;
      if (first < 0) first = i;
      const d = BigInt(a[i]) - BigInt(b[i]);
      const ad = d < 0n ? -d : d;
      if (ad > maxDiff) maxDiff = ad;
    }
  }
  const where = mismatches === 0 ? '' : `, first at flat index ${first}: ${a[first]} vs ${b[first]}`;
  const exact = `${mismatches}/${a.length} elements differ, max |diff| ${maxDiff}${where}`;
  if (minCosine === null) return { ok: mismatches === 0, text: `exact: ${exact}` };
  // A quantized output (uint8 with a zero point) judged by direction: centred on the reference's
  // mean, so that the zero point's offset does not make any two outputs look alike.
  const nums = (t) => Array.from(t, Number);
  const ra = nums(a);
  const rb = nums(b);
  const mean = rb.reduce((s, x) => s + x, 0) / Math.max(rb.length, 1);
  const cos = cosine(ra.map((x) => x - mean), rb.map((x) => x - mean));
  return { ok: cos >= minCosine, text: `centred cosine ${cos.toFixed(6)} (min ${minCosine}), ${exact}` };
}

// Cosine similarity of two flat vectors, in double; two zero vectors are the same direction (1),
// one zero vector against a non-zero one has none (0).
function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  if (na === 0 && nb === 0) return 1;
  if (na === 0 || nb === 0) return 0;
  return dot / Math.sqrt(na * nb);
}

function compareFloats(a, b, rtol, atol, minCosine) {
  let refMax = 0;
  let maxAbs = 0;
  let worst = -1;
  let maxElemRel = 0;
  let nanMismatch = -1;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (Number.isNaN(x) || Number.isNaN(y)) {
      if (!(Number.isNaN(x) && Number.isNaN(y)) && nanMismatch < 0) nanMismatch = i;
      continue;
    }
    if (x === y) {
      if (Math.abs(y) > refMax && Number.isFinite(y)) refMax = Math.abs(y);
      continue;  // also equal infinities
    }
    const d = Math.abs(x - y);  // Infinity when only one side is infinite
    if (Number.isFinite(y)) refMax = Math.max(refMax, Math.abs(y));
    if (d > maxAbs || worst < 0) {
      maxAbs = d;
      worst = i;
    }
    if (y !== 0) maxElemRel = Math.max(maxElemRel, d / Math.abs(y));
  }
  const FLT_MIN = 1.1754943508222875e-38;
  const rel = maxAbs / Math.max(refMax, FLT_MIN);
  const cos = cosine(a, b);
  const ok = nanMismatch < 0 &&
    (minCosine === null ? rel <= rtol || maxAbs <= atol : cos >= minCosine);
  const atolText = atol > 0 ? ` or max |diff| <= ${atol}` : '';
  const judged = minCosine === null ? `rel ${rel.toExponential(3)} (tol ${rtol}${atolText}), cosine ${cos.toFixed(6)}`
                                    : `cosine ${cos.toFixed(6)} (min ${minCosine}), rel ${rel.toExponential(3)}`;
  let text = `${judged}, max |diff| ${maxAbs.toExponential(3)}, ` +
    `ref max |x| ${refMax.toExponential(3)}, max per-element rel ${maxElemRel.toExponential(3)}`;
  if (worst >= 0) text += `, worst at flat index ${worst}: ${a[worst]} vs ${b[worst]}`;
  if (nanMismatch >= 0) text += `, NaN mismatch at flat index ${nanMismatch}: ${a[nanMismatch]} vs ${b[nanMismatch]}`;
  return { ok, text };
}

function main() {
  const args = parse(process.argv.slice(2));
  const a = readNpy(args.actual);
  const b = readNpy(args.reference);
  const label = args.label ? `${args.label}: ` : '';
  if (a.type !== b.type) {
    console.log(`${label}FAIL dtype ${a.type} (${args.actual}) != ${b.type} (${args.reference})`);
    return 1;
  }
  if (a.dims.length !== b.dims.length || a.dims.some((d, i) => d !== b.dims[i])) {
    console.log(`${label}FAIL shape [${a.dims}] (${args.actual}) != [${b.dims}] (${args.reference})`);
    return 1;
  }
  const isFloat = a.type === 'float32' || a.type === 'float64';
  const r = isFloat ? compareFloats(a.data, b.data, args.rtol, args.atol, args.minCosine) : compareInts(a.data, b.data, args.minCosine);
  console.log(`${label}${r.ok ? 'ok' : 'FAIL'} ${a.type}[${a.dims.join('x')}] ${r.text}${top1(a.data, b.data, a.dims)}`);
  return r.ok ? 0 : 1;
}

try {
  process.exitCode = main();
} catch (e) {
  console.error(`compare.js: ${e.message}`);
  process.exitCode = 1;
}
