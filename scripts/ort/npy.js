'use strict';
// Minimal .npy (format 1.0-3.0) reader and writer for the dtypes ONNX models use.
// C order only; a Fortran-order file is an error rather than a silently transposed tensor.
const fs = require('fs');

// numpy descr (without byte-order char) -> onnxruntime tensor type and typed array.
const DTYPES = {
  f4: { ort: 'float32', Array: Float32Array, size: 4 },
  f8: { ort: 'float64', Array: Float64Array, size: 8 },
  i1: { ort: 'int8', Array: Int8Array, size: 1 },
  u1: { ort: 'uint8', Array: Uint8Array, size: 1 },
  i2: { ort: 'int16', Array: Int16Array, size: 2 },
  u2: { ort: 'uint16', Array: Uint16Array, size: 2 },
  i4: { ort: 'int32', Array: Int32Array, size: 4 },
  u4: { ort: 'uint32', Array: Uint32Array, size: 4 },
  i8: { ort: 'int64', Array: BigInt64Array, size: 8 },
  u8: { ort: 'uint64', Array: BigUint64Array, size: 8 },
  b1: { ort: 'bool', Array: Uint8Array, size: 1 },
};
const ORT_TO_DESCR = Object.fromEntries(Object.entries(DTYPES).map(([k, v]) => [v.ort, k]));

function fail(file, msg) {
  throw new Error(`${file}: ${msg}`);
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') fail(file, 'not a .npy file (magic \\x93NUMPY expected)');
  const major = buf[6];
  let headerLen;
  let offset;
  if (major === 1) {
    headerLen = buf.readUInt16LE(8);
    offset = 10;
  } else if (major === 2 || major === 3) {
    if (buf.length < 12) fail(file, 'truncated header');
    headerLen = buf.readUInt32LE(8);
    offset = 12;
  } else {
    fail(file, `unsupported .npy version ${major}`);
  }
  if (offset + headerLen > buf.length) fail(file, 'truncated header');
  const header = buf.toString('latin1', offset, offset + headerLen);
  const descrM = header.match(/'descr'\s*:\s*'([<>|=])([a-z]\d+)'/);
  const fortranM = header.match(/'fortran_order'\s*:\s*(True|False)/);
  const shapeM = header.match(/'shape'\s*:\s*\(([^)]*)\)/);
  if (!descrM || !fortranM || !shapeM) fail(file, `malformed header: ${header.trim()}`);
  if (fortranM[1] === 'True') fail(file, 'fortran_order=True is not supported (save with C order)');
  if (descrM[1] === '>') fail(file, 'big-endian data is not supported');
  const dt = DTYPES[descrM[2]];
  if (!dt) fail(file, `unsupported dtype '${descrM[2]}'`);
  const dims = shapeM[1].split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const dataStart = offset + headerLen;
  const need = count * dt.size;
  if (buf.length - dataStart !== need) fail(file, `data is ${buf.length - dataStart} bytes, shape ${JSON.stringify(dims)} needs ${need}`);
  // Copy into an aligned buffer: the data offset need not be a multiple of the element size.
  const bytes = new Uint8Array(need);
  buf.copy(bytes, 0, dataStart, dataStart + need);
  const data = new dt.Array(bytes.buffer, 0, count);
  return { type: dt.ort, dims, data };
}

function writeNpy(file, type, dims, data) {
  const descr = ORT_TO_DESCR[type];
  if (!descr) fail(file, `cannot write tensor type ${type}`);
  const order = DTYPES[descr].size === 1 ? '|' : '<';
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${order}${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Pad so that magic + version + length + header + newline is a multiple of 64 (numpy does).
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

module.exports = { readNpy, writeNpy };
