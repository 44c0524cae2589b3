#include "gen/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace npuforge::gen {

namespace {

// A madvise per chunk: few enough calls, and the stop request is seen within one.
constexpr size_t kChunkBytes = size_t{256} << 10;
// The generator fills ~250 MB/s of arrays: a fraction of kAheadBytes per nap.
constexpr auto kNap = std::chrono::microseconds(200);

size_t page_bytes() {
  const long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<size_t>(p) : 4096;
}

}  // namespace

Prefaulter::~Prefaulter() { stop(); }

size_t Prefaulter::add(const void* base, size_t bytes) {
  const size_t k = count_++;
  Track& t = tracks_.at(k);
  t.base = base;
  t.bytes = bytes;
  // Whole pages inside the storage only: the partial pages at its ends may hold other
  // allocations (populating those would be harmless, but is not this class's business).
  const size_t page = page_bytes();
  const auto addr = reinterpret_cast<uintptr_t>(base);
  const uintptr_t first = (addr + page - 1) / page * page, last = (addr + bytes) / page * page;
  t.first_page = std::min<size_t>(first - addr, bytes);
  t.end = last > first ? last - addr : t.first_page;
  t.done = t.first_page;
  return k;
}

void Prefaulter::start() {
#ifdef MADV_POPULATE_WRITE
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
#endif
}

void Prefaulter::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

bool Prefaulter::advance(Track& t) {
  const size_t used = t.used.load(std::memory_order_relaxed);
  if (used == kStopped || t.done >= t.end) return false;
  const size_t target = std::min(t.end, used + kAheadBytes);
  if (t.done + kChunkBytes > target && target != t.end) return false;  // a whole chunk at a time
  const size_t n = std::min(kChunkBytes, t.end - t.done);
#ifdef MADV_POPULATE_WRITE
  auto* start = const_cast<char*>(static_cast<const char*>(t.base)) + t.done;
  if (madvise(start, n, MADV_POPULATE_WRITE) != 0) {
    t.done = t.end;  // unsupported (EINVAL before Linux 5.14) or out of memory: leave it to the generator
    return false;
  }
#endif
  t.done += n;
  return true;
}

void Prefaulter::run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    bool any = false, left = false;
    for (size_t k = 0; k < count_; ++k) {
      any |= advance(tracks_[k]);
      left |= tracks_[k].done < tracks_[k].end && tracks_[k].used.load(std::memory_order_relaxed) != kStopped;
    }
    if (!left) return;  // every array faulted in (or no longer followed)
    if (!any) std::this_thread::sleep_for(kNap);
  }
}

}  // namespace npuforge::gen
