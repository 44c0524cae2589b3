#include "gen/output.h"

#include <algorithm>
#include <array>
#include <exception>
#include <future>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "gen/output_writers.h"
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
using Paths = std::array<std::string, kOutputs.size()>;

// The .s file (the largest, a third of the bytes and the most work per byte) is written on a
// second thread, the other four on this one. Each file is written whole by one thread from
// the finished program, so its bytes do not depend on the scheduling. `created` counts the
// files opened, for the caller to remove on an error.
void write_files(const isa::Isa& isa, const GeneratedProgram& p, const Paths& path, size_t& created) {
  util::BufferedWriter s(path[0], kOutputs[0].what);
  ++created;
  util::BufferedWriter b(path[1], kOutputs[1].what);
  ++created;
  util::BufferedWriter h(path[2], kOutputs[2].what);
  ++created;
  util::BufferedWriter m(path[3], kOutputs[3].what);
  ++created;
  util::BufferedWriter d(path[4], kOutputs[4].what);
  ++created;
  // std::launch::deferred as well: libstdc++ starts a thread, and runs the task at get() on
  // this one only when no thread can be started.
  std::future<void> assembly = std::async(std::launch::async | std::launch::deferred, [&] {
    emit_assembly(p, s);
    s.close();
  });
  std::exception_ptr error;  // this thread's, reported after the .s file's
  try {
    emit_words(isa, p, b, h);
    b.close();
    h.close();
    emit_memmap(p, m);
    m.close();
    d.put(p.ddr_image);
    d.close();
  } catch (...) {
    error = std::current_exception();
  }
  assembly.get();
  if (error) std::rethrow_exception(error);
}

// Renames each written file into place; when one cannot be, removes those already renamed:
// the caller gets this run's five files or none.
void publish(const Paths& temp, const Paths& path) {
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
void write_outputs(const isa::Isa& isa, const GeneratedProgram& p, const std::filesystem::path& prefix) {
  Paths path, temp;
  for (size_t i = 0; i < kOutputs.size(); ++i) {
    path[i] = prefix.string() + std::string(kOutputs[i].suffix);
    temp[i] = path[i] + ".tmp";
  }
  size_t created = 0;
  try {
    write_files(isa, p, temp, created);
    publish(temp, path);
  } catch (...) {
    std::error_code ignored;  // the error being reported is the one that matters
    for (size_t i = 0; i < created; ++i) std::filesystem::remove(temp[i], ignored);
    throw;
  }
}

}  // namespace npuforge::gen
