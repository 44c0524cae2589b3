#pragma once
// The memory management table (docs/architecture.md, "The allocator's invariants"): address
// symbols -> allocator nodes, with a reference count per buffer. The one table every client
// places buffers through: `npuforge asm` (place_symbols), the program generator and the model
// compiler's segment emitter (compiler/emitter.h).
//
// Every buffer operand of an instruction is first a symbol. Dependent operands (a LOAD's
// SRAM destination and the GEMM that reads it) name the same symbol, so they get the same
// node. A live buffer's count is the number of instructions that still read it:
// define(symbol, size, consumers) sets it, add_use() raises it, consume() lowers it, and
// at zero the node is freed (and merged by the allocator). A symbol whose buffer was freed
// may be defined again (a new node). A buffer defined with 0 consumers and never
// add_use()'d has nobody to wait for: it stays live until release().
//
// Symbols are named (intern(), for assembly and compilers) or unnamed (define_new(), for
// the generator's hot path: no string work; a Namer names them only for messages). A
// version is the same value at another place (a buffer moved by compaction, or spilled
// and reloaded): a new symbol of its own, named "<origin>@k", with its own placement.
// The table remembers every symbol's last placement after it is freed, so that a whole
// program can be fixed up at the end (fixup.h).
//
// The table places through a Placer (placer.h): by default the allocator itself; tests put
// a deliberately broken one in between. Every misuse throws npuforge::Error whose message
// names the symbol: use before define, define twice while live, consume past zero,
// release of an unknown (or already freed) symbol, a use whose size disagrees with the
// defined size.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "allocator/allocator.h"
#include "allocator/placer.h"
#include "util/types.h"

namespace npuforge::allocator {

struct Placement {
  SramAddr addr;
  Bytes size;    // requested size
  Bytes padded;  // reserved size (the node's size)
};

class SymbolTable {
 public:
  // The table allocates from `alloc` (or through `placer`), which must outlive it.
  explicit SymbolTable(Allocator& alloc);
  explicit SymbolTable(Placer& placer);
  SymbolTable(const SymbolTable&) = delete;
  SymbolTable& operator=(const SymbolTable&) = delete;

  // ---- Names. intern() adds the name if new; find_id() does not.
  SymbolId intern(std::string_view name);
  std::optional<SymbolId> find_id(std::string_view name) const;
  // The interned name, else the namer's name of its origin; versions add "@k". Throws
  // for an unknown id.
  std::string name(SymbolId id) const;
  // Names unnamed symbols (given the first symbol of the version chain) in messages and
  // name(); without one they are "s<id>".
  using Namer = std::function<std::string(SymbolId origin)>;
  void set_namer(Namer namer) { namer_ = std::move(namer); }
  size_t size() const { return entries_.size(); }  // symbols ever created
  void reserve(size_t symbols) { entries_.reserve(symbols); }
  // Where the per-symbol records are, bytes reserved and in use: the generator has their
  // pages faulted in ahead of it (gen/prefault.h).
  struct Storage {
    const void* data;
    size_t reserved_bytes, used_bytes;
  };
  Storage storage() const {
    return {entries_.data(), entries_.capacity() * sizeof(Entry), entries_.size() * sizeof(Entry)};
  }

  // ---- Placing. Out of memory is returned (!ok(), table unchanged), not thrown.
  // Allocates `size` bytes for the symbol with `consumers` pending reads. Throws if the
  // symbol is live.
  AllocResult define(SymbolId id, Bytes size, uint32_t consumers = 0);
  AllocResult define(std::string_view name, Bytes size, uint32_t consumers = 0);
  // The same at a fixed address (those bytes must be free).
  AllocResult define_at(SymbolId id, SramAddr addr, Bytes size, uint32_t consumers = 0);

  // A new symbol created and placed in one step; when out of memory none is created, so
  // ids stay dense (one per placed buffer) and a caller may number things by them.
  struct Defined {
    SymbolId id;  // meaningful only when ok()
    AllocResult alloc;
    bool ok() const { return alloc.ok(); }
  };
  Defined define_new(Bytes size, uint32_t consumers = 0);
  // The next version of `of` (live or not): origin(of)'s chain gets "@k", k one more than
  // its latest version. At `addr` when given (compaction), else wherever the allocator says.
  Defined define_version(SymbolId of, Bytes size, uint32_t consumers = 0);
  Defined define_version_at(SymbolId of, SramAddr addr, Bytes size, uint32_t consumers = 0);
  SymbolId origin(SymbolId id) const { return SymbolId{entry(id).origin}; }
  uint32_t version(SymbolId id) const { return entry(id).version; }

  // ---- Looking up.
  // Placed address of a live symbol; throws "use before define" otherwise.
  SramAddr lookup(SymbolId id) const;
  SramAddr lookup(std::string_view name) const;
  Placement placement(SymbolId id) const;  // throws like lookup
  std::optional<Placement> find(std::string_view name) const;  // nullopt unless live
  // The current placement, or the last one when the symbol was freed since (for fixing up
  // a finished program). placed() throws when the symbol was never placed;
  // last_placement() is null then. Both throw for an unknown id.
  // By value: the table keeps placements in 32 bits (see Entry).
  Placement placed(SymbolId id) const {
    const Entry& e = entry(id);
    if (!e.placed) [[unlikely]]
      never_placed(id);
    return e.placement();
  }
  std::optional<Placement> last_placement(SymbolId id) const {
    const Entry& e = entry(id);
    if (!e.placed) return std::nullopt;
    return e.placement();
  }
  bool is_live(SymbolId id) const { return entry(id).node.valid(); }
  // A hint, no effect on the table: the symbol's record will be read soon. The generator
  // gives it where it loads its own record of the symbol, so that the two cache misses
  // overlap instead of following each other.
  void prefetch(SymbolId id) const {
    if (id.value < count_) __builtin_prefetch(entries_.data() + id.value);
  }
  NodeId node(SymbolId id) const;  // throws like lookup
  // The live symbol holding `node`; nullopt for a free or stale node.
  std::optional<SymbolId> owner(NodeId node) const;

