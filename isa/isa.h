#pragma once
// The instruction set as data: loaded from npu_isa.yaml (the built-in copy is embedded in
// the binary at build time) and validated once. Everything else (encoder, assembler,
// allocator fix-up, checkers, simulator, RTL package) reads these tables.
//
// Why at run time rather than generated C++: one loader and validator serve both the
// built-in ISA and a team's edited copy (`--isa FILE`), with no rebuild, and the error
// paths for a broken ISA file are the same code the tests exercise.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "isa/expr.h"

namespace npuforge::isa {

enum class FieldKind : uint8_t { Opcode, Tokens, SramAddr, DdrAddr, Size, Shape, Imm, Flag, Enum };
enum class Queue : uint8_t { Load = 0, Compute = 1, Store = 2, Control = 3 };
enum class Access : uint8_t { Read, Write };
enum class Space : uint8_t { Sram, Ddr };

inline constexpr unsigned kNumQueues = 3;  // load, compute, store carry tokens
// ISA v2: im2col and pool have 18 fields, gemm 5 operands (qp); the margin is for a team's
// extensions. The RTL decoder's field bus is 32 * kMaxFields bits (npu_isa_pkg MAX_FIELDS).
inline constexpr unsigned kMaxFields = 24;
inline constexpr unsigned kMaxOperands = 5;
static_assert(kMaxOperands <= 8, "InstrSpec::operands_of_field holds one bit per operand");

std::string_view to_string(FieldKind);
std::string_view to_string(Queue);
std::string_view to_string(Access);

struct FieldSpec {
  std::string name;
  unsigned lsb = 0;
  unsigned width = 0;  // bits, 1..32
  FieldKind kind = FieldKind::Imm;
  bool is_signed = false;
  int64_t min = 0;  // allowed range of the (sign-extended) value
  int64_t max = 0;
  std::optional<int64_t> default_value;  // absent: the assembler requires the field
  std::vector<std::pair<std::string, uint32_t>> enum_values;  // the YAML's `values:`, in its order
  std::string doc;

  // The code of the named value of an enum field, or nullopt.
  std::optional<uint32_t> value_of(std::string_view value_name) const;

  unsigned msb() const { return lsb + width - 1; }
  bool is_address() const { return kind == FieldKind::SramAddr || kind == FieldKind::DdrAddr; }
  // A field given by position in assembly: an address with no default.
  bool is_positional() const { return is_address() && !default_value; }
};

struct OperandSpec {
  unsigned field = 0;  // slot of the address field
  Access access = Access::Read;
  Space space = Space::Sram;
  Expr bytes;  // byte extent as a function of the fields; 0 means "not used"
};

// Where one field's bits go in the word, worked out once by the loader (plan_encoding):
// encode() ORs (raw & mask) << shift into 64-bit limb `limb` of the word, and the bits that
// overflow it into the next limb.
struct BitSlot {
  uint16_t slot = 0;
  uint16_t limb = 0;
  uint32_t shift = 0;
  uint32_t mask = 0;
};

// How the disassembler prints one field, worked out once by the loader (plan_disassembly),
// in the order of the line: positional fields, keyword fields from slot 3, the token fields.
struct LineStep {
  enum class Text : uint8_t { Tokens, Enum, Hex, DdrHex, Decimal };
  uint8_t slot = 0;
  Text text = Text::Decimal;
  bool keyword = false;      // "name=value" (positional fields: the value alone)
  bool flag = false;         // a bare name when set to 1
  bool has_default = false;  // omitted when equal to default_value
  bool is_signed = false;
  uint8_t width = 0;
  int64_t default_value = 0;
};

struct InstrSpec {
  std::string mnemonic;
  uint32_t opcode = 0;
  Queue queue = Queue::Control;
  std::string doc;
  std::vector<FieldSpec> fields;  // the common fields first (opcode, wait, signal)
  std::vector<OperandSpec> operands;
  std::vector<Expr> constraints;
  // Per field slot, bit i set when operands[i] is addressed by that field (set by the
  // loader): the fix-up goes from a field naming a symbol to its operands directly.
  std::array<uint8_t, kMaxFields> operands_of_field{};
  // Raw field bits of a fresh instruction: the opcode and every default (set by the loader;
  // Instruction::make copies it).
  std::array<uint32_t, kMaxFields> initial_raw{};
  // The encoder's and the disassembler's per-instruction plans (set by the loader through
  // plan_encoding/plan_disassembly, beside the code that reads them): each format rule is
  // applied once per ISA, not once per instruction written.
  std::vector<BitSlot> layout;
  std::vector<LineStep> line;
  size_t max_line_bytes = 0;  // the most bytes write_disassembly puts for this instruction

