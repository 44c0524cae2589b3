#pragma once
// Internal to gen/: the state of one generation run, split over builder.cc (symbols through
// allocator::SymbolTable, tokens through isa::TokenOrderBuilder, emission), ops.cc (one
// function per instruction template, gen/roles.h), oom.cc (retire, compact, spill) and
// directed.cc (directed sequences).
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "allocator/allocator.h"
#include "allocator/placer.h"
#include "allocator/symbol_table.h"
#include "gen/factor.h"
#include "gen/generator.h"
#include "gen/prefault.h"
#include "gen/roles.h"
#include "gen/shadow.h"
#include "isa/extent_checks.h"
#include "isa/token_order.h"
#include "util/rng.h"

namespace npuforge::gen {

inline constexpr uint32_t kNone = UINT32_MAX;

// Thrown by emit() when the program has reached its length; caught by run().
struct LengthReached {};
// Thrown when the allocator's periodic self-check fails; caught by run(), which ends the
// program there and reports the check (GeneratedProgram::allocator_check).
struct AllocatorBroken {
  std::string what;
};
// Least allocations between two allocator self-checks (O(nodes) each; see check_allocator).
inline constexpr uint64_t kAllocatorCheckPeriod = 256;
// Instructions between two reports of the arrays' fill to the Prefaulter (~50 KB of them)
// and of the final instructions to the stream.
inline constexpr uint64_t kPublishEvery = 512;
// Shorter programs fault in a few MB at most: not worth a thread (regressions generate
// thousands of short programs).
inline constexpr int64_t kMinPrefaultLength = int64_t{1} << 16;

class Builder {
 public:
  Builder(const isa::Isa& isa, const isa::NpuConfig& npu, const Profile& profile, const GenOptions& opt);
  GeneratedProgram run();

  // ---- internal API shared by the .cc files ----
  // What the generator keeps per symbol beside the symbol table (placement, size, pending
  // reads and versions live there), indexed like it by SymbolId.
  struct Sym {
    uint32_t due = 0;   // instruction index when it should have been consumed
    uint32_t live_pos = kNone;
    uint32_t prod_seq = 0;
    uint32_t written = 0;  // its size in the table, fixed when placed: kept here because
                           // pick_input reads it for every candidate it looks at
    std::array<uint32_t, 3> acc{};  // last access (queue sequence number) per queue
    uint8_t depth = 0;
    uint8_t prod_q = 0;
    OpKind kind = OpKind::Load;  // of its origin: names the chain
    bool live = false;  // produced and not freed; its pending reads may be 0 only transiently
  };
  struct Use {
    uint32_t sym;
    unsigned slot;
    bool consume = true;  // a reader that counts against refs (false: spill, compaction)
  };

