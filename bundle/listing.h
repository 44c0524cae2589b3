#pragma once
// PREFIX.s of a program bundle (bundle/files.h): "; " before the header, "; N instructions; "
// before a note on what the comments say, then a line per instruction: its disassembly
// (`npuforge asm` turns the file back into the same .bin) and, after "  ; ", the buffer each
// SRAM operand names, "field=%symbol", with "+offset" when the operand starts inside the
// buffer rather than at its start. Written into a Sink (bundle/text_sink.h) a line at a time,
// so that the generator can stream it while generating (gen/output.h).
#include <cstdint>
#include <string>
#include <string_view>

#include "isa/assembler.h"
#include "isa/isa.h"
#include "util/text.h"

namespace npuforge::bundle {

template <class Sink>
void put_listing_head(Sink& out, std::string_view header, uint64_t instructions, std::string_view note) {
  char* o = util::write_text(out.reserve(header.size() + note.size() + util::kMaxDecDigits + 32), "; ");
  o = util::write_text(o, header);
  o = util::write_dec(util::write_text(o, "\n; "), instructions);
  o = util::write_text(o, " instructions; ");
  o = util::write_text(o, note);
  *o++ = '\n';
  out.commit(o);
}

// One instruction's line: the constructor writes its disassembly, operand() each note, end()
// the newline.
template <class Sink>
class ListingLine {
 public:
  ListingLine(Sink& out, const isa::Instruction& in)
      : out_(out), in_(in), o_(isa::write_disassembly(out.reserve(in.spec->max_line_bytes + 1), in)) {}
  ListingLine(const ListingLine&) = delete;
  ListingLine& operator=(const ListingLine&) = delete;

  // The operand in address field `field` names a buffer whose name `write_name(char*)` puts
  // (at most `max_name_bytes`, returning the end): the generator writes its symbols' names
  // from their numbers, with no string in between.
  template <class WriteName>
  void operand(unsigned field, size_t max_name_bytes, WriteName&& write_name, int64_t offset = 0) {
    out_.commit(o_);  // a line may carry any number of notes: room for each
    const std::string& name = in_.spec->fields[field].name;
    // "  ; " name "=%" symbol "+" offset, and the line's newline
    char* o = util::write_text(out_.reserve(4 + name.size() + 2 + max_name_bytes + 2 + util::kMaxDecDigits + 1),
                               separator_);
    separator_ = " ";
    o = util::write_text(o, name);
    *o++ = '=';
    *o++ = '%';
    o = write_name(o);
    if (offset != 0) {
      *o++ = '+';
      o = util::write_signed_dec(o, offset);
    }
    o_ = o;
  }
  void operand(unsigned field, std::string_view symbol, int64_t offset = 0) {
    operand(field, symbol.size(), [&](char* o) { return util::write_text(o, symbol); }, offset);
  }
  void end() {
    *o_++ = '\n';
    out_.commit(o_);
  }

 private:
  Sink& out_;
  const isa::Instruction& in_;
  char* o_;
  const char* separator_ = "  ; ";
};

}  // namespace npuforge::bundle
