#pragma once
// The dynamic checkers of a simulation run, fed by an executor through events:
//   on_start(i, time)     instruction i begins (after its waits were satisfied)
//   on_access(i, extent)  instruction i touches [extent.addr, +bytes) (call once per used
//                         operand; DDR extents are ignored by the SRAM checkers)
//   on_finish(i, time)    instruction i completes (its signals are sent)
//   on_end()              the run is over (reports waits/signals left unmatched)
// The golden executor feeds them in program order; a concurrent model in simulated-time
// order. The hazard checker only needs the feed order to be consistent with the
// happens-before order of the token structure (a model that honours tokens gives that;
// program order does too for programs whose waits name earlier signals).
//
// 1. Shadow memory: per scratchpad byte, which buffer owns it at instruction i (the memory
//    map buffer live at i whose [offset, offset + size) holds it) and which buffer last wrote
//    it. The buffer an operand names is the live buffer holding the operand's first byte.
//    Flags: bytes outside that buffer (other party: their owner), reads of bytes of the buffer
//    it has not written yet, an operand address whose only buffers are dead at i (after their
//    last use, or before their first), or no buffer at all.
// 2. Live-buffer overlap: when buffer B becomes live (instruction B.first), any byte of B that
//    belongs to another buffer live at B.first. A MOVE handing bytes over (the old buffer's
//    last use is the MOVE that produces the new one) is allowed: memmove defines the result.
// 3. Hazards: happens-before computed exactly from the token structure with vector clocks
//    (queues execute in order; the k-th wait of queue q on queue p is satisfied by the k-th
//    signal of p to q; sync/halt wait for everything before them and block everything after).
//    Any two SRAM accesses from different queues to intersecting bytes, one of them a write,
//    that are not ordered are a hazard; likewise for DDR (a STORE and a LOAD of the same
//    bytes, counting only the rows a 2-D DMA touches). Waits that no signal ever satisfies (or that wait in a
//    cycle) are a deadlock; signals no wait consumes are reported too. An executor that
//    starts an instruction before its token or barrier predecessor finished is an
//    OrderViolation (a bug in the model, not the program).
// 4. DDR ownership (memory maps with ddr_buffers, i.e. compiled models; sim/ddr_owner.h): a
//    STORE into bytes of another live DDR tensor, a LOAD of bytes last written for another
//    tensor; both tensors, the instruction and its start cycle are named. On with `shadow`.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "isa/instruction.h"
#include "isa/token_order.h"
#include "bundle/program.h"
#include "sim/semantics.h"

namespace npuforge::sim {

enum class FindingKind : uint8_t {
  OutsideBuffer,     // shadow: an operand touches bytes outside the buffer it names
  UnownedAccess,     // shadow: an operand's address belongs to no buffer of the map
  ReadUnwritten,     // shadow: a read of bytes its buffer has not written
  AfterLastUse,      // shadow: an access to a buffer after its last use
  BeforeFirstUse,    // shadow: an access to a buffer before its first use
  LiveOverlap,       // overlap: a buffer becomes live on bytes of another live buffer
  Hazard,            // hazard: unordered read/write or write/write between queues
  Deadlock,          // hazard: a wait that is never satisfied
  UnconsumedSignal,  // hazard: a signal that no wait consumes
  OrderViolation,    // executor started an instruction before a predecessor finished
  OutOfRange,        // executor: an operand outside SRAM or DDR
  DdrMismatch,       // final DDR differs from the golden model or the expected image
  RtlMismatch,       // rtl: the RTL decoder's fields differ from the C++ decoder's
  DdrClobber,        // ddr: a STORE writes bytes of another live DDR tensor (ddr_owner.h)
  DdrStaleRead,      // ddr: a LOAD reads bytes last written for another DDR tensor
};
inline constexpr size_t kNumFindingKinds = 15;  // FindingKind's values, 0 .. DdrStaleRead
std::string_view to_string(FindingKind);
// The checker a kind belongs to: "shadow", "overlap", "hazard", "executor", "golden", "rtl",
// "ddr".
std::string_view checker_of(FindingKind);
// The kind whose to_string is `name` exactly; nullopt when none is.
std::optional<FindingKind> finding_kind_named(std::string_view name);

struct Finding {
  FindingKind kind = FindingKind::Hazard;
  int64_t instr = -1;  // instruction index, -1 when none
  std::string mnemonic;
  std::string symbol;  // buffer named by the instruction, when known
  isa::Space space = isa::Space::Sram;
  uint64_t addr = 0;  // byte range [addr, addr + bytes)
  uint64_t bytes = 0;
  int64_t other_instr = -1;  // the other party: an instruction ...
  std::string other_mnemonic;
  std::string other_symbol;  // ... and/or a buffer
  std::string detail;        // free text (what was expected)
};
// One line: "[hazard] #12 gemm %act0 sram[0x400, 0x500): write ... other: #9 load %w0".
std::string format(const Finding& f);

// Findings counted per kind (indexed by FindingKind).
using KindCounts = std::array<uint64_t, kNumFindingKinds>;
// "N finding(s): kind count ..." and the kept findings, one per line ("no findings" when
// `total` is 0): Checkers::summary, and the same text for findings read back from elsewhere.
std::string findings_summary(uint64_t total, const KindCounts& by_kind, std::span<const Finding> kept);

struct CheckerOptions {
  uint64_t max_errors = 100;  // findings kept (all are counted); 0 = unlimited
  bool shadow = true;
  bool overlap = true;
  bool hazard = true;
  // Events (on_start/on_access/on_finish) are logged and checked this many at a time, in one
  // loop where the checkers' structures stay in cache (a concurrent model's threads and
  // kernels evict them between two calls). Every query checks the logged events first, so
  // the findings do not depend on it; 1 checks each event as it comes. At most 65536 (more
  // is taken as 65536).
  size_t batch = 1024;
};

template <bool kWriter>
class BasicHazardMap;  // sim/hazard_map.h

// The token happens-before lives with the ISA (the generator's checks use it too).
using TokenOrder = isa::TokenOrder;

class Checkers {
 public:
  // `program` and `sem` must outlive the checkers.
  Checkers(const bundle::Program& program, const Semantics& sem, CheckerOptions options = {});
  ~Checkers();
  Checkers(const Checkers&) = delete;
  Checkers& operator=(const Checkers&) = delete;

