#include "allocator/symbol_table.h"

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::allocator {

SymbolTable::SymbolTable(Allocator& alloc) : own_placer_(alloc), placer_(&own_placer_) {}

SymbolTable::SymbolTable(Placer& placer) : own_placer_(placer.allocator()), placer_(&placer) {}

SymbolId SymbolTable::intern(std::string_view name) {
  if (name.empty()) throw Error("symbol table: empty symbol name");
  if (auto it = by_name_.find(name); it != by_name_.end()) return SymbolId{it->second};
  const uint32_t id = count_;
  by_name_.emplace(std::string(name), id);
  Entry& e = add_entry();
  e.origin = id;
  names_.resize(id + 1);
  names_[id] = std::string(name);
  return SymbolId{id};
}

std::optional<SymbolId> SymbolTable::find_id(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return SymbolId{it->second};
}

void SymbolTable::unknown_id(SymbolId id) const {
  throw Error(fmt::format("symbol table: unknown symbol id {}", id.value));
}

void SymbolTable::not_live(SymbolId id, const char* action) const {
  throw Error(fmt::format("symbol '%{}': {} before define (the symbol has no live buffer)", name(id), action));
}

void SymbolTable::too_large(SymbolId id, Bytes size, Bytes padded) const {
  throw Error(fmt::format("symbol '%{}': placed with {} B ({} B reserved), over the table's 4 GiB", name(id),
                          size.value, padded.value));
}

void SymbolTable::never_placed(SymbolId id) const {
  throw Error(fmt::format("symbol '%{}': never placed", name(id)));
}

std::string SymbolTable::name(SymbolId id) const {
  const Entry& e = entry(id);
  std::string base;
  if (e.origin < names_.size() && !names_[e.origin].empty()) base = names_[e.origin];
  else base = namer_ ? namer_(SymbolId{e.origin}) : fmt::format("s{}", e.origin);
  return e.version == 0 ? base : fmt::format("{}@{}", base, e.version);
}

SymbolId SymbolTable::require_id(std::string_view name, const char* action) const {
  if (auto id = find_id(name)) return *id;
  throw Error(fmt::format("symbol '%{}': {} of an unknown symbol (never defined)", name, action));
}

void SymbolTable::commit(uint32_t id, const AllocResult& r, Bytes size, uint32_t consumers) {
  // Entry keeps sizes in 32 bits, like SRAM addresses: no allocator of a 32-bit address
  // space hands out more, so only a broken placer gets here.
  if ((size.value | r.padded.value) >> 32) [[unlikely]]
    too_large(SymbolId{id}, size, r.padded);
  Entry& e = entries_[id];
  e.node = r.node;
  // The address the placer reports, not the node's: a planted placer's lie must reach the
  // fix-up and the memory map, where the checks can see it.
  e.addr = r.addr.value;
  e.size = static_cast<uint32_t>(size.value);
  e.padded = static_cast<uint32_t>(r.padded.value);
  e.uses = consumers;
  e.placed = true;
  live_++;
  if (by_node_.size() <= r.node.index) by_node_.resize(r.node.index + 1024, {0, UINT32_MAX});
  by_node_[r.node.index] = {r.node.generation, id};
}

AllocResult SymbolTable::place(SymbolId id, const SramAddr* at, Bytes size, uint32_t consumers) {
  const Entry& e = entry(id);
  if (e.node.valid()) {
    throw Error(fmt::format("symbol '%{}': defined twice while live (placed at 0x{:x}, {} B, {} pending use(s))",
                            name(id), e.addr, e.size, e.uses));
  }
  const AllocResult r = at ? placer_->alloc_at(*at, size) : placer_->alloc(size);
  if (r.ok()) commit(id.value, r, size, consumers);
  return r;
}

AllocResult SymbolTable::define(SymbolId id, Bytes size, uint32_t consumers) {
  return place(id, nullptr, size, consumers);
}

AllocResult SymbolTable::define(std::string_view name, Bytes size, uint32_t consumers) {
  return place(intern(name), nullptr, size, consumers);
}

AllocResult SymbolTable::define_at(SymbolId id, SramAddr addr, Bytes size, uint32_t consumers) {
  return place(id, &addr, size, consumers);
}

SymbolTable::Defined SymbolTable::create(const SymbolId* of, const SramAddr* at, Bytes size, uint32_t consumers) {
  const uint32_t origin = of ? entry(*of).origin : 0;  // checks `of` before allocating
  // The placer's result built in place in the one value returned: copied, its 64 bytes
  // (the out-of-memory report included) cost as much again per placement.
  Defined d{SymbolId{}, at ? placer_->alloc_at(*at, size) : placer_->alloc(size)};
  if (!d.ok()) return d;
  const uint32_t id = count_;
  d.id = SymbolId{id};
  Entry& e = add_entry();
  if (of) {
    e.origin = origin;
    e.version = ++entries_[origin].latest;
    if (origin < names_.size() && !names_[origin].empty())  // a named chain: find_id("x@1") works
      by_name_.emplace(fmt::format("{}@{}", names_[origin], e.version), id);
  } else {
    e.origin = id;
  }
  commit(id, d.alloc, size, consumers);
  // The next symbol's record goes right after this one: ask for its cache line now (a hint;
  // one past the end is a valid address to name).
  __builtin_prefetch(entries_.data() + count_, 1);
  return d;
}

SymbolTable::Defined SymbolTable::define_new(Bytes size, uint32_t consumers) {
  return create(nullptr, nullptr, size, consumers);
}

SymbolTable::Defined SymbolTable::define_version(SymbolId of, Bytes size, uint32_t consumers) {
  return create(&of, nullptr, size, consumers);
}

SymbolTable::Defined SymbolTable::define_version_at(SymbolId of, SramAddr addr, Bytes size, uint32_t consumers) {
  return create(&of, &addr, size, consumers);
}

SramAddr SymbolTable::lookup(SymbolId id) const { return SramAddr{live_entry(id, "use").addr}; }

SramAddr SymbolTable::lookup(std::string_view name) const { return lookup(require_id(name, "use")); }

Placement SymbolTable::placement(SymbolId id) const { return live_entry(id, "use").placement(); }

std::optional<Placement> SymbolTable::find(std::string_view name) const {
  auto id = find_id(name);
  if (!id || !entries_[id->value].node.valid()) return std::nullopt;
  return entries_[id->value].placement();
}

NodeId SymbolTable::node(SymbolId id) const { return live_entry(id, "use").node; }

std::optional<SymbolId> SymbolTable::owner(NodeId node) const {
  if (!node.valid() || node.index >= by_node_.size()) return std::nullopt;
  const auto [generation, id] = by_node_[node.index];
  if (generation != node.generation || id >= entries_.size() || entries_[id].node != node) return std::nullopt;
  return SymbolId{id};
}

void SymbolTable::add_use(SymbolId id, uint32_t n) { live_entry(id, "use").uses += n; }

void SymbolTable::check_size(SymbolId id, Bytes expected_size) const {
  const Entry& e = live_entry(id, "use");
  if (e.size != expected_size.value) {
    throw Error(fmt::format("symbol '%{}': uses disagree on its size: defined with {} B, this use expects {} B",
                            name(id), e.size, expected_size.value));
  }
}

void SymbolTable::add_use(SymbolId id, Bytes expected_size) {
  check_size(id, expected_size);
  entries_[id.value].uses++;
}

void SymbolTable::free_entry(Entry& e) {
  placer_->free(e.node);
  e.node = NodeId{};
  e.uses = 0;
  live_--;
}

bool SymbolTable::consume_last(SymbolId id) {
  const Entry& c = entry(id);
  if (!c.node.valid()) {
    throw Error(fmt::format("symbol '%{}': consume of a symbol with no live buffer (never defined, or already freed)",
                            name(id)));
  }
  Entry& e = entries_[id.value];
  if (e.uses == 0) throw Error(fmt::format("symbol '%{}': consume past zero (no pending uses left)", name(id)));
  if (--e.uses > 0) return false;
  free_entry(e);
  return true;
}

bool SymbolTable::consume(std::string_view name) { return consume(require_id(name, "consume")); }

void SymbolTable::release(SymbolId id) {
  const Entry& c = entry(id);
  if (!c.node.valid()) {
    throw Error(fmt::format("symbol '%{}': free of a symbol with no live buffer (never defined, or already freed)",
                            name(id)));
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
