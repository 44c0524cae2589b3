#pragma once
// Internal to gen/: faults in, on a thread of its own, the pages of the big arrays the
// generator fills (instructions, operand references, symbols), a little ahead of the
// generator. A 1M-instruction program touches ~190 MB of fresh memory, and taking its ~50k
// page faults (each a kernel entry and a page clearing) on the generating thread was a
// third of gen's system time; the second core is idle while a program is generated.
//
// Only the timing of the faults changes: the kernel populates pages without changing their
// contents (madvise MADV_POPULATE_WRITE), so the program is the same bytes. Where that is
// not available, or fails, the generator takes its own faults as before.
#include <array>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace npuforge::gen {

class Prefaulter {
 public:
  // Arrays followed: each one gets a track (add()).
  static constexpr size_t kMaxTracks = 6;
  // How far beyond an array's filled part its pages are faulted in: several milliseconds of
  // generation, and at most this much memory touched that the program may not use.
  static constexpr size_t kAheadBytes = size_t{1} << 20;

  Prefaulter() = default;
  ~Prefaulter();  // stops the thread
  Prefaulter(const Prefaulter&) = delete;
  Prefaulter& operator=(const Prefaulter&) = delete;

  // Follows `v`'s reserved storage; call before start(), and publish() as `v` fills. The
  // storage must not move while followed (the generator reserves its arrays up front).
  size_t add(const void* base, size_t reserved_bytes);
  template <class T>
  size_t add(const std::vector<T>& v) {
    return add(v.data(), v.capacity() * sizeof(T));
  }
  void start();  // once, after the add()s
  // How much of track k's array is filled. An array that moved anyway (a vector that outgrew
  // its reservation) is no longer followed.
  void publish(size_t k, const void* base, size_t used_bytes) {
    Track& t = tracks_[k];
    t.used.store(base == t.base ? used_bytes : kStopped, std::memory_order_relaxed);
  }
  template <class T>
  void publish(size_t k, const std::vector<T>& v) {
    publish(k, v.data(), v.size() * sizeof(T));
  }
  void stop();  // joins the thread; the arrays may be freed after it

 private:
  static constexpr size_t kStopped = ~size_t{0};
  struct Track {
    const void* base = nullptr;
    size_t bytes = 0;                // the reserved storage
    size_t first_page = 0, end = 0;  // the page-aligned part of it, as offsets from base
    size_t done = 0;                 // faulted in up to here (offset from base)
    std::atomic<size_t> used{0};     // filled bytes (publish), or kStopped
  };
  bool advance(Track& t);  // faults in the next chunk when due; false when there was none
  void run(std::stop_token stop);

  std::array<Track, kMaxTracks> tracks_;
  size_t count_ = 0;
  std::jthread thread_;
};

}  // namespace npuforge::gen