  void on_start(size_t instr, uint64_t time);
  void on_access(size_t instr, const isa::Extent& extent);
  void on_finish(size_t instr, uint64_t time) {
    log({kFinish, 0, 0, 0, static_cast<uint32_t>(std::min<size_t>(instr, UINT32_MAX)), time, 0});
  }
  void on_end();
  // Convenience: on_access for every used operand of the instruction.
  void on_accesses(size_t instr);

  // Adds a finding from outside (out-of-range access, DDR mismatch), after the findings of
  // the events before it.
  void report(Finding f);

  // Each query first checks the events logged so far.
  const std::vector<Finding>& findings() const { return flushed().findings_; }  // at most max_errors
  uint64_t total() const { return flushed().total_; }                            // all, kept or not
  uint64_t count(FindingKind k) const { return flushed().by_kind_[static_cast<size_t>(k)]; }
  bool clean() const { return flushed().total_ == 0; }
  // Counts per kind and the kept findings, one per line.
  std::string summary() const;
  const TokenOrder& order() const { return *flushed().order_; }

 private:
  // One logged event: 24 bytes (an Extent is 32, with an operand index the checkers do not use).
  // An access is logged as the checks will take it, worked out while its instruction is in
  // the cache (the model has just read it): SRAM clipped to the scratchpad, DDR one event
  // per row a 2-D DMA touches, each with its instruction's queue, so that the checks load
  // no Instruction (a cache miss each, ~220k accesses per 100k instructions).
  enum EventKind : uint8_t { kStart, kFinish, kSram, kDdr };
  enum AccessFlag : uint8_t {
    kWrite = 1,   // the access writes
    kHazard = 2,  // the hazard checker looks at it (on, and the queue is not Control)
  };
  struct Event {
    EventKind kind;
    uint8_t field;  // kSram: the extent's address field (an unowned access names it)
    uint8_t flags;  // kSram/kDdr: AccessFlag
    uint8_t queue;  // kSram/kDdr: the instruction's queue
    uint32_t instr;
    uint64_t a;  // kStart/kFinish: time; kSram/kDdr: addr
    uint64_t b;  // kSram/kDdr: bytes (> 0, inside the memory)
  };
  // A slot of a fixed log, not a vector's push_back: the call that checks a full log is the
  // only one left, so the ~420k calls per 100k instructions save no registers.
  void log(const Event& e) {
    log_[logged_] = e;
    if (++logged_ == batch_) flush();
  }
  void log_ddr(uint32_t instr, const isa::Extent& e, uint8_t flags, uint8_t queue);  // its rows
  [[gnu::noinline]] void log_ddr_rows(uint32_t instr, uint64_t addr, uint64_t rows, uint64_t row_bytes,
                                      uint64_t stride, uint8_t flags, uint8_t queue);  // rows != 1
  void flush();  // checks the logged events in order and clears the log
  // The checkers with the logged events checked. A const query may check them: a Checkers
  // with logged events was not defined const (the events were logged through a non-const
  // reference), so casting the const away is sound, and the results are what they would be
  // had each event been checked when it came.
  const Checkers& flushed() const {
    if (logged_ != 0) const_cast<Checkers*>(this)->flush();
    return *this;
  }
  void do_start(size_t instr, uint64_t time);
  void do_sram(const Event& e);
  void do_ddr(const Event& e);
  [[gnu::noinline]] void check_ddr_owner(const Event& e);  // the DDR ownership checker's look
  void do_finish(size_t instr, uint64_t time) {
    if (instr < finish_time_.size()) finish_time_[instr] = time;
  }

