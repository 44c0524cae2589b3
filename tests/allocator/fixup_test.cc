// The fix-up pass: symbol fields become placed addresses; an operand reaching outside its
// symbol's node is an error naming the instruction, field and symbol.
#include "allocator/fixup.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "util/error.h"
#include "util/rng.h"
#include "isa/extent_checks.h"
#include "isa/isa.h"

namespace npuforge::allocator {
namespace {

const isa::Isa& isa_() { return isa::builtin_isa(); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

unsigned slot(std::string_view mnemonic, std::string_view field) {
  return isa_().require(mnemonic).require_field(field);
}

TEST(Fixup, RewritesEverySymbolFieldFromTheTable) {
  Allocator a(SramAddr{0}, Bytes{1 << 16}, Bytes{64}, Policy::FirstFit);
  SymbolTable t(a);
  ASSERT_TRUE(t.define("pad", Bytes{64}).ok());
  const auto act = t.define("act0", Bytes{1024}, 1);  // LOAD writes it, GEMM reads it
  const auto w = t.define("w0", Bytes{1024}, 1);
  const auto out = t.define("out", Bytes{256}, 1);
  auto prog = isa::assemble(isa_(),
                            "load %act0, ddr:0x1000, rows=4, row_bytes=256, stride=256\n"
                            "load %w0, ddr:0x2000, rows=1, row_bytes=1024\n"
                            "gemm %out, %act0, %w0, m=16, n=16, k=64\n"
                            "eltwise %out+128, %out, len=128, op=relu\n",
                            "fix.s");
  ASSERT_EQ(prog.symbol_refs.size(), 7u);
  fixup(prog, t);
  EXPECT_TRUE(prog.symbol_refs.empty());
  EXPECT_EQ(prog.instrs[0].get(slot("load", "dst")), act.addr.value);
  EXPECT_EQ(prog.instrs[1].get(slot("load", "dst")), w.addr.value);
  EXPECT_EQ(prog.instrs[2].get(slot("gemm", "dst")), out.addr.value);
  EXPECT_EQ(prog.instrs[2].get(slot("gemm", "a")), act.addr.value);  // same symbol, same node
  EXPECT_EQ(prog.instrs[2].get(slot("gemm", "b")), w.addr.value);
  EXPECT_EQ(prog.instrs[3].get(slot("eltwise", "dst")), out.addr.value + 128);
  EXPECT_NE(act.addr, w.addr);
}

TEST(Fixup, UseBeforeDefineNamesInstructionFieldSymbol) {
  Allocator a(SramAddr{0}, Bytes{1 << 16}, Bytes{64}, Policy::FirstFit);
  SymbolTable t(a);
  t.define("x", Bytes{64});
  auto prog = isa::assemble(isa_(), "nop\nmove %x, %y, len=64\n", "u.s");
  const auto before = prog.instrs;
  const std::string e = error_of([&] { fixup(prog, t); });
  EXPECT_NE(e.find("instruction 1"), std::string::npos) << e;
  EXPECT_NE(e.find("'move'"), std::string::npos) << e;
  EXPECT_NE(e.find("field 'src'"), std::string::npos) << e;
  EXPECT_NE(e.find("'%y'"), std::string::npos) << e;
  EXPECT_NE(e.find("before define"), std::string::npos) << e;
  EXPECT_EQ(prog.instrs, before);  // all or nothing
  EXPECT_EQ(prog.symbol_refs.size(), 2u);
}

TEST(Fixup, ExtentOutsideTheNodeIsCaught) {
  // 200 bytes reserve a 256-byte node; 256 bytes fit, 257 do not, and neither does an
  // offset that pushes the operand past the node's end.
  std::map<std::string, Placement> placed{{"buf", {SramAddr{0x400}, Bytes{200}, Bytes{256}}}};
  auto fits = isa::assemble(isa_(), "move %buf, 0x0, len=256\n", "ok.s");
  fixup(fits, placed);
  EXPECT_EQ(fits.instrs[0].get(slot("move", "dst")), 0x400u);

  auto over = isa::assemble(isa_(), "move %buf, 0x0, len=257\n", "over.s");
  std::string e = error_of([&] { fixup(over, placed); });
  EXPECT_NE(e.find("field 'dst'"), std::string::npos) << e;
  EXPECT_NE(e.find("'%buf'"), std::string::npos) << e;
  EXPECT_NE(e.find("[0x400, 0x501)"), std::string::npos) << e;
  EXPECT_NE(e.find("node [0x400, 0x500)"), std::string::npos) << e;

  auto shifted = isa::assemble(isa_(), "eltwise %buf+192, 0x0, len=128, op=relu\n", "shift.s");
  e = error_of([&] { fixup(shifted, placed); });
  EXPECT_NE(e.find("instruction 0"), std::string::npos) << e;
  EXPECT_NE(e.find("[0x4c0, 0x540)"), std::string::npos) << e;

  // The assembler has no %name-off syntax; a negative offset can still come from code.
  auto under = isa::assemble(isa_(), "eltwise %buf, 0x0, len=64, op=relu\n", "under.s");
  under.symbol_refs.at(0).offset = -64;
  e = error_of([&] { fixup(under, placed); });
  EXPECT_NE(e.find("[0x3c0, 0x400)"), std::string::npos) << e;
  EXPECT_NE(e.find("leave the symbol's node"), std::string::npos) << e;
}

TEST(Fixup, AddressMustFitTheField) {
  std::map<std::string, Placement> placed{{"hi", {SramAddr{0xffffffc0u}, Bytes{64}, Bytes{64}}}};
  auto prog = isa::assemble(isa_(), "move %hi, 0x0, len=64\n", "f.s");
  const std::string e = error_of([&] { fixup(prog, placed); });
  EXPECT_NE(e.find("does not fit the field"), std::string::npos) << e;
}

// The id form (the generator's): placements from the table, freed symbols at their last
// placement, the same extent check, all or nothing, references in any order.
TEST(Fixup, ByIdUsesLastPlacementsAndChecksExtents) {
  Allocator a(SramAddr{0}, Bytes{1 << 16}, Bytes{64}, Policy::FirstFit);
  SymbolTable t(a);
  t.set_namer([](SymbolId origin) { return "g" + std::to_string(origin.value); });
  const auto x = t.define_new(Bytes{200}, 1);
  const auto y = t.define_new(Bytes{256}, 1);
  auto prog = isa::assemble(isa_(), "move 0x0, 0x0, len=200\nmove 0x0, 0x0, len=256\n", "id.s");
  const unsigned dst = slot("move", "dst"), src = slot("move", "src");
  // Out of instruction order, and both symbols freed by the time of the fix-up. The
  // second move writes 256 bytes into x's 200: inside its padded node.
  const std::vector<SymbolField> refs = {{1, x.id, uint8_t(dst), true}, {0, x.id, uint8_t(src), false},
                                         {0, y.id, uint8_t(dst), true}};
  t.release(x.id);
  t.release(y.id);
  fixup(prog.instrs, refs, t);
  EXPECT_EQ(prog.instrs[0].get(src), x.alloc.addr.value);
  EXPECT_EQ(prog.instrs[0].get(dst), y.alloc.addr.value);
  EXPECT_EQ(prog.instrs[1].get(dst), x.alloc.addr.value);

  // 257 bytes into x's 256-byte node: caught, named, and nothing written.
  auto over = isa::assemble(isa_(), "move 0x0, 0x0, len=64\nmove 0x0, 0x0, len=257\n", "over.s");
  const auto before = over.instrs;
  const std::vector<SymbolField> bad = {{0, y.id, uint8_t(dst), true}, {1, x.id, uint8_t(dst), true}};
  const std::string e = error_of([&] { fixup(over.instrs, bad, t); });
  EXPECT_NE(e.find("instruction 1 'move', field 'dst', symbol '%g0'"), std::string::npos) << e;
  EXPECT_NE(e.find("257 bytes"), std::string::npos) << e;
  EXPECT_NE(e.find("leave the symbol's node"), std::string::npos) << e;
  EXPECT_EQ(over.instrs, before);

  // A symbol never placed is a use before define.
  const SymbolId ghost = t.intern("ghost");
  const std::vector<SymbolField> unplaced = {{0, ghost, uint8_t(src), false}};
  EXPECT_NE(error_of([&] { fixup(over.instrs, unplaced, t); }).find("'%ghost': use before define"),
            std::string::npos);
  const std::vector<SymbolField> missing = {{7, x.id, uint8_t(src), false}};
  EXPECT_NE(error_of([&] { fixup(over.instrs, missing, t); }).find("instruction 7 field slot"), std::string::npos);
  // More references to one instruction than it has fields: some field is named twice.
  const size_t fields = isa_().require("move").fields.size();
  const std::vector<SymbolField> crowded(fields + 1, SymbolField{0, x.id, uint8_t(src), false});
  EXPECT_NE(error_of([&] { fixup(over.instrs, crowded, t); })
                .find(fmt::format("instruction 0 has {} symbol references, more than its {} fields", fields + 1, fields)),
            std::string::npos);
  EXPECT_EQ(over.instrs, before);
}

// The generator's call: the references of one instruction, by id (a path of its own in
// fixup.cc). An operand past its node is caught and named, whichever reference fails, and
// the fields already rewritten are put back.
TEST(Fixup, ByIdOneInstructionChecksEveryOperand) {
  Allocator a(SramAddr{0}, Bytes{1 << 16}, Bytes{64}, Policy::FirstFit);
  SymbolTable t(a);
  t.set_namer([](SymbolId origin) { return "g" + std::to_string(origin.value); });
  const auto roomy = t.define_new(Bytes{320}, 1);
  const auto tight = t.define_new(Bytes{256}, 1);
  const unsigned dst = slot("move", "dst"), src = slot("move", "src");
  auto ok = isa::assemble(isa_(), "move 0x0, 0x0, len=256\n", "ok.s");
  const std::vector<SymbolField> fits = {{0, roomy.id, uint8_t(src), false}, {0, tight.id, uint8_t(dst), true}};
  fixup(ok.instrs, fits, t);
  EXPECT_EQ(ok.instrs[0].get(src), roomy.alloc.addr.value);
  EXPECT_EQ(ok.instrs[0].get(dst), tight.alloc.addr.value);
  // 257 bytes: one past the tight node's end, the write and then the read.
  for (const bool write_tight : {true, false}) {
    auto over = isa::assemble(isa_(), "move 0x0, 0x0, len=257\n", "over.s");
    const auto before = over.instrs;
    const SymbolId s = write_tight ? roomy.id : tight.id, d = write_tight ? tight.id : roomy.id;
    const std::vector<SymbolField> bad = {{0, s, uint8_t(src), false}, {0, d, uint8_t(dst), true}};
    const std::string e = error_of([&] { fixup(over.instrs, bad, t); });
    const std::string field = write_tight ? "dst" : "src";
    EXPECT_NE(e.find("instruction 0 'move', field '" + field + "', symbol '%g1'"), std::string::npos) << e;
    EXPECT_NE(e.find("257 bytes"), std::string::npos) << e;
    EXPECT_NE(e.find("leave the symbol's node"), std::string::npos) << e;
    EXPECT_EQ(over.instrs, before);
  }
  // Not placed, a missing field, a missing instruction: named, nothing written.
  auto prog = isa::assemble(isa_(), "move 0x0, 0x0, len=64\n", "p.s");
  const auto before = prog.instrs;
  const std::vector<SymbolField> unplaced = {{0, roomy.id, uint8_t(src), false}, {0, t.intern("ghost"), uint8_t(dst), true}};
  EXPECT_NE(error_of([&] { fixup(prog.instrs, unplaced, t); }).find("'%ghost': use before define"), std::string::npos);
  const std::vector<SymbolField> no_field = {{0, roomy.id, uint8_t(src), false}, {0, roomy.id, uint8_t(40), true}};
  EXPECT_NE(error_of([&] { fixup(prog.instrs, no_field, t); }).find("field slot 40"), std::string::npos);
  const std::vector<SymbolField> no_instr = {{3, roomy.id, uint8_t(src), false}};
  EXPECT_NE(error_of([&] { fixup(prog.instrs, no_instr, t); }).find("instruction 3 field slot"), std::string::npos);
  EXPECT_EQ(prog.instrs, before);
}

// The built-in ISA with move's dst extent made to read dst itself: 1 byte below 0x400.
isa::Isa isa_with_an_address_dependent_extent() {
  std::string yaml(isa::builtin_isa_yaml());
  const std::string from = "{field: dst, access: write, bytes: \"len\"}";
  const size_t at = yaml.find(from, yaml.find("- name: move"));
  if (at == std::string::npos) throw std::runtime_error("move's dst extent not found in the built-in ISA");
  yaml.replace(at, from.size(), "{field: dst, access: write, bytes: \"dst >= 0x400 ? len : 1\"}");
  return isa::Isa::load_string(yaml, "addr_extent.yaml");
}

// The same over an ISA whose extent reads an address field: the one-instruction id path
// evaluates it with the address it writes.
TEST(Fixup, ByIdOneInstructionExtentsSeeTheFixedUpAddresses) {
  const isa::Isa edited = isa_with_an_address_dependent_extent();
  Allocator a(SramAddr{0}, Bytes{1 << 16}, Bytes{64}, Policy::FirstFit);
  SymbolTable t(a);
  const auto low = t.define_new(Bytes{0x400}, 1);  // at 0
  const auto buf = t.define_new(Bytes{200}, 1);    // at 0x400, 256 bytes padded
  ASSERT_EQ(buf.alloc.addr.value, 0x400u);
  const unsigned dst = edited.require("move").require_field("dst");
  const std::vector<SymbolField> refs = {{0, buf.id, uint8_t(dst), true}};
  auto over = isa::assemble(edited, "move 0x0, 0x0, len=257\n", "over.s");
  EXPECT_NE(error_of([&] { fixup(over.instrs, refs, t); }).find("257 bytes"), std::string::npos);
  auto fits = isa::assemble(edited, "move 0x0, 0x0, len=256\n", "fits.s");
  fixup(fits.instrs, refs, t);
  EXPECT_EQ(fits.instrs[0].get(dst), 0x400u);
  (void)low;
}

// An extent that depends on an address field is evaluated with the address the fix-up
// writes, not the field's value before it (here 0, which would make the extent 1 byte).
TEST(Fixup, ExtentsSeeTheFixedUpAddresses) {
  const isa::Isa edited = isa_with_an_address_dependent_extent();
  std::map<std::string, Placement> placed{{"buf", {SramAddr{0x400}, Bytes{200}, Bytes{256}}}};
  auto over = isa::assemble(edited, "move %buf, 0x0, len=257\n", "over.s");
  const std::string e = error_of([&] { fixup(over, placed); });
  EXPECT_NE(e.find("257 bytes"), std::string::npos) << e;
  auto fits = isa::assemble(edited, "move %buf, 0x0, len=256\n", "fits.s");
  fixup(fits, placed);
  EXPECT_EQ(fits.instrs[0].get(edited.require("move").require_field("dst")), 0x400u);
}


// The generator's call through the per-spec tables (isa/extent_checks.h) decides exactly as
// the general id path, on random instructions of every spec with SRAM operands and random
// buffer sizes around their extents: the same instructions when both accept, the same
// error and an unchanged program when the general path rejects.
TEST(Fixup, PlannedOneInstructionDecidesAsTheGeneralPath) {
  const isa::ExtentChecks checks(isa_());
  Allocator a(SramAddr{0}, Bytes{1 << 23}, Bytes{64}, Policy::FirstFit);
  SymbolTable t(a);
  Rng rng(11);
  int accepted = 0, rejected = 0;
  for (const isa::InstrSpec& spec : isa_().instructions()) {
    std::vector<unsigned> sram;
    for (unsigned f = 0; f < spec.fields.size(); ++f)
      if (spec.fields[f].kind == isa::FieldKind::SramAddr) sram.push_back(f);
    if (sram.empty()) continue;
    for (int round = 0; round < 300; ++round) {
      isa::Instruction in = isa::Instruction::make(spec);
      for (unsigned f = 3; f < spec.fields.size(); ++f) {
        const unsigned w = std::min(spec.fields[f].width, 6u);  // small shapes: extents near buffer sizes
        if (spec.fields[f].kind != isa::FieldKind::SramAddr) in.raw[f] = static_cast<uint32_t>(rng.below(1u << w));
      }
      std::vector<SymbolField> refs;
      for (const unsigned f : sram) {
        uint64_t bytes = 1;
        for (const isa::OperandSpec& o : spec.operands)
          if (o.field == f) bytes = std::max<int64_t>(1, std::max<int64_t>(int64_t(bytes), o.bytes.eval(in.raw)));
        bytes = std::max<uint64_t>(1, bytes + rng.below(129) - 64);  // around the extent: fits or not
        const auto d = t.define_new(Bytes{std::min<uint64_t>(bytes, 1 << 22)}, 1);  // larger: rejected
        ASSERT_TRUE(d.ok()) << bytes;
        refs.push_back({0, d.id, uint8_t(f), false});
        t.release(d.id);  // its last placement stays; the allocator gets the bytes back
      }
      std::vector<isa::Instruction> general{in}, planned{in};
      const std::string e = error_of([&] { fixup(std::span<isa::Instruction>(general), refs, t); });
      const std::string p = error_of([&] { fixup(std::span<isa::Instruction>(planned), refs, t, checks); });
      ASSERT_EQ(p, e) << spec.mnemonic << " round " << round;
      ASSERT_EQ(planned, general) << spec.mnemonic << " round " << round;
      if (e == "(no error)") {
        ++accepted;
      } else {
        ++rejected;
        EXPECT_EQ(planned[0], in);
      }
    }
  }
  EXPECT_GT(accepted, 200);
  EXPECT_GT(rejected, 200);
}

// The same cases as ByIdOneInstructionChecksEveryOperand through the tables, and an
// instruction of another ISA object (no table: the general path).
TEST(Fixup, PlannedOneInstructionChecksEveryOperand) {
  const isa::ExtentChecks checks(isa_());
  Allocator a(SramAddr{0}, Bytes{1 << 16}, Bytes{64}, Policy::FirstFit);
  SymbolTable t(a);
  t.set_namer([](SymbolId origin) { return "g" + std::to_string(origin.value); });
  const auto roomy = t.define_new(Bytes{320}, 1);
  const auto tight = t.define_new(Bytes{256}, 1);
  const unsigned dst = slot("move", "dst"), src = slot("move", "src");
  auto ok = isa::assemble(isa_(), "move 0x0, 0x0, len=256\n", "ok.s");
  const std::vector<SymbolField> fits = {{0, roomy.id, uint8_t(src), false}, {0, tight.id, uint8_t(dst), true}};
  fixup(ok.instrs, fits, t, checks);
  EXPECT_EQ(ok.instrs[0].get(src), roomy.alloc.addr.value);
  EXPECT_EQ(ok.instrs[0].get(dst), tight.alloc.addr.value);
  for (const bool write_tight : {true, false}) {
    auto over = isa::assemble(isa_(), "move 0x0, 0x0, len=257\n", "over.s");
    const auto before = over.instrs;
    const SymbolId s = write_tight ? roomy.id : tight.id, d = write_tight ? tight.id : roomy.id;
    const std::vector<SymbolField> bad = {{0, s, uint8_t(src), false}, {0, d, uint8_t(dst), true}};
    const std::string e = error_of([&] { fixup(over.instrs, bad, t, checks); });
    EXPECT_NE(e.find("257 bytes"), std::string::npos) << e;
    EXPECT_EQ(over.instrs, before);
  }
  const isa::Isa other = isa::Isa::load_string(isa::builtin_isa_yaml(), "copy.yaml");
  auto foreign = isa::assemble(other, "move 0x0, 0x0, len=257\n", "foreign.s");
  const std::vector<SymbolField> bad = {{0, roomy.id, uint8_t(src), false}, {0, tight.id, uint8_t(dst), true}};
  EXPECT_NE(error_of([&] { fixup(foreign.instrs, bad, t, checks); }).find("257 bytes"), std::string::npos);
  // An extent reading the address being written: the tables evaluate it with that address.
  const isa::Isa edited = isa_with_an_address_dependent_extent();
  const isa::ExtentChecks edited_checks(edited);
  Allocator a2(SramAddr{0}, Bytes{1 << 16}, Bytes{64}, Policy::FirstFit);
  SymbolTable t2(a2);
  const auto low = t2.define_new(Bytes{0x400}, 1);
  (void)low;
  const auto buf = t2.define_new(Bytes{200}, 1);  // at 0x400, 256 bytes padded
  const std::vector<SymbolField> refs = {{0, buf.id, uint8_t(dst), true}};
  auto addr_over = isa::assemble(edited, "move 0x0, 0x0, len=257\n", "over.s");
  EXPECT_NE(error_of([&] { fixup(addr_over.instrs, refs, t2, edited_checks); }).find("257 bytes"), std::string::npos);
}

}  // namespace
}  // namespace npuforge::allocator
