#include "gen/output.h"

#include <algorithm>
#include <array>
#include <exception>
#include <future>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "gen/output_writers.h"
#include "gen/stream.h"
#include "isa/assembler.h"
#include "util/buffered_writer.h"
#include "util/error.h"

namespace npuforge::gen {

std::string symbol_name(OpKind origin_kind, uint32_t origin, uint32_t version) {
  char name[kMaxSymbolBytes];
  return std::string(name, write_symbol(name, origin_kind, origin, version));
}

std::string GeneratedProgram::symbol_name(uint32_t symbol) const {
  const SymbolInfo& s = symbols[symbol];
  return gen::symbol_name(s.kind, s.origin, s.version);
}

allocator::MemMap GeneratedProgram::memmap() const {
  allocator::MemMap map;
  map.header = header;
  map.sram_bytes = npu.sram_bytes;
  map.alignment = npu.alignment;
  map.instructions = static_cast<int64_t>(instrs.size());
  std::vector<int64_t> producer(symbols.size(), allocator::kNoProducer);
  std::vector<std::vector<int64_t>> consumers(symbols.size());
  for (const SymRef& r : refs) {
    const uint32_t sym = r.symbol.value;
    if (r.write) producer[sym] = r.instr;
    else if (consumers[sym].empty() || consumers[sym].back() != r.instr) consumers[sym].push_back(r.instr);
  }
  for (uint32_t i = 0; i < symbols.size(); ++i) {
    if (producer[i] == allocator::kNoProducer) continue;  // placed but never produced (length reached)
    allocator::MemBuffer b;
    b.symbol = symbol_name(i);
    b.offset = SramAddr{symbols[i].addr};
    b.size = Bytes{symbols[i].padded};
    b.first = producer[i];
    b.last = consumers[i].empty() ? producer[i] : std::max(producer[i], consumers[i].back());
    b.producer = producer[i];
    b.consumers = std::move(consumers[i]);
    map.buffers.push_back(std::move(b));
  }
  return map;
}

// The whole file as one string, through the same isa::write_disassembly as write_outputs' .s
// file (tests/gen/gen_output_test.cc checks they are equal byte for byte).
std::string to_assembly(const GeneratedProgram& p) {
  std::string out = fmt::format("; {}\n; {} instructions; operand symbols are given in the comments\n", p.header,
                                p.instrs.size());
  for (size_t i = 0, r = 0; i < p.instrs.size(); ++i) {
    const isa::Instruction& in = p.instrs[i];
    isa::append_disassembly(out, in);
    for (const char* separator = "  ; "; r < p.refs.size() && p.refs[r].instr == i; ++r, separator = " ") {
      const SymbolInfo& s = p.symbols[p.refs[r].symbol.value];
      out += separator;
      out += in.spec->fields[p.refs[r].field].name;
      out += "=%";
      char name[kMaxSymbolBytes];
      out.append(name, write_symbol(name, s.kind, s.origin, s.version));
    }
    out += '\n';
  }
  return out;
}

std::string summary_line(const GeneratedProgram& p) {
  const GenSummary& s = p.summary;
  std::string events;
  for (unsigned k = 0; k < s.alloc_events.size(); ++k)
    events += fmt::format(" {}={}", allocator::to_string(static_cast<allocator::AllocEventKind>(k)), s.alloc_events[k]);
  return fmt::format(
      "gen: seed={} instructions={} buffers={} peak_sram={} tokens={} events:{} oom={} retired={} compact_moves={} "
      "spills={} reloads={} skipped={} directed={}",
      p.seed, s.instructions, s.buffers, s.peak_sram, s.tokens, events, s.oom, s.retired, s.compact_moves, s.spills,
      s.reloads, s.skipped, s.directed);
}

namespace {

// The five files, in the order they are created (so the first that cannot be created is the
// one reported) and renamed into place.
struct OutputFile {
  std::string_view suffix, what;
};
constexpr std::array<OutputFile, 5> kOutputs = {{{".s", "assembly"},
                                                 {".bin", "program binary"},
                                                 {".hex", "$readmemh image"},
                                                 {".memmap.yaml", "memory map"},
                                                 {".ddr.bin", "DDR image"}}};
enum FileIndex : size_t { kAsm, kBin, kHex, kMemmap, kDdr };

// Renames each written file into place; when one cannot be, removes those already renamed:
// the caller gets this run's five files or none.
void publish(const OutputFiles::Paths& temp, const OutputFiles::Paths& path) {
  for (size_t i = 0; i < path.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temp[i], path[i], ec);
    if (!ec) continue;
    const std::string why = ec.message();
    for (size_t j = 0; j < i; ++j) std::filesystem::remove(path[j], ec);
    throw Error(fmt::format("{}: cannot write {}: {}", path[i], kOutputs[i].what, why));
  }
}

}  // namespace

