#include "gen/output.h"

#include <algorithm>
#include <exception>
#include <future>

#include <fmt/format.h>

#include "bundle/listing.h"
#include "bundle/text_sink.h"

namespace npuforge::gen {
namespace {

constexpr bundle::BundleFile kAsm = bundle::BundleFile::kAssembly, kBin = bundle::BundleFile::kBinary,
                             kHex = bundle::BundleFile::kReadmemh, kMemmap = bundle::BundleFile::kMemmap,
                             kDdr = bundle::BundleFile::kDdr;

}  // namespace

std::string symbol_name(OpKind origin_kind, uint32_t origin, uint32_t version) {
  char name[kMaxSymbolBytes];
  return std::string(name, write_symbol(name, origin_kind, origin, version));
}

std::string GeneratedProgram::symbol_name(uint32_t symbol) const {
  const SymbolInfo& s = symbols[symbol];
  return gen::symbol_name(s.kind, s.origin, s.version);
}

bundle::MemMap GeneratedProgram::memmap() const {
  bundle::MemMap map;
  map.header = header;
  map.sram_bytes = bundle.config.sram_bytes;
  map.alignment = bundle.config.alignment;
  map.instructions = static_cast<int64_t>(bundle.instrs.size());
  std::vector<int64_t> producer(symbols.size(), bundle::kNoProducer);
  std::vector<std::vector<int64_t>> consumers(symbols.size());
  for (const SymRef& r : refs) {
    const uint32_t sym = r.symbol.value;
    if (r.write) producer[sym] = r.instr;
    else if (consumers[sym].empty() || consumers[sym].back() != r.instr) consumers[sym].push_back(r.instr);
  }
  for (uint32_t i = 0; i < symbols.size(); ++i) {
    if (producer[i] == bundle::kNoProducer) continue;  // placed but never produced (length reached)
    bundle::MemBuffer b;
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

const bundle::Program& GeneratedProgram::with_memmap() {
  if (!bundle.memmap) bundle.memmap = memmap();
  return bundle;
}

// The whole file as one string, through the same writer as write_outputs' .s file
// (tests/gen/gen_output_test.cc checks they are equal byte for byte).
std::string to_assembly(const GeneratedProgram& p) {
  std::string out;
  bundle::StringSink sink(out);
  bundle::put_listing_head(sink, p.header, p.bundle.instrs.size(), kListingNote);
  for (size_t i = 0, r = 0; i < p.bundle.instrs.size(); ++i) {
    bundle::ListingLine line(sink, p.bundle.instrs[i]);
    for (; r < p.refs.size() && p.refs[r].instr == i; ++r) {
      const SymbolInfo& s = p.symbols[p.refs[r].symbol.value];
      line.operand(p.refs[r].field, kMaxSymbolBytes,
                   [&s](char* o) { return write_symbol(o, s.kind, s.origin, s.version); });
    }
    line.end();
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

OutputFiles::OutputFiles(const isa::Isa& isa, const std::filesystem::path& prefix)
    : isa_(isa), files_(prefix), words_(isa),
      stream_([this](const StreamView& v, StreamProgress done) { stream_files(v, done); }) {}

// On the stream's thread: the .s, .bin and .hex files while the program is generated.
void OutputFiles::stream_files(const StreamView& v, StreamProgress done) {
  util::BufferedWriter &s = files_.file(kAsm), &bin = files_.file(kBin), &hex = files_.file(kHex);
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
// scheduling. A write error is reported for the first file, in the bundle's order, that had one.
void OutputFiles::finish(const GeneratedProgram& p) {
  struct StopStream {  // whatever is thrown: the stream's thread reads `p`, which the caller may free
    ProgramStream& stream;
    ~StopStream() { stream.stop(); }
  } stop_stream{stream_};
  const std::vector<isa::Instruction>& instrs = p.bundle.instrs;
  if (stream_.started() && stream_.length() != instrs.size()) {
    // Cut short (a broken allocator ends generation early): the headers' count was wrong.
    stream_.stop();
    for (const bundle::BundleFile f : {kAsm, kBin, kHex}) files_.restart(f);
    assembly_ = AssemblyEmitter{};
    words_ = bundle::WordsEmitter{isa_};
  }
  std::exception_ptr assembly_error, words_error, rest_error;
  auto write_rest = [&] {
    try {
      emit_memmap(p, files_.file(kMemmap));
      files_.close(kMemmap);
      files_.file(kDdr).put(p.bundle.ddr_init);
      files_.close(kDdr);
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
      if (!words_.started()) words_.header(p.header, instrs.size(), files_.file(kHex));
      words_.emit(instrs, files_.file(kBin), files_.file(kHex));
      files_.close(kBin);
      files_.close(kHex);
    } catch (...) {
      words_error = std::current_exception();
    }
    if (!streamed) write_rest();
  });
  try {
    if (!assembly_.started()) assembly_.header(p.header, instrs.size(), files_.file(kAsm));
    assembly_.emit(instrs, p.refs, p.symbols.data(), files_.file(kAsm));
    files_.close(kAsm);
  } catch (...) {
    assembly_error = std::current_exception();
  }
  words.get();
  for (const std::exception_ptr& e : {assembly_error, words_error, rest_error})
    if (e) std::rethrow_exception(e);
  files_.commit();
}

void write_outputs(const isa::Isa& isa, const GeneratedProgram& p, const std::filesystem::path& prefix) {
  OutputFiles files(isa, prefix);
  files.finish(p);
}

}  // namespace npuforge::gen
