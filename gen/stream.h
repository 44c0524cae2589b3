#pragma once
// A program's finished part, handed to a consumer running on a thread of its own while the
// generator goes on (`npuforge gen` writes the assembly beside the generation instead of
// after it: the second core was idle for the whole generation).
//
// An instruction is final once no later one can add a signal bit to it: the generator
// publishes how many leading instructions are (see Builder::publish_fill) and how many
// operand references exist, and only appends to the arrays the consumer reads. At the end
// it publishes the whole program with complete(): the arrays move into the GeneratedProgram
// with their storage, and the consumer finishes its file beside the other writers. Before
// any of them could move (a vector outgrowing its reservation) or be freed (an error), the
// generator stops the stream instead (stop()); the writer then continues from where the
// consumer stopped, on the finished program.
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <thread>

#include "gen/generator.h"

namespace npuforge::gen {

// Where the arrays being filled are: they do not move while the stream runs.
struct StreamView {
  std::string header;                   // GeneratedProgram::header
  uint64_t length = 0;                  // instructions the program will have unless cut short
  const isa::Instruction* instrs = nullptr;
  const SymRef* refs = nullptr;
  const SymbolInfo* symbols = nullptr;  // naming fields (origin, version, kind) only
};

// What is final: instructions [0, instrs) with all their references among refs [0, refs).
struct StreamProgress {
  uint64_t instrs = 0, refs = 0;
};

class ProgramStream {
 public:
  // Called on the stream's thread, again each time more is final (progress only grows, a
  // bounded step at a time so that stop() is seen soon).
  using Consumer = std::function<void(const StreamView&, StreamProgress)>;
  explicit ProgramStream(Consumer consumer) : consumer_(std::move(consumer)) {}
  ~ProgramStream() { stop(); }
  ProgramStream(const ProgramStream&) = delete;
  ProgramStream& operator=(const ProgramStream&) = delete;

  // ---- The generator's side.
  void start(const StreamView& view);  // once; starts the thread
  void publish(StreamProgress p) {
    refs_.store(p.refs, std::memory_order_release);
    instrs_.store(p.instrs, std::memory_order_release);  // after the data and refs_
  }
  // The whole program is final: the consumer runs to its end, then the thread ends. The
  // arrays must stay where they are until wait() or stop() returns.
  void complete(StreamProgress p) {
    publish(p);
    complete_.store(true, std::memory_order_release);
  }
  // Ends the stream now, wherever the consumer is, and joins the thread (idempotent).
  // After it, the arrays may move or be freed.
  void stop();

  // ---- The writer's side.
  bool started() const { return thread_.joinable() || view_.instrs != nullptr; }
  // The instruction count the stream was started for (a program cut short has fewer).
  uint64_t length() const { return view_.length; }
  // Joins the thread: after the whole program when complete() was called, else at once.
  void wait();
  // The consumer's exception, if it threw (the stream stops calling it then): after wait().
  std::exception_ptr error() const { return error_; }

 private:
  void run(std::stop_token stop);

  Consumer consumer_;
  StreamView view_;
  std::atomic<uint64_t> instrs_{0}, refs_{0};
  std::atomic<bool> complete_{false};
  std::exception_ptr error_;
  std::jthread thread_;
};

}  // namespace npuforge::gen