// Each file is written under a temporary name beside it and renamed into place once all five
// are written: a write error (a full disk, a directory in the way) leaves no half-written
// output and no mix of this run's files with an earlier run's.
OutputFiles::OutputFiles(const isa::Isa& isa, const std::filesystem::path& prefix)
    : isa_(isa), words_(isa), stream_([this](const StreamView& v, StreamProgress done) { stream_files(v, done); }) {
  for (size_t i = 0; i < kOutputs.size(); ++i) {
    path_[i] = prefix.string() + std::string(kOutputs[i].suffix);
    temp_[i] = path_[i] + ".tmp";
  }
  try {
    for (; created_ < kOutputs.size(); ++created_)
      files_[created_] = std::make_unique<util::BufferedWriter>(temp_[created_], kOutputs[created_].what);
  } catch (...) {
    remove_temporaries();
    throw;
  }
}

OutputFiles::~OutputFiles() {
  stream_.stop();  // before the files close
  if (!published_) remove_temporaries();
}

void OutputFiles::remove_temporaries() {
  std::error_code ignored;  // the error being reported is the one that matters
  for (size_t i = 0; i < created_; ++i) {
    files_[i].reset();
    std::filesystem::remove(temp_[i], ignored);
  }
}

// On the stream's thread: the .s, .bin and .hex files while the program is generated.
void OutputFiles::stream_files(const StreamView& v, StreamProgress done) {
  util::BufferedWriter &s = *files_[kAsm], &bin = *files_[kBin], &hex = *files_[kHex];
  if (!assembly_.started()) {
    assembly_.header(v.header, v.length, s);
    words_.header(v.header, v.length, hex);
  }
  assembly_.emit({v.instrs, done.instrs}, {v.refs, done.refs}, v.symbols, s);
  words_.emit({v.instrs, done.instrs}, bin, hex);
}

// The rest, once the program is complete. Streamed: the memory map and the DDR image here
// while the stream writes the end of the other three. What the stream did not write (all of
// it without one): the .bin and .hex on a second thread, the .s here. Each file is written by
// one thread at a time, from final instructions, so its bytes do not depend on the
// scheduling. A write error is reported for the first file, in kOutputs' order, that had one.
void OutputFiles::finish(const GeneratedProgram& p) {
  struct StopStream {  // whatever is thrown: the stream's thread reads `p`, which the caller may free
    ProgramStream& stream;
    ~StopStream() { stream.stop(); }
  } stop_stream{stream_};
  if (stream_.started() && stream_.length() != p.instrs.size()) {
    // Cut short (a broken allocator ends generation early): the headers' count was wrong.
    stream_.stop();
    for (const FileIndex i : {kAsm, kBin, kHex}) {
      files_[i].reset();
      files_[i] = std::make_unique<util::BufferedWriter>(temp_[i], kOutputs[i].what);
    }
    assembly_ = AssemblyEmitter{};
    words_ = WordsEmitter{isa_};
  }
  std::exception_ptr assembly_error, words_error, rest_error;
  auto write_rest = [&] {
    try {
      emit_memmap(p, *files_[kMemmap]);
      files_[kMemmap]->close();
      files_[kDdr]->put(p.ddr_image);
      files_[kDdr]->close();
    } catch (...) {
      rest_error = std::current_exception();
    }
  };
  const bool streamed = stream_.started();
  if (streamed) {
    write_rest();
    stream_.wait();  // the end of the three files, or where the stream stopped
    if (const std::exception_ptr e = stream_.error()) std::rethrow_exception(e);
  }
  // std::launch::deferred as well: libstdc++ starts a thread, and runs the task at get() on
  // this one only when no thread can be started.
  std::future<void> words = std::async(std::launch::async | std::launch::deferred, [&] {
    try {
      if (!words_.started()) words_.header(p.header, p.instrs.size(), *files_[kHex]);
      words_.emit(p.instrs, *files_[kBin], *files_[kHex]);
      files_[kBin]->close();
      files_[kHex]->close();
    } catch (...) {
      words_error = std::current_exception();
    }
    if (!streamed) write_rest();
  });
  try {
    if (!assembly_.started()) assembly_.header(p.header, p.instrs.size(), *files_[kAsm]);
    assembly_.emit(p.instrs, p.refs, p.symbols.data(), *files_[kAsm]);
    files_[kAsm]->close();
  } catch (...) {
    assembly_error = std::current_exception();
  }
  words.get();
  for (const std::exception_ptr& e : {assembly_error, words_error, rest_error})
    if (e) std::rethrow_exception(e);
  publish(temp_, path_);
  published_ = true;
}

void write_outputs(const isa::Isa& isa, const GeneratedProgram& p, const std::filesystem::path& prefix) {
  OutputFiles files(isa, prefix);
  files.finish(p);
}

}  // namespace npuforge::gen
