#pragma once
// The memory management table (SEEDS.md A.3-A.5 and C): address symbols -> allocator nodes,
// with a reference count per buffer.
//
// Every buffer operand of an instruction is first a symbol. Dependent operands (a LOAD's
// SRAM destination and the GEMM that reads it) name the same symbol, so they get the same
// node. A live buffer's count is the number of instructions that still read it:
// define(symbol, size, consumers) sets it, add_use() raises it, consume() lowers it, and
// at zero the node is freed (and merged by the allocator). A symbol whose buffer was freed
// may be defined again (a new node). A buffer defined with 0 consumers and never
// add_use()'d has nobody to wait for: it stays live until release().
//
// Names are interned once into SymbolId (dense indexes): the id overloads do no string
// work, for the generator's hot path. Every misuse throws npuforge::Error whose message
// names the symbol: use before define, define twice while live, consume past zero,
// release of an unknown (or already freed) symbol, a use whose size disagrees with the
// defined size.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "allocator/allocator.h"
#include "util/types.h"

namespace npuforge::allocator {

struct Placement {
  SramAddr addr;
  Bytes size;    // requested size
  Bytes padded;  // reserved size (the node's size)
};

class SymbolTable {
 public:
  // The table allocates from `alloc`, which must outlive it.
  explicit SymbolTable(Allocator& alloc) : alloc_(&alloc) {}

  // Name <-> id. intern() adds the name if new; find_id() does not.
  SymbolId intern(std::string_view name);
  std::optional<SymbolId> find_id(std::string_view name) const;
  const std::string& name(SymbolId id) const;  // throws for an unknown id
  size_t size() const { return entries_.size(); }  // symbols ever interned

  // Allocates `size` bytes for the symbol with `consumers` pending reads. Out of memory
  // is returned (!ok(), table unchanged), not thrown. Throws if the symbol is live.
  AllocResult define(SymbolId id, Bytes size, uint32_t consumers = 0);
  AllocResult define(std::string_view name, Bytes size, uint32_t consumers = 0);

  // Placed address of a live symbol; throws "use before define" otherwise.
  SramAddr lookup(SymbolId id) const;
  SramAddr lookup(std::string_view name) const;
  Placement placement(SymbolId id) const;  // throws like lookup
  std::optional<Placement> find(std::string_view name) const;  // nullopt unless live
  bool is_live(SymbolId id) const;
  NodeId node(SymbolId id) const;  // throws like lookup

  // One more instruction will read the live symbol. With a size: the bytes that reader
  // expects; it must equal the defined size (else "uses disagree on its size").
  void add_use(SymbolId id, uint32_t n = 1);
  void add_use(SymbolId id, Bytes expected_size);
  void check_size(SymbolId id, Bytes expected_size) const;  // the same check, no count

  // One reader finished: decrement; at zero free the node. Returns true when freed.
  // Throws for an unknown/dead symbol and when the count is already zero.
  bool consume(SymbolId id);
  bool consume(std::string_view name);
  uint32_t uses(SymbolId id) const;  // pending reads of a live symbol

  // Frees the symbol's node now, whatever its count (end of program, spill).
  void release(SymbolId id);
  void release(std::string_view name);

  size_t live_count() const { return live_; }
  std::vector<SymbolId> live_symbols() const;  // in id order
  Allocator& allocator() const { return *alloc_; }

 private:
  struct Entry {
    std::string name;
    NodeId node;  // valid while live
    Bytes size;
    uint32_t uses = 0;
  };
  Entry& live_entry(SymbolId id, const char* action);
  const Entry& live_entry(SymbolId id, const char* action) const;
  const Entry& entry(SymbolId id) const;
  SymbolId require_id(std::string_view name, const char* action) const;
  void free_entry(Entry& e);

  Allocator* alloc_;
  std::vector<Entry> entries_;
  struct NameHash {  // heterogeneous lookup: find by string_view without a copy
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> by_name_;
  size_t live_ = 0;
};

}  // namespace npuforge::allocator