  struct Shadow;
  class DdrOwner;
  void report_order(size_t instr, int64_t p, uint64_t time);
  void check_overlap_at(size_t instr);
  void check_overlaps(size_t instr, size_t b, std::span<const int32_t> cands);
  // What the shadow found out about an SRAM access before its runs are looked at: the buffer
  // the operand names (kNone: none, the access is not recorded) and the end of its part of
  // the access.
  struct ShadowAccess {
    int32_t own = -1;
    uint64_t inside_end = 0;
  };
  class HazardCheck;
  struct HazardConflict {  // HazardCheck's: an earlier access unordered with this one
    int64_t other;
    uint64_t lo, hi;
    bool other_wrote;
  };
  ShadowAccess shadow_owner(const Event& e);
  [[gnu::noinline]] ShadowAccess shadow_owner_slow(const Event& e);
  struct NamedBuffer {  // the buffer an operand names and its end
    int32_t id = -1;
    uint64_t end = 0;
  };
  NamedBuffer named_buffer(const Event& e);  // shadow_owner without the index's cache
  void report_outside(const Event& e, const NamedBuffer& own);
  void check_sram_runs(const Event& e, ShadowAccess sa);  // sa by value: in registers
  template <typename Walk>
  void check_unwritten(size_t instr, const ShadowAccess& sa, Walk&& walk);
  void report_unwritten(size_t instr, int32_t own, uint64_t bad, uint64_t good, int32_t other);
  void check_ddr_hazard(const Event& e);
  std::string symbol_at(uint64_t addr, size_t instr) const;  // live buffer holding addr
  void report_hazard(size_t instr, isa::Space space, bool write, int64_t other, bool other_wrote,
                     uint64_t lo, uint64_t hi);
  void add(Finding f);                  // report() without the flush: from the checks
  bool keeping() const;                 // another finding would still be kept
  void count_only(FindingKind kind);    // counts a finding beyond max_errors without building it
  Finding base(size_t instr, FindingKind kind) const;

  const bundle::Program* program_;
  const Semantics* sem_;
  CheckerOptions options_;
  size_t instrs_ = 0;         // program_->instrs.size()
  bool shadow_on_ = false;    // shadow_ && options_.shadow: the shadow looks at SRAM accesses
  bool overlap_on_ = false;   // shadow_ && options_.overlap: do_start's one test
  uint64_t sram_bytes_ = 0;
  uint64_t ddr_bytes_ = 0;
  std::unique_ptr<TokenOrder> order_;
  std::unique_ptr<Shadow> shadow_;
  // SRAM: the hazard checker's accesses and the shadow's last writer per byte (either on).
  std::unique_ptr<BasicHazardMap<true>> sram_runs_;
  std::unique_ptr<BasicHazardMap<false>> ddr_hazards_;  // DDR (spill/reload through DDR races too)
  std::unique_ptr<DdrOwner> ddr_owner_;   // DDR tensors of a compiled model's memory map
  std::vector<uint64_t> start_time_;      // per instruction, for the DDR findings
  std::vector<uint64_t> finish_time_;  // per instruction, UINT64_MAX until finished
  std::vector<uint8_t> started_;
  // HazardCheck's latest instruction per queue known to happen before settled_instr_.
  size_t settled_instr_ = SIZE_MAX;
  std::array<int64_t, isa::kNumQueues> settled_{};
  bool settled_exact_ = false;  // settled_ holds the token order's latest_before
  std::vector<HazardConflict> conflicts_;  // HazardCheck's, of the access being checked
  std::set<std::pair<size_t, size_t>> reported_pairs_;  // hazard/overlap de-duplication
  std::vector<Finding> findings_;
  uint64_t total_ = 0;
  std::array<uint64_t, 16> by_kind_{};
  bool ended_ = false;
  // Logged, not yet checked: log_[0, logged_), batch_ slots (options_.batch, at most
  // kMaxBatch: the findings do not depend on it).
  static constexpr size_t kMaxBatch = size_t{1} << 16;
  std::unique_ptr<Event[]> log_;
  size_t logged_ = 0;
  size_t batch_ = 1;
};

}  // namespace npuforge::sim
