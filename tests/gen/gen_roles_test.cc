// The generator's templates are bound to instructions from the ISA tables, not by
// mnemonic: a copy of an instruction under a new opcode and mnemonic (tests/data/
// isa_extra.yaml: `move2`, a copy of `move`; a copy of `gemm` made here) is generated with
// no code change, and the programs pass every static check; enum fields are drawn over the
// values the ISA lists and operands are sized by the ISA's expressions; an ISA lacking an
// instruction the profile needs is an error naming the template.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "gen/generator.h"
#include "gen/output.h"
#include "gen/program_check.h"
#include "gen/roles.h"
#include "isa/assembler.h"
#include "planner/plan_check.h"
#include "util/error.h"
#include "util/rng.h"

namespace npuforge::gen {
namespace {

const std::string kRoot = NPUFORGE_SOURCE_DIR;

Profile profile(const std::string& name) { return Profile::load_file(kRoot + "/configs/gen/" + name + ".yaml"); }

// The reference ISA's YAML with `edit` applied to the text of one instruction's entry.
std::string edited_isa(const std::string& mnemonic, const std::function<std::string(const std::string&)>& edit) {
  std::string text(isa::builtin_isa_yaml());
  const size_t at = text.find("  - name: " + mnemonic + "\n");
  const size_t end = text.find("\n\n", at);
  EXPECT_NE(at, std::string::npos);
  return text.substr(0, at) + edit(text.substr(at, end - at)) + text.substr(end);
}

// Generates `seeds` programs, checks each statically and by re-assembly with the same ISA,
// and counts the mnemonics used.
std::map<std::string, size_t> generate_and_check(const isa::Isa& isa, const Profile& p, uint64_t seeds, int64_t length) {
  std::map<std::string, size_t> used;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    GenOptions o;
    o.seed = seed;
    o.length = length;
    const GeneratedProgram g = generate(isa, isa::NpuConfig{}, p, o);
    const bundle::MemMap map = g.memmap();
    const auto plan = planner::check_memmap(map);
    EXPECT_TRUE(plan.ok()) << "seed " << seed << "\n" << plan.report();
    const auto prog = check_program(g.bundle.instrs, map, g.bundle.config.ddr_bytes.value);
    EXPECT_TRUE(prog.ok()) << "seed " << seed << "\n" << prog.report();
    const isa::AsmProgram back = isa::assemble(isa, to_assembly(g), "gen.s");
    EXPECT_EQ(isa::encode_program(isa, back.instrs), isa::encode_program(isa, g.bundle.instrs)) << "seed " << seed;
    for (const isa::Instruction& in : g.bundle.instrs) ++used[in.spec->mnemonic];
  }
  return used;
}

TEST(GenRoles, ReferenceIsaBindsOneInstructionPerTemplate) {
  const Roles roles(isa::builtin_isa(), profile("default"));
  const std::pair<OpKind, const char*> expected[] = {
      {OpKind::Load, "load"},       {OpKind::Store, "store"}, {OpKind::Gemm, "gemm"},
      {OpKind::Im2col, "im2col"},   {OpKind::Eltwise, "eltwise"}, {OpKind::Pool, "pool"},
      {OpKind::Move, "move"},       {OpKind::Lut, "lut"},     {OpKind::Nop, "nop"},
      {OpKind::Sync, "sync"}};
  for (auto [kind, mnemonic] : expected) {
    ASSERT_EQ(roles.of(kind).size(), 1u) << op_name(kind);
    EXPECT_EQ(roles.of(kind)[0].spec->mnemonic, mnemonic);
  }
  EXPECT_EQ(roles.halt().mnemonic, "halt");
  // Slots come from the field names: the store's SRAM side is its `src`, the load's `dst`.
  const Bound& st = roles.of(OpKind::Store)[0];
  EXPECT_EQ(st.field(dma::sram).name, "src");
  EXPECT_EQ(st.spec->operands[st.operand[dma::sram]].access, isa::Access::Read);
  EXPECT_EQ(roles.of(OpKind::Load)[0].field(dma::sram).name, "dst");
}

// The test ISA (tests/data/isa_extra.yaml): `move2` is a copy of `move` under opcode 0x16.
TEST(GenRoles, CopyOfMoveInTestIsaIsGenerated) {
  const isa::Isa extra = isa::Isa::load_file(kRoot + "/tests/data/isa_extra.yaml");
  const Roles roles(extra, profile("default"));
  ASSERT_EQ(roles.of(OpKind::Move).size(), 2u);
  EXPECT_EQ(roles.of(OpKind::Move)[1].spec->mnemonic, "move2");
  for (const char* name : {"default", "stress-fragment"}) {  // random moves; compaction moves
    const auto used = generate_and_check(extra, profile(name), 20, 400);
    EXPECT_GT(used.count("move2") ? used.at("move2") : 0, 10u) << name;
    EXPECT_GT(used.count("move") ? used.at("move") : 0, 10u) << name;
  }
}

TEST(GenRoles, CopyOfGemmIsGenerated) {
  const isa::Isa extra = isa::Isa::load_string(edited_isa("gemm",
                                                          [](const std::string& gemm) {
                                                            std::string copy = gemm;
                                                            copy.replace(copy.find("name: gemm"), 10, "name: gemm2");
                                                            copy.replace(copy.find("opcode: 0x10"), 12, "opcode: 0x16");
                                                            return gemm + "\n\n" + copy;
                                                          }),
                                               "gemm2.yaml");
  const auto used = generate_and_check(extra, profile("default"), 20, 400);
  EXPECT_GT(used.count("gemm2") ? used.at("gemm2") : 0, 20u);
  EXPECT_GT(used.count("gemm") ? used.at("gemm") : 0, 20u);
}

// Enum values and operand sizes come from the ISA: with only relu and clip listed for
// eltwise, every generated eltwise is one of them and, since b's expression then gives 0
// bytes, none reads a second operand.
TEST(GenRoles, EnumValuesAndOperandSizesComeFromTheIsa) {
  const isa::Isa unary = isa::Isa::load_string(edited_isa("eltwise",
                                                          [](std::string e) {
                                                            const std::string from = "{add: 0, mul: 1, relu: 2, clip: 3}";
                                                            e.replace(e.find(from), from.size(), "{relu: 2, clip: 3}");
                                                            return e;
                                                          }),
                                               "unary.yaml");
  const isa::InstrSpec& elt = unary.require("eltwise");
  const unsigned op = elt.require_field("op"), b = elt.require_field("b");
  size_t seen = 0;
  std::map<uint32_t, size_t> ops;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    GenOptions o;
    o.seed = seed;
    o.length = 400;
    const GeneratedProgram g = generate(unary, isa::NpuConfig{}, profile("default"), o);
    ASSERT_TRUE(check_program(g.bundle.instrs, g.memmap(), g.bundle.config.ddr_bytes.value).ok());
    for (const SymRef& r : g.refs)
      if (g.bundle.instrs[r.instr].spec == &elt) {
        EXPECT_NE(r.field, b) << "instruction " << r.instr << " reads b";
      }
    for (const isa::Instruction& in : g.bundle.instrs)
      if (in.spec == &elt) {
        ++ops[in.get(op)];
        ++seen;
      }
  }
  EXPECT_GT(seen, 50u);
  EXPECT_EQ(ops.size(), 2u);
  EXPECT_GT(ops[2], 0u);
  EXPECT_GT(ops[3], 0u);
}

