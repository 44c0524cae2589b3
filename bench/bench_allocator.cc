// Allocator throughput: one iteration = free one random live buffer + allocate a new one of
// a random size (an alloc+free pair), with <n> buffers live, for each policy and for a
// plain linear linked-list walk (first-fit with no index, the baseline) in the same run.
//   bench_allocator --benchmark_format=json     names: BM_<Policy>/<live nodes>
// The random sizes and victims are drawn before timing (npuforge::Rng), identical for
// every policy. After the table, each policy's CPU time per pair and its ratio to the linear
// walk at the same live count are printed on stderr.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "allocator/allocator.h"
#include "util/rng.h"

namespace {

using namespace npuforge;
using namespace npuforge::allocator;

constexpr uint64_t kAlign = 64;
constexpr size_t kTrace = 1 << 14;  // small, so the trace itself barely touches the cache

// The baseline: the same address-ordered node list, first-fit by walking it from the head,
// splitting and merging like Allocator, but with no index over free nodes.
class LinearWalk {
 public:
  LinearWalk(uint64_t base, uint64_t capacity) {
    head_ = make(base, capacity);
  }
  uint32_t alloc(uint64_t size) {
    size = (size + kAlign - 1) & ~(kAlign - 1);
    for (uint32_t n = head_; n != kNil; n = nodes_[n].next) {
      if (nodes_[n].in_use || nodes_[n].size < size) continue;  // skip used and too small
      if (nodes_[n].size > size) {
        const uint32_t r = make(nodes_[n].start + size, nodes_[n].size - size);
        nodes_[r].prev = n;
        nodes_[r].next = nodes_[n].next;
        if (nodes_[n].next != kNil) nodes_[nodes_[n].next].prev = r;
        nodes_[n].next = r;
        nodes_[n].size = size;
      }
      nodes_[n].in_use = true;
      return n;
    }
    return kNil;
  }
  void free(uint32_t n) {
    nodes_[n].in_use = false;
    const uint32_t q = nodes_[n].next;
    if (q != kNil && !nodes_[q].in_use) absorb(n, q);
    const uint32_t p = nodes_[n].prev;
    if (p != kNil && !nodes_[p].in_use) absorb(p, n);
  }
  static constexpr uint32_t kNil = UINT32_MAX;

