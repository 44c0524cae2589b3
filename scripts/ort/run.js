#!/usr/bin/env node
'use strict';
// Runs an ONNX model with onnxruntime (CPU, one thread, no graph optimisation, so that results
// are reproducible) on .npy inputs and writes every output as .npy with its dtype preserved.
//
//   node scripts/ort/run.js MODEL.onnx --input NAME=x.npy [--input ...] --output-dir DIR
//
// `--input x.npy` without NAME= is allowed when the model has exactly one input. Outputs are
// written as DIR/output_<i>.npy in the model's output order; DIR/outputs.json lists index, name,
// file, dtype and shape (output names may hold characters a file name cannot). Exit 1 on any
// error, with a message naming the file or input.
const fs = require('fs');
const path = require('path');
const os = require('os');
const { readNpy, writeNpy } = require('./npy');

// onnxruntime-node lives in the cache scripts/install-ort.sh installs into, not in the tree.
function loadOrt() {
  const cacheBase = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const dirs = [process.env.NPUFORGE_ORT_DIR, path.join(cacheBase, 'npuforge', 'ort'), __dirname].filter(Boolean);
  for (const d of dirs) {
    const p = path.join(d, 'node_modules', 'onnxruntime-node');
    if (fs.existsSync(p)) return require(p);
  }
  throw new Error(`onnxruntime-node not found in ${dirs.join(', ')}: run scripts/install-ort.sh`);
}

function usage() {
  return 'usage: run.js MODEL.onnx --input [NAME=]x.npy [...] --output-dir DIR';
}

function parseArgs(argv) {
  const args = { model: null, inputs: [], outputDir: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--input' || a === '--output-dir') {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value; ${usage()}`);
      const v = argv[++i];
      if (a === '--input') args.inputs.push(v);
      else args.outputDir = v;
    } else if (a === '-h' || a === '--help') {
      console.log(usage());
      process.exit(0);
    } else if (a.startsWith('-')) {
      throw new Error(`unknown option ${a}; ${usage()}`);
    } else if (args.model === null) {
      args.model = a;
    } else {
      throw new Error(`unexpected argument ${a}; ${usage()}`);
    }
  }
  if (!args.model || args.inputs.length === 0 || !args.outputDir) throw new Error(usage());
  return args;
}

function bindInputs(ort, session, specs) {
  const feeds = {};
  for (const spec of specs) {
    const eq = spec.indexOf('=');
    let name;
    let file;
    if (eq > 0) {
      name = spec.slice(0, eq);
      file = spec.slice(eq + 1);
    } else {
      if (session.inputNames.length !== 1) {
        throw new Error(`--input ${spec}: the model has inputs ${JSON.stringify(session.inputNames)}; use NAME=file.npy`);
      }
      name = session.inputNames[0];
      file = spec;
    }
    if (!session.inputNames.includes(name)) {
      throw new Error(`--input ${spec}: no model input '${name}' (inputs: ${JSON.stringify(session.inputNames)})`);
    }
    if (name in feeds) throw new Error(`--input ${spec}: input '${name}' given twice`);
    const t = readNpy(file);
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  }
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length > 0) throw new Error(`no --input for model input(s) ${JSON.stringify(missing)}`);
  return feeds;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'disabled',
  });
  const feeds = bindInputs(ort, session, args.inputs);
  const t1 = process.hrtime.bigint();
  const results = await session.run(feeds);
  const t2 = process.hrtime.bigint();
  fs.mkdirSync(args.outputDir, { recursive: true });
  const manifest = session.outputNames.map((name, i) => {
    const t = results[name];
    const file = `output_${i}.npy`;
    writeNpy(path.join(args.outputDir, file), t.type, t.dims, t.data);
    return { index: i, name, file, dtype: t.type, shape: Array.from(t.dims) };
  });
  const ms = (a, b) => Number(b - a) / 1e6;
  const timing = { load_ms: ms(t0, t1), run_ms: ms(t1, t2) };
  fs.writeFileSync(path.join(args.outputDir, 'outputs.json'), JSON.stringify({ outputs: manifest, timing }, null, 1) + '\n');
  console.log(`ort: ${path.basename(args.model)}: load ${timing.load_ms.toFixed(1)} ms, run ${timing.run_ms.toFixed(1)} ms; ` +
    manifest.map((m) => `${m.file} ${m.dtype}[${m.shape.join('x')}]`).join(', '));
}

main().catch((e) => {
  console.error(`ort run.js: ${e.message}`);
  process.exit(1);
});
