#pragma once
// What the kernel files (sim/kernels*.cc) share: operand lookup, byte
// helpers and the AVX2 cloning of hot loops. Internal to sim/: Semantics::run is the API.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include <fmt/core.h>

#include "sim/semantics.h"
#include "util/error.h"

// Hot integer loops are compiled twice, for AVX2 and the baseline x86-64, and the loader
// picks one by CPU: integer results do not depend on the vector width, so every machine gives
// the same bytes. GCC only (the fuzz build's clang takes the baseline).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NPUFORGE_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NPUFORGE_CLONES
#endif

namespace npuforge::sim::kernels {

using In = std::span<const std::span<const uint8_t>>;

// Scratch of `n` values of T, written before it is read (no zero fill): on the stack up to
// kInline values, else on the heap. The kernels run per instruction, mostly on small shapes,
// and the allocations of per-instruction vectors cost more than some of those kernels.
template <typename T, size_t kInline>
class Scratch {
 public:
  explicit Scratch(size_t n) {
    if (n > kInline) heap_ = std::make_unique_for_overwrite<T[]>(n);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  T* data() { return heap_ ? heap_.get() : local_; }

 private:
  alignas(16) T local_[kInline];  // uninitialized on purpose; aligned for any value carved from bytes
  std::unique_ptr<T[]> heap_;
};

inline std::span<const uint8_t> operand(const isa::Instruction& instr, In in, unsigned slot) {
  const auto& ops = instr.spec->operands;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].field == slot) return in[i];
  }
  throw Error(fmt::format("{}: field slot {} is not an operand", instr.spec->mnemonic, slot));
}

inline int8_t s8(uint8_t b) { return static_cast<int8_t>(b); }
inline uint8_t u8(int8_t v) { return static_cast<uint8_t>(v); }

inline int32_t load_i32(const uint8_t* p) {
  const uint32_t v = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  return static_cast<int32_t>(v);
}

// GEMM (sim/kernels_gemm.cc).
void gemm(const isa::Instruction& instr, const Semantics::GemmSlots& s, In in, std::span<uint8_t> out);
// The same with the AVX2 paths on or off (`avx2` only where the CPU has AVX2): the
// portable paths' test runs both on one machine.
void gemm(const isa::Instruction& instr, const Semantics::GemmSlots& s, In in, std::span<uint8_t> out, bool avx2);

// IM2COL (sim/kernels_im2col.cc).
void im2col(const isa::Instruction& instr, const Semantics::Im2colSlots& s, In in, std::span<uint8_t> out);

// POOL (sim/kernels_pool.cc).
void pool(const isa::Instruction& instr, const Semantics::PoolSlots& s, In in, std::span<uint8_t> out);

}  // namespace npuforge::sim::kernels
