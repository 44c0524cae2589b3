// linked-list: the online baseline. Replays the lifetimes in time order (at equal times,
// deaths first, since lifetimes are half-open) through the SRAM Allocator of
// allocator/allocator.h, first-fit or best-fit; the peak is the highest end it reached.
#include <algorithm>
#include <bit>
#include <tuple>

#include <fmt/core.h>

#include "allocator/allocator.h"
#include "planner/planner.h"
#include "planner/planner_util.h"
#include "util/error.h"

namespace npuforge::planner {

using allocator::AllocResult;
using allocator::Allocator;
using allocator::NodeId;
using allocator::Policy;

PlanResult plan_linked_list(const PlanProblem& problem, ListFit fit) {
  reject_fixed_offsets(problem, "linked-list");
  const auto& bufs = problem.buffers;
  uint64_t align = 1, total = 0;
  for (const auto& b : bufs) {
    if (!std::has_single_bit(b.alignment.value))
      throw Error(fmt::format("planner linked-list: buffer '{}' alignment {} is not a power of two",
                              b.id, b.alignment.value));
    align = std::max(align, b.alignment.value);
  }
  for (const auto& b : bufs) total += align_to(std::max<uint64_t>(b.size.value, 1), align);
  // Room for the naive plan always suffices; the allocator's range is 32-bit.
  const uint64_t capacity = std::max(align, align_to(total, align));
  if (capacity > (uint64_t{1} << 32) - align)
    throw Error(fmt::format("planner linked-list: {} bytes of buffers exceed the 32-bit SRAM "
                            "range of the allocator", total));
  Allocator alloc(SramAddr{0}, Bytes{capacity}, Bytes{align},
                  fit == ListFit::kFirst ? Policy::FirstFit : Policy::BestFit);
  std::vector<std::tuple<TimeValue, int, size_t>> events;  // (time, 0 free / 1 alloc, i)
  std::vector<Offset> offsets(bufs.size(), 0);
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (bufs[i].size.value == 0 || bufs[i].lifespan.lower >= bufs[i].lifespan.upper) continue;
    events.emplace_back(bufs[i].lifespan.lower, 1, i);
    events.emplace_back(bufs[i].lifespan.upper, 0, i);
  }
  std::sort(events.begin(), events.end());
  std::vector<NodeId> nodes(bufs.size());
  for (const auto& [t, kind, i] : events) {
    if (kind == 0) {
      alloc.free(nodes[i]);
      continue;
    }
    const AllocResult r = alloc.alloc(bufs[i].size);
    if (!r) throw Error("planner linked-list: " + r.oom.message());  // cannot happen: room for all
    nodes[i] = r.node;
    offsets[i] = r.addr.value;
  }
  return finish(problem, std::move(offsets), problem.capacity);
}

}  // namespace npuforge::planner
