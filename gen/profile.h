#pragma once
// A generator profile (configs/gen/*.yaml): every knob of the constrained-random program
// generator. Loading rejects unknown keys and out-of-range values with an npuforge::Error
// naming the file, the line and the key; a shape's range is checked against what the ISA's
// field holds (gemm m: the width of gemm.m), an operand size against the SRAM the address
// fields reach.
//
//   length: 2000                       # instructions, halt included
//   mix: {load: 4, store: 2, gemm: 2, im2col: 1, eltwise: 3, pool: 1, move: 1, lut: 1, nop: 0, sync: 0}
//   sizes:                             # operand sizes in bytes, per operand kind
//     load:   {min: 1, max: 16384, dist: log_uniform,   # or uniform
//              unit: 0.05, largest_free: 0.02, whole_sram: 0.002, odd: 0.2}   # corner bins
//     vector: {...}                    # eltwise lengths
//   shapes:
//     gemm:   {m: [1, 64], n: [1, 64], k: [1, 128], bias: 0.3, per_channel: 0.3}
//     pool:   {h: [2, 32], w: [2, 32], c: [1, 16], window: [1, 4], stride: [1, 3], pad: [0, 1],
//              count_pad: 0.3}        # window/stride/pad drawn per axis (per side for pad)
//     im2col: {h: [2, 16], w: [2, 16], c: [1, 8], kernel: [1, 3], stride: [1, 2], pad: [0, 1],
//              dilation: [1, 2]}
//   dependencies: {chain_depth: 4, fan_out: [1, 3], fan_in: 0.6}   (fan_out 0: outputs never read)
//   lifetime: [1, 200]                 # instructions from producer to when it is due
//   token_density: 0.1                 # chance of an extra cross-queue wait (less overlap)
//   allocator: {fit: first-fit, oom: retire}            # oom: retire | compact | spill
//   directed: {rate: 0.02, count: [4, 16],
//              sequences: {checkerboard: 1, exact_fit: 1, merge_both: 1,
//                          fill_last_byte: 1, tiny_buffers: 1, extremes: 0}}
// Every key is optional; absent keys keep the defaults below.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "allocator/allocator.h"
#include "isa/isa.h"

namespace npuforge::gen {

struct Range {
  int64_t min = 0;
  int64_t max = 0;
};

// Size distribution of one operand kind: a body [min, max] plus corner bins, each the
// probability that a draw takes that corner instead of the body.
struct SizeDist {
  Range bytes{1, 4096};
  bool log_uniform = true;
  double unit = 0.05;          // exactly one alignment unit
  double largest_free = 0.02;  // exactly the allocator's largest free node
  double whole_sram = 0.0;     // the whole scratchpad
  double odd = 0.2;            // a size that is not a multiple of the alignment (padding)
};

enum class OpKind : uint8_t { Load, Store, Gemm, Im2col, Eltwise, Pool, Move, Lut, Nop, Sync };
inline constexpr unsigned kNumOpKinds = 10;
std::string_view op_name(OpKind kind);

enum class OomPolicy : uint8_t { Retire, Compact, Spill };
std::string_view oom_name(OomPolicy policy);

// Extremes: zero-length operands at extreme addresses and maximum-length operands
// (gen/extremes.cc). Last, and weight 0 unless a profile lists it, so that the draw over the
// other sequences is the one it always was (existing seeds keep their programs).
enum class Directed : uint8_t { Checkerboard, ExactFit, MergeBoth, FillLastByte, TinyBuffers, Extremes };
inline constexpr unsigned kNumDirected = 6;
std::string_view directed_name(Directed d);

struct Profile {
  std::string source = "<default>";  // file name, for headers and errors
  uint64_t hash = 0;                 // fnv1a64 of the file text
  int64_t length = 2000;
  std::array<double, kNumOpKinds> mix{4, 2, 2, 1, 3, 1, 1, 1, 0, 0};
  SizeDist load_sizes{};
  SizeDist vector_sizes{{1, 2048}, true, 0.05, 0.01, 0.0, 0.2};
  Range gemm_m{1, 64}, gemm_n{1, 64}, gemm_k{1, 128};
  double gemm_bias = 0.3, gemm_per_channel = 0.3;
  Range pool_h{2, 32}, pool_w{2, 32}, pool_c{1, 16}, pool_window{1, 4}, pool_stride{1, 3}, pool_pad{0, 1};
  double pool_count_pad = 0.3;
  Range im2col_h{2, 16}, im2col_w{2, 16}, im2col_c{1, 8}, im2col_kernel{1, 3},
      im2col_stride{1, 2}, im2col_pad{0, 1}, im2col_dilation{1, 2};
  int64_t chain_depth = 4;
  Range fan_out{1, 3};
  double fan_in = 0.6;
  Range lifetime{1, 200};
  double token_density = 0.1;
  allocator::Policy fit = allocator::Policy::FirstFit;
  OomPolicy oom = OomPolicy::Retire;
  double directed_rate = 0.0;
  Range directed_count{4, 16};
  std::array<double, kNumDirected> directed{1, 1, 1, 1, 1, 0};

  // `isa`: the fields the shapes are checked against.
  static Profile load_file(const std::filesystem::path& path, const isa::Isa& isa = isa::builtin_isa());
  static Profile load_string(std::string_view yaml_text, std::string_view source_name,
                             const isa::Isa& isa = isa::builtin_isa());
};

}  // namespace npuforge::gen
