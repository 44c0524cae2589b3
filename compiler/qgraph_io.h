#pragma once
// A compiled model's QGraph on disk (OUT/qgraph.bin), so that `npuforge run-model OUT/` can run
// the int8 reference (qref.h) of exactly the graph that was compiled on any input, without
// the model file or the calibration: the runner compares every NPU segment's simulated output
// with it bit for bit.
//
// Format (little-endian): "NPFQGRF2" (2: per-channel scales and LUT channel tables), then the tensors, ops (a tag per kind, then its fields),
// model inputs/outputs and segments; strings and vectors carry their length (u64). A CPU step's
// float graph is not duplicated: the file names its YAML graph (OUT/segK.cpu.yaml, written by
// the bundle), read back with model::load_model when the QGraph is loaded.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "compiler/qgraph.h"

namespace npuforge::compiler {

// `cpu_graph_file(op index)`: the YAML file (relative to the QGraph file's directory) holding
// CPU step `op index`'s graph.
std::vector<uint8_t> encode_qgraph(const QGraph& g, const std::function<std::string(size_t)>& cpu_graph_file);
void write_qgraph(const std::filesystem::path& path, const QGraph& g,
                  const std::function<std::string(size_t)>& cpu_graph_file);

// Throws npuforge::Error naming the file and what is wrong (bad magic, truncation, an id out of
// range, a CPU-step graph that does not load); the result passes validate().
QGraph decode_qgraph(const std::vector<uint8_t>& bytes, const std::filesystem::path& source);
QGraph read_qgraph(const std::filesystem::path& path);

}  // namespace npuforge::compiler
