#include "gen/stream.h"

#include <algorithm>
#include <chrono>

namespace npuforge::gen {

namespace {

// The generator publishes every few hundred instructions (~0.2 ms): the consumer naps
// about as long when it has caught up.
constexpr auto kNap = std::chrono::microseconds(200);
// A step of the consumer: ~1 ms of assembly, how soon a stop() is seen.
constexpr uint64_t kStepInstructions = 4096;

}  // namespace

void ProgramStream::start(const StreamView& view) {
  view_ = view;
  thread_ = std::jthread([this](std::stop_token stop) { run(stop); });
}

void ProgramStream::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

void ProgramStream::wait() {
  if (!thread_.joinable()) return;
  if (!complete_.load(std::memory_order_acquire)) thread_.request_stop();
  thread_.join();
}

void ProgramStream::run(std::stop_token stop) {
  try {
    StreamProgress seen;
    while (!stop.stop_requested()) {
      const bool complete = complete_.load(std::memory_order_acquire);  // before the counts it covers
      const uint64_t instrs = instrs_.load(std::memory_order_acquire);
      const uint64_t refs = refs_.load(std::memory_order_acquire);  // at least those instructions' refs
      if (instrs > seen.instrs) {
        seen = {std::min(instrs, seen.instrs + kStepInstructions), refs};
        consumer_(view_, seen);
      } else if (complete) {
        return;
      } else {
        std::this_thread::sleep_for(kNap);
      }
    }
  } catch (...) {
    error_ = std::current_exception();  // joined before anyone reads it
  }
}

}  // namespace npuforge::gen
