// The checkers' passes over the run maps (sim/hazard_map.h): the hazard checker's and the
// shadow's look at an access, in one pass over the runs of its bytes.
#include <algorithm>
#include <vector>

#include "sim/checkers.h"
#include "sim/hazard_map.h"
#include "sim/shadow.h"

namespace npuforge::sim {

// The hazard checker's work on one access: which earlier accesses of the bytes are unordered
// with it (collected by consider(), reported by report()).
class Checkers::HazardCheck {
 public:
  HazardCheck(Checkers& c, size_t instr, isa::Space space, bool write, unsigned q)
      : c_(c), instr_(instr), space_(space), write_(write), r1_(q == 0 ? 1 : 0), r2_(q == 2 ? 1 : 2),
        conflicts_(c.conflicts_) {
    conflicts_.clear();  // left over only by a report that threw
    static_assert(isa::kNumQueues == 3);  // the two other queues, named once (not a loop per run)
    // Per other queue r, the latest instruction of r known to happen before this one: every
    // earlier instruction of r does too (queues run in order), so most runs are settled by
    // a comparison instead of a TokenOrder query (random loads of two instructions' clocks).
    // Kept across the instruction's accesses (operands, a 2-D DMA's rows): it is a fact
    // about the instruction, not the access.
    if (c.settled_instr_ != instr) {
      c.settled_instr_ = instr;
      c.settled_.fill(-1);
      c.settled_exact_ = false;
    }
  }
  // Whether a page of several runs whose accesses of each queue are at most `latest` (the
  // hazard map's per-page summary) needs its runs checked: not when every one of them, of
  // both other queues, happens before this instruction (consider() would return at its
  // first comparison for each). A write replacing many runs of earlier buffers skips them.
  // Exact: settled_ is made the token order's answer (queue r's instructions up to
  // latest_before(instr, r) are the ones that happen before instr) before saying yes.
  bool look(const std::array<int32_t, isa::kNumQueues>& latest) {
    auto& before = c_.settled_;
    if (latest[r1_] <= before[r1_] && latest[r2_] <= before[r2_]) return false;
    if (c_.settled_exact_) return true;
    c_.settled_exact_ = true;  // once per instruction (two clock loads)
    before[r1_] = std::max(before[r1_], c_.order_->latest_before(instr_, r1_));
    before[r2_] = std::max(before[r2_], c_.order_->latest_before(instr_, r2_));
    return latest[r1_] > before[r1_] || latest[r2_] > before[r2_];
  }
  // Checks a run of the bytes against the accesses before this one.
  void operator()(uint64_t lo, uint64_t hi, const AccessSeg& seg) {
    consider(r1_, seg.last_write[r1_], true, lo, hi);
    if (write_) consider(r1_, seg.last_read[r1_], false, lo, hi);
    consider(r2_, seg.last_write[r2_], true, lo, hi);
    if (write_) consider(r2_, seg.last_read[r2_], false, lo, hi);
  }
  void report() {
    if (conflicts_.empty()) return;  // nearly always
    for (const auto& k : conflicts_) c_.report_hazard(instr_, space_, write_, k.other, k.other_wrote, k.lo, k.hi);
    conflicts_.clear();
  }