  // builder.cc
  // `in` by reference: by value, every instruction was copied once more on the way in.
  uint32_t emit(const isa::Instruction& in, std::span<const Use> reads, std::span<const Use> writes,
                int64_t ddr_dep = -1);
  // Places a new symbol, or the next version of `from` (OOM policy on failure); kNone when
  // nothing can make room.
  void check_allocator();  // throws AllocatorBroken; schedules the next check
  uint32_t new_symbol(uint64_t bytes, uint32_t refs, OpKind kind, uint8_t depth, uint32_t from = kNone);
  // Starts tracking a symbol the table just placed (a version inherits its chain's due).
  // Here, inline: it runs once per placed buffer, and a call of its own cost 20 instructions.
  uint32_t track(SymbolId id, OpKind kind, uint8_t depth, uint32_t from) {
    Sym& s = syms_.emplace_back();  // syms_ and the table grow together: the same ids
    s.kind = kind;
    // Recorded now, for the stream's assembly and GeneratedProgram::symbols: a symbol's
    // placement never changes (a moved buffer is a new version, a new symbol).
    if (symbols_out_.size() == symbols_out_.capacity()) [[unlikely]]
      stop_stream();  // it would move
    const allocator::Placement pl = table_.placed(id);
    symbols_out_.push_back({static_cast<uint32_t>(pl.addr.value), static_cast<uint32_t>(pl.padded.value),
                            static_cast<uint32_t>(pl.size.value), table_.origin(id).value,
                            static_cast<uint16_t>(table_.version(id)), kind});
    s.depth = depth;
    s.written = static_cast<uint32_t>(pl.size.value);
    s.due = static_cast<uint32_t>(now() + rng_.range(p_.lifetime.min, p_.lifetime.max));
    if (from != kNone) s.due = syms_[from].due;  // a version is due when its chain is
    return id.value;
  }
  void release(uint32_t sym);  // frees it now
  void forget(uint32_t sym);   // the table freed it: remember its accesses, drop it from live_
  uint32_t pick_input(uint64_t min_written, bool compute);
  void drop_dead_dues();  // pick_input's bulk removal of dead entries from due_heap_
  bool pinned(uint32_t sym) const;
  uint32_t sample_refs() { return static_cast<uint32_t>(rng_.range(p_.fan_out.min, p_.fan_out.max)); }
  uint64_t sample_size(const SizeDist& d);
  uint64_t now() const { return emitted_; }
  // Bytes its producer writes, pending reads (live symbols only), where it is.
  uint64_t written(uint32_t sym) const { return syms_[sym].written; }
  uint32_t refs(uint32_t sym) const { return table_.uses(SymbolId{sym}); }
  allocator::Placement placement(uint32_t sym) const { return table_.placed(SymbolId{sym}); }

  // ops.cc
  void step();
  // refs 0 makes a dead load (no reader) only when `may_die`: an input fetched for an
  // immediate consumer always gets at least one reference.
  uint32_t load_fresh(uint64_t bytes, uint32_t refs, bool exact = true, bool may_die = false);
  // load_fresh of a sampled size and consumer count, drawn in a fixed order: as two arguments
  // of one call their order was the compiler's (GCC and Clang differed).
  uint32_t load_sampled(const SizeDist& sizes, bool may_die = false) {
    const uint32_t refs = sample_refs();
    return load_fresh(sample_size(sizes), refs, false, may_die);
  }
  bool store_of(uint32_t sym, bool consume, int64_t ddr_dst = -1, int64_t ddr_dep = -1);
  // The second halves of load_fresh and store_of, for a shape already chosen (rows x rb
  // bytes). `at_end`: the LOAD reads the last bytes of the DDR input region.
  uint32_t load_rows(const Bound& ld, uint32_t rows, uint32_t rb, uint32_t refs, bool may_die, bool at_end = false);
  bool store_rows(const Bound& st, uint32_t sym, uint32_t rows, uint32_t rb, bool consume, int64_t ddr_dst,
                  int64_t ddr_dep);
  void op_gemm();
  void op_im2col();
  void op_eltwise();
  // An ELTWISE's scale, shift and clamp bounds, drawn in that order (op_eltwise, extremes).
  void draw_eltwise_params(isa::Instruction& in, const Bound& g);
  void op_pool();
  void op_move();
  void op_lut();
  // oom.cc
  bool make_room(uint64_t padded);
  bool retire_one();
  bool compact(uint64_t padded);
  bool spill_one();
  void reload_one();
  // directed.cc
  void directed();
  // extremes.cc: `n` steps of zero-length operands at extreme addresses and maximum-length
  // operands (Directed::Extremes).
  void extremes(unsigned n);
  void extreme_gemm();
  void extreme_eltwise();
  void extreme_dma(bool many_rows);
  uint32_t extreme_address(const isa::FieldSpec& f);

  const isa::Isa& isa_;
  isa::ExtentChecks checks_;  // the fix-up's per-spec tables (emit)
  isa::NpuConfig npu_;
  const Profile& p_;
  GenOptions opt_;
  Roles roles_;  // the ISA's instructions per template
  // What the fields hold (gen/roles.h): the DMA shapes every LOAD and STORE takes, and the
  // longest len of a vector instruction (a sampled size never exceeds it).
  DmaLimits dma_limits_;
  uint64_t max_len_ = 0;
  Rng rng_;
  uint64_t limit_ = 0;  // instructions before the final halt
  uint64_t align_ = 64;
  DdrLayout ddr_;
  uint64_t out_cursor_ = 0;