 private:
  struct Node {
    uint64_t start, size;
    uint32_t prev = kNil, next = kNil;
    bool in_use = false;
  };
  uint32_t make(uint64_t start, uint64_t size) {
    uint32_t n;
    if (!spare_.empty()) {
      n = spare_.back();
      spare_.pop_back();
    } else {
      n = uint32_t(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[n] = Node{start, size};
    return n;
  }
  void absorb(uint32_t a, uint32_t b) {  // a takes b, its successor
    nodes_[a].size += nodes_[b].size;
    nodes_[a].next = nodes_[b].next;
    if (nodes_[b].next != kNil) nodes_[nodes_[b].next].prev = a;
    spare_.push_back(b);
  }
  std::vector<Node> nodes_;
  std::vector<uint32_t> spare_;
  uint32_t head_ = kNil;
};

struct Trace {
  std::vector<uint16_t> sizes;  // bytes
  std::vector<uint16_t> victims;
};

// Sizes 1..16 units, skewed small; the SRAM is 4x the expected live bytes so that every
// request fits and the list stays fragmented (live and free nodes interleaved).
Trace make_trace(size_t live) {
  Rng rng(0xA110C + live);
  Trace t;
  for (size_t i = 0; i < kTrace; ++i) {
    const uint64_t units = rng.chance(0.75) ? 1 + rng.below(4) : 1 + rng.below(16);
    t.sizes.push_back(uint16_t(units * kAlign));
    t.victims.push_back(uint16_t(rng.below(live)));
  }
  return t;
}

uint64_t capacity_for(size_t live) { return live * 16 * kAlign * 4; }

template <typename Impl, typename Handle, typename AllocFn, typename FreeFn>
void churn(benchmark::State& state, Impl& impl, AllocFn alloc, FreeFn free) {
  const size_t live = size_t(state.range(0));
  const Trace trace = make_trace(live);
  std::vector<Handle> held;
  for (size_t i = 0; i < live; ++i) held.push_back(alloc(impl, trace.sizes[i]));
  // Warm up into a fragmented steady state before timing.
  for (size_t i = 0; i < kTrace; ++i) {
    Handle& h = held[trace.victims[i]];
    free(impl, h);
    h = alloc(impl, trace.sizes[i]);
  }
  size_t i = 0;
  for (auto _ : state) {
    Handle& h = held[trace.victims[i]];
    free(impl, h);
    h = alloc(impl, trace.sizes[i]);
    i = (i + 1) & (kTrace - 1);
  }
  state.SetItemsProcessed(state.iterations());
}

void run_indexed(benchmark::State& state, Policy policy) {
  const size_t live = size_t(state.range(0));
  Allocator a(SramAddr{0}, Bytes{capacity_for(live)}, Bytes{kAlign}, policy);
  churn<Allocator, NodeId>(
      state, a,
      [](Allocator& x, uint64_t size) {
        AllocResult r = x.alloc(Bytes{size});
        if (!r.ok()) std::abort();  // the SRAM is sized so that this cannot happen
        return r.node;
      },
      [](Allocator& x, NodeId n) { x.free(n); });
  if (!a.check_invariants().empty()) state.SkipWithError("invariants broken");
  state.counters["free_nodes"] = double(a.stats().free_nodes);
}

void BM_FirstFit(benchmark::State& state) { run_indexed(state, Policy::FirstFit); }
void BM_BestFit(benchmark::State& state) { run_indexed(state, Policy::BestFit); }
void BM_NextFit(benchmark::State& state) { run_indexed(state, Policy::NextFit); }

void BM_LinearWalk(benchmark::State& state) {
  const size_t live = size_t(state.range(0));
  LinearWalk w(0, capacity_for(live));
  churn<LinearWalk, uint32_t>(
      state, w,
      [](LinearWalk& x, uint64_t size) {
        uint32_t n = x.alloc(size);
        if (n == LinearWalk::kNil) std::abort();
        return n;
      },
      [](LinearWalk& x, uint32_t n) { x.free(n); });
}

BENCHMARK(BM_FirstFit)->Arg(16)->Arg(256)->Arg(4096);
BENCHMARK(BM_BestFit)->Arg(16)->Arg(256)->Arg(4096);
BENCHMARK(BM_NextFit)->Arg(16)->Arg(256)->Arg(4096);
BENCHMARK(BM_LinearWalk)->Arg(16)->Arg(256)->Arg(4096);

// Passes runs on to the usual reporter and keeps each policy's CPU time per pair, so that the
// ratio to the linear walk at the same live count can be printed after the run (on stderr, so
// that --benchmark_format=json output stays one JSON document).
template <typename Base>
class RatioReporter : public Base {
 public:
  void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run>& runs) override {
    for (const auto& r : runs) {
      if (r.run_type == benchmark::BenchmarkReporter::Run::RT_Iteration && !r.error_occurred) {
        ns_.emplace_back(r.benchmark_name(), r.GetAdjustedCPUTime());
      }
    }
    Base::ReportRuns(runs);
  }
  void print_ratios() const {
    for (const auto& [name, ns] : ns_) {
      const auto slash = name.find('/');
      if (slash == std::string::npos || name.rfind("BM_LinearWalk", 0) == 0) continue;
      const std::string walk = "BM_LinearWalk" + name.substr(slash);
      for (const auto& [other, walk_ns] : ns_) {
        if (other == walk && ns > 0) {
          std::fprintf(stderr, "%-24s %8.1f ns/pair  linear walk %10.1f ns  ratio %.4f (walk / policy %.1f)\n",
                       name.c_str(), ns, walk_ns, ns / walk_ns, walk_ns / ns);
        }
      }
    }
  }

 private:
  std::vector<std::pair<std::string, double>> ns_;
};

template <typename Base>
int run(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter<Base> reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_ratios();
  benchmark::Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) json |= std::string_view(argv[i]) == "--benchmark_format=json";
  return json ? run<benchmark::JSONReporter>(argc, argv) : run<benchmark::ConsoleReporter>(argc, argv);
}
