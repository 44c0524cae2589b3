#pragma once
// Writing a compiled model (docs/compiler.md section 14) into a directory OUT/:
//   manifest.yaml        the segments in order and everything a runner needs (manifest.h)
//   npu.yaml             the NPU config it was compiled for (OUT/ is self-contained)
//   model.ddr.bin        DDR before the first segment: the weights region and the sample input
//   segK.bin .hex .s .memmap.yaml .ddr.bin   per NPU segment: its program bundle
//                        (bundle/files.h; .ddr.bin is DDR before the segment on the sample
//                        input, from the int8 reference)
//   segK.expect.ddr.bin  DDR after the segment (what the NPU must leave)
//   segK.cpu.yaml, segK.cpu/*.npy   per CPU step: its sub-graph as a YAML graph
//   qgraph.bin           the QGraph itself (qgraph_io.h): the runner's int8 reference
#include <filesystem>
#include <string>
#include <vector>

#include "compiler/backend.h"
#include "compiler/manifest.h"
#include "isa/isa.h"
#include "isa/npu_config.h"
#include "model/tensor.h"

namespace npuforge::compiler {

struct BundleOptions {
  std::string model;          // the model's file name
  isa::NpuConfigSource npu;   // the config, where it came from, its text
  std::string sample;         // what the sample input was (for the manifest)
};

// Applies op `i`'s output values (the int8 reference's, storage layout) to a DDR image.
void apply_outputs(const QGraph& g, const CompiledModel& m, const QOp& op, const std::vector<model::Tensor>& values,
                   std::vector<uint8_t>& image);

// The DDR image before the first segment: weights and the model inputs' values.
std::vector<uint8_t> initial_image(const QGraph& g, const CompiledModel& m, const std::vector<model::Tensor>& values);

// Writes every file; `values` are the int8 reference's values of every tensor on the sample
// input (compiler/qref.h). Returns the manifest it wrote.
Manifest write_bundle(const std::filesystem::path& out, const QGraph& g, const CompiledModel& m, const isa::Isa& isa,
                      const std::vector<model::Tensor>& values, const BundleOptions& options);

// The manifest's view of the compiled model (also without files, for tests).
Manifest make_manifest(const QGraph& g, const CompiledModel& m, const isa::Isa& isa, const BundleOptions& options);

}  // namespace npuforge::compiler
