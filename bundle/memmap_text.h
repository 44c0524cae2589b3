#pragma once
// The memory map's text (the format bundle/memmap.h documents), a line at a time straight into
// a Sink (bundle/text_sink.h): the one spelling of its header and buffer lines, shared by
// MemMap::to_yaml and the generator's writer, which prints a million buffers from its own
// arrays without building a MemMap (gen/output_writers.cc).
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "util/text.h"

namespace npuforge::bundle {

// "# " before each line of `header`, then sram_bytes, alignment, instructions and the
// "buffers:" key ("buffers: []" when there are none).
template <class Sink>
void put_memmap_head(Sink& out, std::string_view header, uint64_t sram_bytes, uint64_t alignment,
                     int64_t instructions, bool any_buffers) {
  for (size_t pos = 0; pos < header.size();) {
    size_t end = header.find('\n', pos);
    if (end == std::string_view::npos) end = header.size();
    char* o = util::write_text(out.reserve(end - pos + 3), "# ");
    o = util::write_text(o, header.substr(pos, end - pos));
    *o++ = '\n';
    out.commit(o);
    pos = end + 1;
  }
  char* o = out.reserve(3 * util::kMaxDecDigits + 64);
  o = util::write_dec(util::write_text(o, "sram_bytes: "), sram_bytes);
  o = util::write_dec(util::write_text(o, "\nalignment: "), alignment);
  o = util::write_signed_dec(util::write_text(o, "\ninstructions: "), instructions);
  o = util::write_text(o, any_buffers ? "\nbuffers:\n" : "\nbuffers: []\n");
  out.commit(o);
}

// An instruction index: the generator's are unsigned, a MemMap's signed.
template <class Index>
char* write_index(char* out, Index v) {
  if constexpr (std::is_unsigned_v<Index>) return util::write_dec(out, v);
  else return util::write_signed_dec(out, v);
}

// One SRAM buffer: "  - {symbol: ld0, offset: 0x0, size: 448, first: 0, last: 1, producer: 0,
// consumers: [1]}". `write_symbol(char*)` puts the symbol as YAML writes it (quoted when it must
// be; at most `max_symbol_bytes`) and returns its end: the generator names its symbols from
// their numbers, with no string in between. No producer when `producer` is null, no consumers
// for none.
template <class Sink, class Index, class WriteSymbol>
void put_buffer_line(Sink& out, size_t max_symbol_bytes, WriteSymbol&& write_symbol, uint64_t offset, uint64_t size,
                     Index first, Index last, const Index* producer, std::span<const Index> consumers) {
  // The line without its symbol and consumers: 100 bytes of keys and punctuation, 16 hex
  // digits and four numbers of at most 21 characters (a sign and 20 digits).
  constexpr size_t kFixedBytes = 100 + 16 + 4 * 21;
  constexpr size_t kConsumerBytes = 2 + util::kMaxDecDigits + 1 + 3;  // ", N" and the closing "]}\n"
  char* o = write_symbol(util::write_text(out.reserve(kFixedBytes + max_symbol_bytes), "  - {symbol: "));
  o = util::write_hex(util::write_text(o, ", offset: 0x"), offset);
  o = util::write_dec(util::write_text(o, ", size: "), size);
  o = write_index(util::write_text(o, ", first: "), first);
  o = write_index(util::write_text(o, ", last: "), last);
  if (producer) o = write_index(util::write_text(o, ", producer: "), *producer);
  if (!consumers.empty()) {
    o = util::write_text(o, ", consumers: [");
    for (size_t c = 0; c < consumers.size(); ++c) {
      out.commit(o);
      o = out.reserve(kConsumerBytes);
      if (c != 0) o = util::write_text(o, ", ");
      o = write_index(o, consumers[c]);
    }
    *o++ = ']';
  }
  o = util::write_text(o, "}\n");
  out.commit(o);
}

}  // namespace npuforge::bundle
