#pragma once
// Internal to the checkers: per byte of a memory, the last write and the last read of each
// queue (the hazard checker's FastTrack state: with a feed order consistent with
// happens-before, the last access per queue suffices) and, for SRAM, the buffer that last
// wrote it (the shadow's), as runs of equal bytes (run_map.h). One map for both checkers: an
// SRAM access is looked up and spliced once, not once per checker.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "isa/instruction.h"
#include "sim/run_map.h"

namespace npuforge::sim {

// The accesses of a run. Instruction indices, -1 for none (the checkers take at most
// INT32_MAX instructions).
struct AccessSeg {
  std::array<int32_t, isa::kNumQueues> last_write{-1, -1, -1};
  std::array<int32_t, isa::kNumQueues> last_read{-1, -1, -1};
  // As three 8-byte words: the defaulted one compared the arrays with a memcmp call, once
  // per run merged (coalesce), ~5% of the checkers' time; six int compares cost 2x this.
  // Inlined (these and WriterSeg's): GCC outlined them once the run map's splices grew
  // (+1.1 to 1.4 M Ir in calls).
  [[gnu::always_inline]] bool operator==(const AccessSeg& o) const { return diff(o) == 0; }
  [[gnu::always_inline]] uint64_t diff(const AccessSeg& o) const {
    std::array<uint64_t, 3> a, b;
    std::memcpy(a.data(), this, sizeof a);
    std::memcpy(b.data(), &o, sizeof b);
    return (a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]);
  }
};
static_assert(sizeof(AccessSeg) == 24 && std::is_trivially_copyable_v<AccessSeg>, "AccessSeg::diff reads three words");

// The accesses of an SRAM run and the shadow's last writer of its bytes (a memory-map buffer
// id, -1: never written or not tracked). The hazard operations leave the writer as it is.
struct WriterSeg : AccessSeg {
  int32_t writer = -1;
  [[gnu::always_inline]] bool operator==(const WriterSeg& o) const { return (diff(o) | static_cast<uint32_t>(writer ^ o.writer)) == 0; }
};
static_assert(sizeof(WriterSeg) == 28 && std::is_trivially_copyable_v<WriterSeg>);

// kWriter: the runs also hold the shadow's writer (SRAM); without it (DDR) a run is 24
// bytes, not 28, which the pages' moves and searches read less of.
template <bool kWriter>
class BasicHazardMap {
 public:
  using Seg = std::conditional_t<kWriter, WriterSeg, AccessSeg>;
  // Per queue, the latest instruction that accessed a page (-1: none): at least the
  // last_write and last_read of that queue in every run of the page.
  using Latest = std::array<int32_t, isa::kNumQueues>;

  explicit BasicHazardMap(uint64_t bytes)
      : runs_(bytes, Seg{}), shift_(static_cast<unsigned>(std::countr_zero(runs_.page_bytes()))) {}

