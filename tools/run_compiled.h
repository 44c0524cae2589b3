#pragma once
// `npuforge run-model OUT/`: runs a compiled model (npuforge compile -o OUT/) segment by
// segment on the user's inputs and checks it:
//  - the model inputs are quantized into the DDR image (OUT/model.ddr.bin holds the weights);
//  - each NPU segment runs in this process, on a fresh SystemC kernel (sim::verify::run, as
//    `npuforge sim` runs it) with every checker on (shadow, overlap, hazards, DDR ownership,
//    the golden model); its final DDR image becomes the image now;
//  - each CPU step runs on the reference interpreter (dequantize, its graph, quantize) on the
//    bytes in the image and writes its outputs back;
//  - every segment's outputs are compared bit for bit with the int8 reference of the compiled
//    QGraph (OUT/qgraph.bin, compiler/qref.h) on the same inputs;
//  - the model outputs are read from the image, dequantized and written as .npy;
//  - they are compared with the float model (OUT/<manifest model>, which compile copies there,
//    or --reference FILE) run by npuforge's fp32 reference interpreter: cosine similarity, max
//    |difference| and, for [1, N] outputs, the top-1, per output. The judge is the interpreter, not
//    onnxruntime (not linked into npuforge; tests/models checks the interpreter against
//    onnxruntime within 1e-4 relative on every cached model). --min-cosine makes a lower cosine a
//    failure.
// A failing NPU segment prints its report and the `npuforge sim` command that reproduces it
// alone; the files that command reads (the segment's DDR image in) are written beside its
// image out, verdict (.json) and report (.log): into --work-dir, else a temporary directory
// the output names. --keep (or --work-dir) writes them for every NPU segment.
#include <filesystem>
#include <string>
#include <vector>

namespace npuforge::tools {

struct RunCompiledOptions {
  std::filesystem::path dir;            // OUT/
  std::vector<std::string> inputs;      // .npy per model input (in order or NAME=FILE)
  std::vector<std::string> outputs;     // .npy per model output
  bool rtl = false;                     // Verilated scratchpad and decoder in the loop
  std::string trace;                    // VCD per NPU segment: <stem>.segK<ext>
  std::string backend = "systemc";      // or sequential (no SystemC)
  uint64_t max_errors = 20;             // findings each segment prints
  std::string work_dir;                 // write every NPU segment's images, verdict and report here
  bool keep = false;                    // ... or into a temporary directory (named): not only a failing one's
  std::string reference;                // float model to judge against (default OUT/<manifest model>)
  double min_cosine = 0;                // > 0: an output below it against the float model fails
};

// Exit code: 0 when every segment is clean and bit-exact (and every output reaches
// --min-cosine), 1 otherwise.
int run_compiled_model(const RunCompiledOptions& options);

}  // namespace npuforge::tools