  std::optional<unsigned> field_index(std::string_view name) const;
  // Like field_index, but throws npuforge::Error when the field does not exist. For code
  // that binds to a field by name once (semantics, generator) and then uses the slot.
  unsigned require_field(std::string_view name) const;
};

// Fill InstrSpec::layout (instruction.cc) and InstrSpec::line / max_line_bytes
// (disassembler.cc) from its fields; the loader calls them once per instruction.
void plan_encoding(InstrSpec& spec);
void plan_disassembly(InstrSpec& spec);

// Slots of the common fields, identical in every instruction.
inline constexpr unsigned kOpcodeSlot = 0;
inline constexpr unsigned kWaitSlot = 1;
inline constexpr unsigned kSignalSlot = 2;

class Isa {
 public:
  // Throw npuforge::Error naming the file (or `source_name`), line and field on bad input.
  // An overlay is the base ISA plus the instructions it lists (tests/data/isa_extra.yaml):
  //   base: builtin          # or the path of an ISA file, relative to the overlay's directory
  //   name: my-npu           # optional, as `version:`; width, queues and common come from the base
  //   instructions: [...]    # new mnemonics and opcodes only: a clash with the base is an error
  // A base may itself be an overlay; a chain that comes back to a file is an error.
  static Isa load_file(const std::filesystem::path& path);
  static Isa load_string(std::string_view yaml_text, std::string_view source_name);

  std::string_view name() const { return name_; }
  unsigned version() const { return version_; }
  unsigned width_bits() const { return width_bits_; }
  unsigned width_bytes() const { return width_bits_ / 8; }
  const std::vector<std::string>& queue_names() const { return queue_names_; }
  const std::vector<InstrSpec>& instructions() const { return instrs_; }
  const FieldSpec& opcode_field() const { return instrs_.front().fields[kOpcodeSlot]; }

  const InstrSpec* by_opcode(uint32_t opcode) const;
  const InstrSpec* by_mnemonic(std::string_view mnemonic) const;
  // Like by_mnemonic, but throws npuforge::Error for an unknown one.
  const InstrSpec& require(std::string_view mnemonic) const;
  // The position of `spec` in instructions(), or nullopt when it belongs to another ISA (the
  // per-ISA tables beside an Isa are indexed by it).
  std::optional<size_t> index_of(const InstrSpec& spec) const;

  // The limits code derives from the field widths instead of restating them: field `field` of
  // instruction `mnemonic`, its smallest and largest value (the width, narrowed by `min:` and
  // `max:`), and the code of one of its named values. Each throws npuforge::Error naming the
  // instruction, the field (and the value) the ISA lacks.
  const FieldSpec& field(std::string_view mnemonic, std::string_view field_name) const;
  int64_t min_value(std::string_view mnemonic, std::string_view field_name) const {
    return field(mnemonic, field_name).min;
  }
  int64_t max_value(std::string_view mnemonic, std::string_view field_name) const {
    return field(mnemonic, field_name).max;
  }
  uint32_t enum_value(std::string_view mnemonic, std::string_view field_name, std::string_view value_name) const;
  // The bytes of `space` every address field of that space reaches: one past the smallest
  // of their maxima (0 when no field addresses it).
  uint64_t addressable_bytes(Space space) const;

 private:
  std::string name_;
  unsigned version_ = 0;
  unsigned width_bits_ = 0;
  std::vector<std::string> queue_names_;
  std::vector<InstrSpec> instrs_;
  std::vector<int16_t> by_opcode_;  // opcode -> index into instrs_, -1 if none
  friend class IsaLoader;
};

// The ISA built from isa/npu_isa.yaml as it was at build time. Immutable.
const Isa& builtin_isa();
// The text of that YAML (for `npuforge isa --yaml` and tests).
std::string_view builtin_isa_yaml();

}  // namespace npuforge::isa