 private:
  void consider(unsigned r, int64_t other, bool other_write, uint64_t lo, uint64_t hi) {
    auto& before = c_.settled_;
    if (other <= before[r]) return;  // also other < 0: no access
    if (c_.order_->happens_before(static_cast<size_t>(other), instr_)) {
      before[r] = other;
      return;
    }
    if (c_.order_->happens_before(instr_, static_cast<size_t>(other))) return;
    for (auto& k : conflicts_) {
      if (k.other == other) {
        k.lo = std::min(k.lo, lo), k.hi = std::max(k.hi, hi), k.other_wrote |= other_write;
        return;
      }
    }
    conflicts_.push_back({other, lo, hi, other_write});
  }
  Checkers& c_;
  size_t instr_;
  isa::Space space_;
  bool write_;
  unsigned r1_, r2_;
  // Checkers::conflicts_, reused: a vector per access cost its set-up and tear-down
  // (~157k SRAM and 65k DDR accesses per 100k instructions) for a list nearly always empty.
  std::vector<HazardConflict>& conflicts_;
};

// A DDR row of a queue's instruction (kHazard).
void Checkers::check_ddr_hazard(const Event& e) {
  const unsigned q = e.queue;
  const bool write = e.flags & kWrite;
  HazardCheck check(*this, e.instr, isa::Space::Ddr, write, q);
  // Checked against the accesses before this one, then recorded, in one pass over the runs.
  const uint64_t lo = e.a, hi = e.a + e.b;
  const auto i = static_cast<int32_t>(e.instr);
  if (write) {
    ddr_hazards_->visit_record_write_untracked(lo, hi, q, i, check);
  } else {
    ddr_hazards_->visit_record_read(lo, hi, q, i, check);
  }
  check.report();
}

// Reads of [addr, inside_end) of bytes not written for the buffer the read names: `walk(f)`
// calls f(lo, hi, seg) for the runs of the range in address order (and maybe past it).
template <typename Walk>
void Checkers::check_unwritten(size_t instr, const ShadowAccess& sa, Walk&& walk) {
  // The first byte of [addr, inside_end) not written for `own`, and the stretch from it to
  // the next byte that is.
  const uint64_t inside_end = sa.inside_end;
  uint64_t bad = inside_end, good = inside_end;
  int32_t other = BufferIndex::kNone;
  walk([&](uint64_t lo, uint64_t, const WriterSeg& seg) {
    if (bad == inside_end) {
      if (seg.writer != sa.own) bad = lo, other = seg.writer;
    } else if (good == inside_end && seg.writer == sa.own) {
      good = lo;
    }
  });
  if (bad < inside_end) report_unwritten(instr, sa.own, bad, good, other);
}

// The shadow's and the hazard checker's look at an SRAM access, in one pass over the runs of
// its bytes: checked against the accesses before it, then recorded. Findings come in the
// order of the checkers apart: the shadow's (shadow_owner's, then a read of unwritten
// bytes), then the hazards.
void Checkers::check_sram_runs(const Event& e, ShadowAccess sa) {
  HazardMap& hz = *sram_runs_;
  const size_t instr = e.instr;
  const bool hazard = e.flags & kHazard;
  const bool shadowed = sa.own != BufferIndex::kNone;  // the shadow records this access
  const bool write = e.flags & kWrite;
  const unsigned q = hazard ? e.queue : 0;
  const int32_t i = static_cast<int32_t>(instr);
  const uint64_t lo = e.a, hi = e.a + e.b;
  if (!hazard) {  // the shadow alone
    if (!shadowed) return;
    if (write && !options_.hazard) return hz.record_writer_untracked(lo, sa.inside_end, sa.own);
    if (write) return hz.record_writer(lo, sa.inside_end, sa.own);
    return check_unwritten(instr, sa, [&](auto&& f) { hz.visit(lo, sa.inside_end, f); });
  }
  HazardCheck check(*this, instr, isa::Space::Sram, write, q);
  if (write) {
    if (shadowed) {
      hz.visit_record_write_by(lo, sa.inside_end, q, i, sa.own, check);
      if (sa.inside_end < hi) hz.visit_record_write(sa.inside_end, hi, q, i, check);
    } else if (shadow_on_) {
      hz.visit_record_write(lo, hi, q, i, check);
    } else {
      hz.visit_record_write_untracked(lo, hi, q, i, check);
    }
  } else if (shadowed) {
    check_unwritten(instr, sa, [&](auto&& f) {
      hz.visit_record_read(lo, hi, q, i, [&](uint64_t a, uint64_t b, const WriterSeg& seg) {
        check(a, b, seg);
        if (a < sa.inside_end) f(a, b, seg);
      });
    });
  } else {
    hz.visit_record_read(lo, hi, q, i, check);
  }
  check.report();
}

}  // namespace npuforge::sim