  // Calls f(lo, hi, seg) for the runs of [lo, hi) in address order, clipped to [lo, hi).
  template <typename F>
  void visit(uint64_t lo, uint64_t hi, F&& f) const {
    runs_.visit(lo, hi, f);
  }
  // Queue q's instruction wrote [lo, hi): it now stands for every earlier access of these
  // bytes (an access unordered with one of them and later in the feed is unordered with this
  // write too), so the bytes hold just this write (and `writer`: the record_write* without
  // one keep the bytes' writer, the last one when a map tracks none sets -1 in one splice).
  void record_write(uint64_t lo, uint64_t hi, unsigned q, int32_t instr) {
    visit_record_write(lo, hi, q, instr, ignore);
  }
  // Queue q's instruction read [lo, hi).
  void record_read(uint64_t lo, uint64_t hi, unsigned q, int32_t instr) {
    note(lo, hi, q, instr);
    runs_.update(lo, hi, [&](Seg& s) { s.last_read[q] = instr; });
  }
  // visit(lo, hi, f) then record_write / record_read, in one pass over the runs. An f with
  // a member look(const Latest&) is not called for the runs of a page of several runs when
  // look(the page's Latest) is false (it says the page's accesses do not concern it).
  template <typename F>
  void visit_record_write(uint64_t lo, uint64_t hi, unsigned q, int32_t instr, F&& f) {
    note(lo, hi, q, instr);
    if constexpr (kWriter) {
      update_visit(lo, hi, f, [&](Seg& s) { s = written(q, instr, s.writer); });
    } else {
      assign_visit(lo, hi, f, written(q, instr, -1));
    }
  }
  // visit_record_write, the bytes' writer becoming `writer`.
  template <typename F>
  void visit_record_write_by(uint64_t lo, uint64_t hi, unsigned q, int32_t instr, int32_t writer, F&& f) {
    note(lo, hi, q, instr);
    assign_visit(lo, hi, f, written(q, instr, writer));
  }
  // visit_record_write in a map that tracks no writer (all -1): one run assigned.
  template <typename F>
  void visit_record_write_untracked(uint64_t lo, uint64_t hi, unsigned q, int32_t instr, F&& f) {
    note(lo, hi, q, instr);
    assign_visit(lo, hi, f, written(q, instr, -1));
  }
  // Turns the run map's fast paths and the pages' look() off (tests compare them with the
  // general path).
  void set_fast_paths(bool on) { runs_.set_fast_paths(on), look_ = on; }
  // The bytes' writer becomes `writer`, their accesses unchanged.
  void record_writer(uint64_t lo, uint64_t hi, int32_t writer) {
    runs_.update(lo, hi, [&](Seg& s) { s.writer = writer; });
  }
  // record_writer in a map that tracks no accesses (the hazard checker off): one run assigned.
  void record_writer_untracked(uint64_t lo, uint64_t hi, int32_t writer) {
    Seg s;
    s.writer = writer;
    runs_.assign(lo, hi, s);
  }
  template <typename F>
  void visit_record_read(uint64_t lo, uint64_t hi, unsigned q, int32_t instr, F&& f) {
    note(lo, hi, q, instr);
    update_visit(lo, hi, f, [&](Seg& s) { s.last_read[q] = instr; });
  }

 private:
  static Seg written(unsigned q, int32_t instr, int32_t writer) {
    Seg s;
    s.last_write[q] = instr;
    if constexpr (kWriter) s.writer = writer;
    return s;
  }
  static void ignore(uint64_t, uint64_t, const Seg&) {}
  // Queue q's instruction accesses [lo, hi): the pages' Latest.
  void note(uint64_t lo, uint64_t hi, unsigned q, int32_t instr) {
    if (!kSummary || lo >= hi) return;
    const uint64_t first = lo >> shift_, last = (hi - 1) >> shift_;
    if (last >= latest_.size()) latest_.resize(last + 1, Latest{-1, -1, -1});
    for (uint64_t p = first; p <= last; ++p) latest_[p][q] = std::max(latest_[p][q], instr);
  }
  // The run map's visit_assign / visit_update, with looker(f) when the pages are summarized.
  template <typename F>
  void assign_visit(uint64_t lo, uint64_t hi, F& f, const Seg& v) {
    if constexpr (kSummary) {
      runs_.visit_assign(lo, hi, f, v, looker(f));
    } else {
      runs_.visit_assign(lo, hi, f, v);
    }
  }
  template <typename F, typename G>
  void update_visit(uint64_t lo, uint64_t hi, F& f, G&& change) {
    if constexpr (kSummary) {
      runs_.visit_update(lo, hi, f, change, looker(f));
    } else {
      runs_.visit_update(lo, hi, f, change);
    }
  }
  // The run map's look(p): f.look(the page's Latest) when f has one, else true.
  template <typename F>
  auto looker(F& f) {
    return [this, &f](uint64_t p) {
      if constexpr (kSummary && requires(std::remove_reference_t<F>& g, const Latest& l) { g.look(l); }) {
        return !look_ || f.look(latest_[p]);  // note() made latest_ reach p
      } else {
        return true;
      }
    };
  }
  // Kept for DDR only: its rows' general path (a row over several runs) is where the skips
  // paid; in SRAM, keeping it cost more than it saved (bench_sim 100k: Checkers::flush
  // +3.7 M Ir over a DDR summary alone, the notes on every access and the code around them).
  static constexpr bool kSummary = !kWriter;
  RunMap<Seg> runs_;
  unsigned shift_;  // log2 of the run map's page size
  std::vector<Latest> latest_;  // per page of runs_, as far as the highest page accessed
  bool look_ = true;
};

using HazardMap = BasicHazardMap<true>;      // SRAM: with the shadow's writer
using DdrHazardMap = BasicHazardMap<false>;  // DDR: the accesses alone

}  // namespace npuforge::sim