  // ---- Counting.
  // One more instruction will read the live symbol. With a size: the bytes that reader
  // expects; it must equal the defined size (else "uses disagree on its size").
  void add_use(SymbolId id, uint32_t n = 1);
  void add_use(SymbolId id, Bytes expected_size);
  void check_size(SymbolId id, Bytes expected_size) const;  // the same check, no count

  // One reader finished: decrement; at zero free the node. Returns true when freed.
  // Throws for an unknown/dead symbol and when the count is already zero.
  bool consume(SymbolId id) {  // inline for the common case (uses left), the rest out of line
    if (id.value < count_) {
      Entry& e = entries_[id.value];
      if (e.node.valid() && e.uses > 1) {
        --e.uses;
        return false;
      }
    }
    return consume_last(id);
  }
  bool consume(std::string_view name);
  // uses(id) > 0 && consume(id) with one look-up (the generator's, for every input it
  // reads): a symbol with no pending reads is left as it is. Throws like uses() for a
  // symbol that is not live.
  bool consume_if_used(SymbolId id) {
    if (id.value < count_) {
      Entry& e = entries_[id.value];
      if (e.node.valid()) {
        if (e.uses > 1) {
          --e.uses;
          return false;
        }
        if (e.uses == 0) return false;
      }
    }
    return uses(id) > 0 && consume_last(id);
  }
  uint32_t uses(SymbolId id) const { return live_entry(id, "use").uses; }  // pending reads, live symbol

  // Frees the symbol's node now, whatever its count (end of program, spill).
  void release(SymbolId id);
  void release(std::string_view name);

  size_t live_count() const { return live_; }
  std::vector<SymbolId> live_symbols() const;  // in id order
  Allocator& allocator() const { return placer_->allocator(); }
  Placer& placer() const { return *placer_; }

 private:
  // 40 bytes, the placement in 32 bits (SRAM addresses and sizes are, see commit()): with
  // Placement's three 64-bit values it was 56, and the generator keeps one per buffer it
  // places (630k in a 1M-instruction default program: 10 MB less to fault in).
  struct Entry {
    NodeId node;  // valid while live
    // The placement: current, or last while dead.
    uint32_t addr = 0;
    uint32_t size = 0;    // requested size
    uint32_t padded = 0;  // reserved size (the node's size)
    uint32_t uses = 0;
    uint32_t origin = 0;   // first symbol of its version chain (itself for most)
    uint32_t version = 0;  // k of name@k; 0 for the origin
    uint32_t latest = 0;   // on an origin: its chain's latest version
    bool placed = false;   // ever placed
    Placement placement() const { return Placement{SramAddr{addr}, Bytes{size}, Bytes{padded}}; }
  };
  // Inline, with the error paths out of line: the generator calls these per instruction.
  const Entry& entry(SymbolId id) const {
    if (id.value >= count_) [[unlikely]]
      unknown_id(id);
    return entries_[id.value];
  }
  const Entry& live_entry(SymbolId id, const char* action) const {
    const Entry& e = entry(id);
    if (!e.node.valid()) [[unlikely]]
      not_live(id, action);
    return e;
  }
  Entry& live_entry(SymbolId id, const char* action) {
    return const_cast<Entry&>(std::as_const(*this).live_entry(id, action));
  }
  bool consume_last(SymbolId id);  // consume() with its checks, freeing at zero
  [[noreturn]] void unknown_id(SymbolId id) const;
  [[noreturn]] void not_live(SymbolId id, const char* action) const;
  [[noreturn]] void never_placed(SymbolId id) const;
  [[noreturn, gnu::noinline]] void too_large(SymbolId id, Bytes size, Bytes padded) const;
  SymbolId require_id(std::string_view name, const char* action) const;
  AllocResult place(SymbolId id, const SramAddr* at, Bytes size, uint32_t consumers);
  Defined create(const SymbolId* of, const SramAddr* at, Bytes size, uint32_t consumers);
  void commit(uint32_t id, const AllocResult& r, Bytes size, uint32_t consumers);
  void free_entry(Entry& e);

  AllocatorPlacer own_placer_;  // used when constructed from an Allocator
  Placer* placer_;
  std::vector<Entry> entries_;
  // entries_.size(), kept beside it: the id checks on the generator's hot paths compared
  // with a division by sizeof(Entry) (40) otherwise. Grows only through add_entry().
  uint32_t count_ = 0;
  Entry& add_entry() {
    Entry& e = entries_.emplace_back();
    ++count_;  // after: a failed emplace leaves both as they were
    return e;
  }
  std::vector<std::pair<uint32_t, uint32_t>> by_node_;  // node index -> (generation, symbol)
  std::vector<std::string> names_;  // by id; empty for unnamed symbols (may be shorter)
  Namer namer_;
  struct NameHash {  // heterogeneous lookup: find by string_view without a copy
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> by_name_;
  size_t live_ = 0;
};

}  // namespace npuforge::allocator
