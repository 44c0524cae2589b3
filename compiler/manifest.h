#pragma once
// OUT/manifest.yaml: what `npuforge compile` made and how to run it. The runner
// (`npuforge run-model OUT/`) reads it back with Manifest::load_file; every file it names is
// relative to the manifest's directory, so OUT/ can be moved as a whole.
//
//   # npuforge compile manifest
//   format: 1
//   model: squeezenet1_1.onnx
//   npu: {file: npu.yaml, source: configs/npu/default.yaml, fnv1a64: 0123abcd..., sram_bytes: 524288,
//         alignment: 64, ddr_bytes: 67108864}
//   isa: {name: npuforge-ref, version: 2}
//   image: model.ddr.bin            # DDR before the first segment: weights + the sample input
//   sample: seeded random            # what the sample input (and the images) came from
//   regions:
//     weights: {base: 0x0, bytes: 123456}
//     input: {base: 0x1e240, bytes: 27648}
//     arena: {base: 0x24e40, bytes: 65536}
//     output: {base: 0x34e40, bytes: 1024}
//   inputs:                         # model inputs: name, tensor and where its bytes are
//     - {name: x, tensor: x, ddr: 0x1e240, bytes: 27648, dtype: int8, layout: hwc, shape: [1, 3, 96, 96], scale: 0.0157}
//   outputs: [...]                  # model outputs, the same fields
//   segments:
//     - index: 0
//       kind: npu
//       files: {bin: seg0.bin, hex: seg0.hex, asm: seg0.s, memmap: seg0.memmap.yaml, ddr: seg0.ddr.bin,
//               expect: seg0.expect.ddr.bin}
//       ops: ["conv Conv_0+Relu_1", ...]
//       instructions: 812
//       sram_peak: 401408
//       macs: 2123776
//       inputs: [{tensor: x, ddr: ..., bytes: ..., dtype, layout, shape, scale}]
//       outputs: [...]
//     - index: 1
//       kind: cpu
//       graph: seg1.cpu.yaml           # the project's YAML graph; constants in seg1.cpu/*.npy
//       nodes: [Softmax_12]
//       inputs: [{tensor: ..., value: <the graph's input name>, ddr: ..., ...}]
//       outputs: [...]
//   arena:
//     planner: lifetime-aware
//     peak: 65536
//     lower_bound: 61440
//     clean: true                      # the static check of the plan found nothing
//     tensors:
//       - {name: conv1_out, offset: 0x0, size: 4096, lower: 0, upper: 3}
//   statistics: {macs: ..., instructions: ..., sram_peak: ..., tokens: ..., npu_segments: 2, cpu_steps: 1}
//
// A CPU step's int8 inputs are dequantized and converted to the ONNX layout before its graph
// runs, and its outputs quantized to their tensors' scale and layout (float32 ones are stored
// as they are); `expect` is the DDR image after the segment on the sample input (the int8
// reference), so `npuforge sim segK.bin --memmap ... --ddr segK.ddr.bin --expect-ddr
// segK.expect.ddr.bin` checks one segment bit-exactly.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace npuforge::compiler {

struct ManifestTensor {
  std::string name;    // graph inputs/outputs: the model's name; else empty
  std::string tensor;  // the compiled tensor
  std::string value;   // CPU steps: the name in the step's graph (empty elsewhere)
  uint64_t ddr = 0;
  uint64_t bytes = 0;  // unpadded
  std::string dtype;   // int8, float32
  std::string layout;  // hwc, row_major, onnx
  std::vector<int64_t> shape;
  double scale = 0;    // 0 for float32
};

struct ManifestRegion {
  uint64_t base = 0, bytes = 0;
};

struct ManifestSegment {
  int64_t index = 0;
  std::string kind;  // "npu" or "cpu"
  // npu
  std::string bin, hex, asm_file, memmap, ddr, expect;
  std::vector<std::string> ops;
  uint64_t instructions = 0, sram_peak = 0, macs = 0;
  // cpu
  std::string graph;
  std::vector<std::string> nodes;
  std::vector<ManifestTensor> inputs, outputs;
};

struct ManifestArenaTensor {
  std::string name;
  uint64_t offset = 0, size = 0;
  int64_t lower = 0, upper = 0;
};

struct Manifest {
  int64_t format = 1;
  std::string model;
  std::string npu_file, npu_source;
  uint64_t npu_hash = 0, sram_bytes = 0, alignment = 0, ddr_bytes = 0;
  std::string isa_name;
  int64_t isa_version = 0;
  std::string image;
  std::string sample;
  ManifestRegion weights, input, arena, output;
  std::vector<ManifestTensor> inputs, outputs;
  std::vector<ManifestSegment> segments;
  std::string arena_planner;
  uint64_t arena_peak = 0, arena_lower_bound = 0;
  bool arena_clean = true;
  std::vector<ManifestArenaTensor> arena_tensors;
  uint64_t macs = 0, instructions = 0, sram_peak = 0, tokens = 0;
  int64_t npu_segments = 0, cpu_steps = 0;

  std::string to_yaml() const;
  void save_file(const std::filesystem::path& path) const;
  // Throw npuforge::Error naming the file, the line and the field on a malformed manifest.
  static Manifest load_string(std::string_view text, std::string_view source);
  static Manifest load_file(const std::filesystem::path& path);
};

}  // namespace npuforge::compiler