// operand_bytes (the generator's sizing, Expr::eval on the raw fields) agrees with
// isa::extents on random field bits, signed fields included (an edited eltwise whose b
// covers hi - lo bytes).
TEST(GenRoles, OperandBytesAgreeWithExtents) {
  const isa::Isa signed_isa = isa::Isa::load_string(edited_isa("eltwise",
                                                               [](std::string e) {
                                                                 const std::string from = "\"op <= 1 ? len : 0\"";
                                                                 e.replace(e.find(from), from.size(), "\"hi - lo\"");
                                                                 return e;
                                                               }),
                                                    "signed.yaml");
  Rng rng(7);
  size_t negative = 0;
  for (const isa::Isa* isa : {&isa::builtin_isa(), &signed_isa})
    for (const isa::InstrSpec& spec : isa->instructions())
      for (int trial = 0; trial < 200; ++trial) {
        isa::Instruction in = isa::Instruction::make(spec);
        for (unsigned f = isa::kSignalSlot + 1; f < spec.fields.size(); ++f)
          in.set(f, static_cast<uint32_t>(rng.next()) & (spec.fields[f].width >= 32 ? ~0u : (1u << spec.fields[f].width) - 1));
        for (const isa::Extent& e : isa::extents(in)) {
          ASSERT_EQ(operand_bytes(in, e.operand), e.bytes) << spec.mnemonic << " operand " << e.operand;
        }
        if (&spec == &signed_isa.require("eltwise"))
          negative += in.value(spec.require_field("lo")) < 0;
      }
  EXPECT_GT(negative, 50u);
}

TEST(GenRoles, MissingTemplateInstructionIsAnError) {
  const isa::Isa no_pool = isa::Isa::load_string(
      edited_isa("pool", [](const std::string&) { return std::string("  - name: vsum\n    opcode: 0x13\n    queue: compute"); }),
      "no_pool.yaml");
  try {
    Roles roles(no_pool, profile("default"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'pool' template"), std::string::npos) << m;
    EXPECT_NE(m.find("fields h (shape)"), std::string::npos) << m;
    EXPECT_NE(m.find("mix.pool is 1"), std::string::npos) << m;
  }
  // A profile that never asks for a pool generates with that ISA.
  Profile p = profile("default");
  p.mix[static_cast<unsigned>(OpKind::Pool)] = 0;
  GenOptions o;
  o.length = 300;
  const GeneratedProgram g = generate(no_pool, isa::NpuConfig{}, p, o);
  EXPECT_TRUE(check_program(g.bundle.instrs, g.memmap(), g.bundle.config.ddr_bytes.value).ok());
}

}  // namespace
}  // namespace npuforge::gen