  std::unique_ptr<allocator::Allocator> own_alloc_;          // unless opt.placer
  std::unique_ptr<allocator::Placer> own_placer_;  // the allocator, or a planted front end
  allocator::SymbolTable table_;

  std::vector<isa::Instruction> instrs_;
  // instrs_.size(), kept beside it (emit): the hot paths asked for it as a division by
  // sizeof(Instruction) (104).
  uint64_t emitted_ = 0;
  std::vector<SymRef> refs_;
  std::vector<Sym> syms_;
  std::vector<uint32_t> live_;  // live symbols with refs > 0, any order
  // Min-heap of (due, sym) packed as due << 32 | sym: one integer compare, the pair's order.
  std::vector<uint64_t> due_heap_;
  static uint64_t due_entry(uint32_t due, uint32_t sym) { return uint64_t{due} << 32 | sym; }
  static uint32_t due_of(uint64_t entry) { return static_cast<uint32_t>(entry >> 32); }
  static uint32_t sym_of(uint64_t entry) { return static_cast<uint32_t>(entry); }
  // Dead entries beyond the live ones before a drop (drop_dead_dues). Small: with 64, the
  // default profile spent 5 M instructions more popping dead entries at the front (1M
  // instructions) than dropping them sooner cost; tiny-buffers (thousands live) is the same.
  static constexpr size_t kDueHeapSlack = 4;
  std::array<uint32_t, 4> pin_{kNone, kNone, kNone, kNone};

  // Tokens: the happens-before of the program so far (isa/token_order.h).
  isa::TokenOrderBuilder order_;
  // Last access per alignment unit of freed bytes (queue sequence numbers), so that a new
  // writer waits for every earlier reader/writer of the bytes it reuses.
  ShadowClocks shadow_;

  struct Spilled {
    uint32_t sym;        // the dead symbol (its record keeps refs, depth, ...)
    uint32_t slot;
    uint32_t store;      // the spill STORE instruction
    uint32_t refs;       // consumers still to come
  };
  std::vector<Spilled> spilled_;
  std::vector<uint32_t> free_slots_;
  std::vector<int64_t> slot_reader_;  // reload LOAD of each slot's previous occupant

  GenSummary sum_;
  uint64_t placed_ = 0;          // successful placements, for the periodic allocator check
  uint64_t next_allocator_check_ = kAllocatorCheckPeriod;
  std::string allocator_check_;  // the first failed allocator check
  std::string header_;  // GeneratedProgram::header, known from the start (the stream's assembly)

  // GeneratedProgram::symbols, filled by track() (the stream's assembly names symbols from
  // it) and reserved up front like syms_, its pages faulted in during generation too.
  std::vector<SymbolInfo> symbols_out_;

  // Faults in the pages of instrs_, refs_, syms_, the table's records and symbols_out_ ahead
  // of their filling; last, so that its thread stops before any of them is freed.
  Prefaulter prefault_;
  std::array<size_t, 5> tracks_{};  // prefault_'s track of each, in that order
  void publish_fill();  // tells prefault_ how far each array is filled, and the stream what is final
  // Instructions no later one can change: each instruction of queue p that every other
  // queue's latest instruction already follows (a token is only added towards an
  // instruction its waiter does not follow yet, see emit()).
  uint64_t final_instructions() const;
  void stop_stream();  // before an array the stream reads could move, and at the end

  // The stream this generation feeds (GenOptions::stream) until it completes or stops it;
  // last, so that on an exception its thread stops before the arrays it reads are freed.
  struct StreamFeed {
    ProgramStream* stream = nullptr;
    ~StreamFeed();
  };
  StreamFeed feed_{opt_.stream};
};

}  // namespace npuforge::gen
