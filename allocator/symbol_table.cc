#include "allocator/symbol_table.h"

#include <fmt/core.h>

#include <utility>

#include "util/error.h"

namespace npuforge::allocator {

SymbolId SymbolTable::intern(std::string_view name) {
  if (name.empty()) throw Error("symbol table: empty symbol name");
  if (auto it = by_name_.find(name); it != by_name_.end()) return SymbolId{it->second};
  by_name_.emplace(std::string(name), uint32_t(entries_.size()));
  entries_.push_back(Entry{std::string(name), NodeId{}, Bytes{}, 0});
  return SymbolId{uint32_t(entries_.size() - 1)};
}

std::optional<SymbolId> SymbolTable::find_id(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return SymbolId{it->second};
}

const SymbolTable::Entry& SymbolTable::entry(SymbolId id) const {
  if (id.value >= entries_.size()) {
    throw Error(fmt::format("symbol table: unknown symbol id {}", id.value));
  }
  return entries_[id.value];
}

const std::string& SymbolTable::name(SymbolId id) const { return entry(id).name; }

const SymbolTable::Entry& SymbolTable::live_entry(SymbolId id, const char* action) const {
  const Entry& e = entry(id);
  if (!e.node.valid()) {
    throw Error(fmt::format("symbol '%{}': {} before define (the symbol has no live buffer)",
                            e.name, action));
  }
  return e;
}

SymbolTable::Entry& SymbolTable::live_entry(SymbolId id, const char* action) {
  return const_cast<Entry&>(std::as_const(*this).live_entry(id, action));
}

SymbolId SymbolTable::require_id(std::string_view name, const char* action) const {
  if (auto id = find_id(name)) return *id;
  throw Error(fmt::format("symbol '%{}': {} of an unknown symbol (never defined)", name, action));
}

AllocResult SymbolTable::define(SymbolId id, Bytes size, uint32_t consumers) {
  const Entry& e = entry(id);
  if (e.node.valid()) {
    throw Error(fmt::format(
        "symbol '%{}': defined twice while live (placed at 0x{:x}, {} B, {} pending use(s))",
        e.name, alloc_->address(e.node).value, e.size.value, e.uses));
  }
  AllocResult r = alloc_->alloc(size);
  if (r.ok()) {
    Entry& m = entries_[id.value];
    m.node = r.node;
    m.size = size;
    m.uses = consumers;
    live_++;
  }
  return r;
}

AllocResult SymbolTable::define(std::string_view name, Bytes size, uint32_t consumers) {
  return define(intern(name), size, consumers);
}

SramAddr SymbolTable::lookup(SymbolId id) const {
  return alloc_->address(live_entry(id, "use").node);
}

SramAddr SymbolTable::lookup(std::string_view name) const {
  return lookup(require_id(name, "use"));
}

Placement SymbolTable::placement(SymbolId id) const {
  const Entry& e = live_entry(id, "use");
  return Placement{alloc_->address(e.node), e.size, alloc_->size(e.node)};
}

std::optional<Placement> SymbolTable::find(std::string_view name) const {
  auto id = find_id(name);
  if (!id || !entries_[id->value].node.valid()) return std::nullopt;
  return placement(*id);
}

bool SymbolTable::is_live(SymbolId id) const { return entry(id).node.valid(); }

NodeId SymbolTable::node(SymbolId id) const { return live_entry(id, "use").node; }

void SymbolTable::add_use(SymbolId id, uint32_t n) { live_entry(id, "use").uses += n; }

void SymbolTable::check_size(SymbolId id, Bytes expected_size) const {
  const Entry& e = live_entry(id, "use");
  if (e.size != expected_size) {
    throw Error(fmt::format("symbol '%{}': uses disagree on its size: defined with {} B, this "
                            "use expects {} B",
                            e.name, e.size.value, expected_size.value));
  }
}

void SymbolTable::add_use(SymbolId id, Bytes expected_size) {
  check_size(id, expected_size);
  entries_[id.value].uses++;
}

uint32_t SymbolTable::uses(SymbolId id) const { return live_entry(id, "use").uses; }

void SymbolTable::free_entry(Entry& e) {
  alloc_->free(e.node);
  e.node = NodeId{};
  e.uses = 0;
  live_--;
}

bool SymbolTable::consume(SymbolId id) {
  const Entry& c = entry(id);
  if (!c.node.valid()) {
    throw Error(fmt::format("symbol '%{}': consume of a symbol with no live buffer (never "
                            "defined, or already freed)",
                            c.name));
  }
  Entry& e = entries_[id.value];
  if (e.uses == 0) {
    throw Error(fmt::format("symbol '%{}': consume past zero (no pending uses left)", e.name));
  }
  if (--e.uses > 0) return false;
  free_entry(e);
  return true;
}

bool SymbolTable::consume(std::string_view name) { return consume(require_id(name, "consume")); }

void SymbolTable::release(SymbolId id) {
  const Entry& c = entry(id);
  if (!c.node.valid()) {
    throw Error(fmt::format("symbol '%{}': free of a symbol with no live buffer (never defined, "
                            "or already freed)",
                            c.name));
  }
  free_entry(entries_[id.value]);
}

void SymbolTable::release(std::string_view name) { release(require_id(name, "free")); }

std::vector<SymbolId> SymbolTable::live_symbols() const {
  std::vector<SymbolId> out;
  for (uint32_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].node.valid()) out.push_back(SymbolId{i});
  }
  return out;
}

}  // namespace npuforge::allocator
