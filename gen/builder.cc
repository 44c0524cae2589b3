// Symbols, dependency tokens and emission: the hot path of the generator. No strings and no
// per-instruction heap allocation here (vectors are reserved up front).
//
// Symbols live in allocator::SymbolTable (placement, size, pending reads, versions); the
// generator keeps beside them what only it needs (producer, per-queue last accesses, due
// point, chain depth).
//
// Tokens follow the exact happens-before model the simulator's hazard checker uses
// (isa::TokenOrderBuilder, the incremental isa::TokenOrder): each queue runs in order, and
// the k-th wait on channel p->q takes the k-th signal on p->q. When an instruction in
// queue q must follow instruction X of queue p and does not already, X gets signal bit q
// and the instruction wait bit p. X is always after the last signaller on p->q (else that
// earlier token, already taken by q, would order X before q), so signals and waits pair
// up one to one in program order and every wait's signal precedes it in the program.
#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <filesystem>
#include <fmt/core.h>

#include "gen/builder.h"
#include "gen/placer.h"
#include "gen/stream.h"
#include "util/error.h"

namespace npuforge::gen {

namespace {

// The generator's limits on the NPU config, checked before anything is built from it.
const isa::NpuConfig& checked(const isa::NpuConfig& npu, const isa::Isa& isa) {
  const uint64_t sram = npu.sram_bytes.value;
  if (sram > isa.addressable_bytes(isa::Space::Sram))
    throw Error(fmt::format("npu: sram_bytes {} exceeds the {} bytes the ISA's SRAM address fields reach", sram,
                            isa.addressable_bytes(isa::Space::Sram)));
  if (npu.ddr_bytes.value < 8 * sram || npu.ddr_bytes.value > (1ull << 32))
    throw Error(fmt::format("npu: ddr_bytes {} must be at least 8 x sram_bytes ({}) and at most 4 GiB",
                            npu.ddr_bytes.value, 8 * sram));
  return npu;
}

// Headers name files without their directory: the same inputs give the same bytes
// wherever the checkout lives (the hash identifies the content).
std::string base_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::unique_ptr<allocator::Allocator> own_allocator(const isa::NpuConfig& npu, const Profile& p, const GenOptions& o) {
  if (o.placer) return nullptr;
  auto a = std::make_unique<allocator::Allocator>(SramAddr{0}, npu.sram_bytes, npu.alignment, p.fit);
  if (o.plant.any() && plant_info(o.plant.id).layer == PlantLayer::Allocator) a->set_plant(o.plant);
  return a;
}

std::unique_ptr<allocator::Placer> own_placer(allocator::Allocator* a, Plant plant) {
  if (!a) return nullptr;
  if (auto planted = planted_placer(*a, plant)) return planted;
  return std::make_unique<allocator::AllocatorPlacer>(*a);
}

}  // namespace

Builder::Builder(const isa::Isa& isa, const isa::NpuConfig& npu, const Profile& profile, const GenOptions& opt)
    : isa_(isa),
      checks_(isa),
      npu_(checked(npu, isa)),
      p_(profile),
      opt_(opt),
      roles_(isa, profile),
      dma_limits_(roles_.dma_limits()),
      max_len_(roles_.max_len()),
      rng_(opt.seed),
      own_alloc_(own_allocator(npu, profile, opt)),
      own_placer_(own_placer(own_alloc_.get(), opt.plant)),
      table_(opt.placer ? *opt.placer : *own_placer_) {
  const uint64_t sram = npu.sram_bytes.value;
  align_ = npu.alignment.value;
  ddr_.input_base = 0;
  ddr_.input_bytes = 2 * sram;
  ddr_.output_base = ddr_.input_bytes;
  ddr_.output_bytes = 2 * sram;
  ddr_.spill_base = ddr_.output_base + ddr_.output_bytes;
  ddr_.spill_slot_bytes = sram;
  ddr_.spill_slots = static_cast<uint32_t>(std::min<uint64_t>(64, (npu.ddr_bytes.value - ddr_.spill_base) / sram));
  out_cursor_ = ddr_.output_base;
  for (uint32_t i = ddr_.spill_slots; i-- > 0;) free_slots_.push_back(i);
  slot_reader_.assign(ddr_.spill_slots, -1);

  table_.allocator().set_event_callback(
      [this](const allocator::AllocEvent& e) { ++sum_.alloc_events[static_cast<unsigned>(e.kind)]; });
  table_.set_namer([this](SymbolId origin) { return symbol_name(syms_[origin.value].kind, origin.value, 0); });
  const int64_t length = opt.length > 0 ? opt.length : profile.length;
  limit_ = static_cast<uint64_t>(length - 1);
  instrs_.reserve(length);
  order_.reserve(length);
  refs_.reserve(length * 5 / 2);
  syms_.reserve(length);
  symbols_out_.reserve(length);
  table_.reserve(length);
  shadow_ = ShadowClocks(sram / align_ + 1, align_);
  const allocator::SymbolTable::Storage entries = table_.storage();
  tracks_ = {prefault_.add(instrs_), prefault_.add(refs_), prefault_.add(syms_),
             prefault_.add(entries.data, entries.reserved_bytes), prefault_.add(symbols_out_)};
  if (length >= kMinPrefaultLength) prefault_.start();
  header_ = fmt::format("npuforge gen; seed: {}; profile: {} (fnv1a64 {:016x}); npu: {} (fnv1a64 {:016x}); isa: {} v{}",
                        opt_.seed, base_name(p_.source), p_.hash, base_name(opt_.npu_source), opt_.npu_hash,
                        isa_.name(), isa_.version());
  if (feed_.stream)
    feed_.stream->start({header_, static_cast<uint64_t>(length), instrs_.data(), refs_.data(), symbols_out_.data()});
}

Builder::StreamFeed::~StreamFeed() {
  if (stream) stream->stop();
}

void Builder::stop_stream() {
  if (feed_.stream) feed_.stream->stop();
  feed_.stream = nullptr;
}

uint64_t Builder::final_instructions() const {
  uint64_t first_open = emitted_;
  for (unsigned p = 0; p < isa::kNumQueues; ++p) {
    uint32_t followed = order_.count(p);  // of queue p's instructions, by every other queue
    for (unsigned q = 0; q < isa::kNumQueues; ++q)
      if (q != p) followed = std::min(followed, order_.count(q) == 0 ? 0 : order_.clock(order_.instr(q, order_.count(q)))[p]);
    if (followed < order_.count(p)) first_open = std::min<uint64_t>(first_open, order_.instr(p, followed + 1));
  }
  return first_open;
}

void Builder::publish_fill() {
  prefault_.publish(tracks_[0], instrs_);
  prefault_.publish(tracks_[1], refs_);
  prefault_.publish(tracks_[2], syms_);
  const allocator::SymbolTable::Storage entries = table_.storage();
  prefault_.publish(tracks_[3], entries.data, entries.used_bytes);
  prefault_.publish(tracks_[4], symbols_out_);
  if (feed_.stream) feed_.stream->publish({final_instructions(), refs_.size()});
}

uint32_t Builder::emit(const isa::Instruction& in, std::span<const Use> reads, std::span<const Use> writes,
                       int64_t ddr_dep) {
  if (emitted_ >= limit_) throw LengthReached{};
  if (emitted_ % kPublishEvery == 0) publish_fill();
  if (refs_.size() + reads.size() + writes.size() > refs_.capacity()) [[unlikely]]
    stop_stream();  // refs_ would move
  const auto q = static_cast<unsigned>(in.spec->queue);
  const auto idx = static_cast<uint32_t>(emitted_);
  if (q >= 3) {  // control: no memory, no tokens
    instrs_.push_back(in);
    ++emitted_;
    order_.append(in.spec->queue);
    return idx;
  }
  std::array<uint32_t, 3> need{};
  for (const Use& u : reads) {
    table_.prefetch(SymbolId{u.sym});  // the fix-up below reads its placement
    need[syms_[u.sym].prod_q] = std::max(need[syms_[u.sym].prod_q], syms_[u.sym].prod_seq);
  }
  for (const Use& u : writes) {
    if (opt_.plant.any() && opt_.plant.is(PlantId::GenNoReuseWait)) break;  // planted
    const allocator::Placement pl = placement(u.sym);
    const ShadowClocks::Clock last = shadow_.max_over(pl.addr.value, pl.padded.value);
    for (unsigned p = 0; p < 3; ++p) need[p] = std::max(need[p], last[p]);
  }
  if (ddr_dep >= 0) {
    const unsigned p = static_cast<unsigned>(instrs_[ddr_dep].spec->queue);
    need[p] = std::max(need[p], order_.clock(ddr_dep)[p]);
  }
  if (p_.token_density > 0 && rng_.chance(p_.token_density)) {
    const unsigned p = (q + 1 + static_cast<unsigned>(rng_.below(2))) % 3;
    need[p] = std::max(need[p], order_.count(p));
  }
  uint32_t wait = 0;  // the instruction's wait bits, set once it is in instrs_
  for (unsigned p = 0; p < 3; ++p) {
    if (p == q || order_.follows(q, p, need[p])) continue;
    const size_t x = order_.instr(p, need[p]);
    order_.add_token(x, q);  // checks the pairing (see the file comment)
    ++sum_.tokens;
    // Planted: every 4th token is believed in but never written into the program.
    if (opt_.plant.any() && opt_.plant.is(PlantId::GenDropToken) && sum_.tokens % 4 == 0) continue;
    instrs_[x].raw[isa::kSignalSlot] |= 1u << q;
    wait |= 1u << p;
  }
  const uint32_t seq = order_.append(in.spec->queue);
  instrs_.push_back(in);
  instrs_.back().raw[isa::kWaitSlot] |= wait;
  ++emitted_;
  for (const Use& u : reads) {
    refs_.push_back({idx, SymbolId{u.sym}, static_cast<uint8_t>(u.slot), false});
    syms_[u.sym].acc[q] = seq;
  }
  // Outputs nobody reads, by position in `writes`: their pending reads are read once, here
  // (nothing below changes them: an input without reads is never consumed).
  static_assert(isa::kMaxOperands <= 32, "one bit of `unread` per write operand");
  uint32_t unread = 0;
  for (size_t w = 0; w < writes.size(); ++w) {
    const Use& u = writes[w];
    refs_.push_back({idx, SymbolId{u.sym}, static_cast<uint8_t>(u.slot), true});
    Sym& s = syms_[u.sym];
    s.acc[q] = seq;
    s.prod_q = static_cast<uint8_t>(q);
    s.prod_seq = seq;
    s.live = true;
    if (refs(u.sym) == 0) {
      unread |= 1u << w;
    } else {
      s.live_pos = static_cast<uint32_t>(live_.size());
      live_.push_back(u.sym);
      due_heap_.push_back(due_entry(s.due, u.sym));
      std::push_heap(due_heap_.begin(), due_heap_.end(), std::greater<>());
    }
  }
  // Fix-up now, while the instruction is in cache: every address field naming a symbol gets
  // its placed address, and every operand's extent is checked against its buffer.
  // (Spans from the count and the end pointer: sizes would divide by 104 and 12 bytes.)
  const size_t n = reads.size() + writes.size();
  allocator::fixup(std::span<isa::Instruction>(instrs_.data(), emitted_),
                   std::span<const SymRef>(std::to_address(refs_.end()) - n, n), table_, checks_);
  // Inputs die only now, after the outputs were placed: an output never lands on an input.
  for (const Use& u : reads) {
    if (!u.consume || !syms_[u.sym].live) continue;
    if (table_.consume_if_used(SymbolId{u.sym})) forget(u.sym);
  }
  // An output nobody reads (fan_out 0: a dead load or result) dies with its producer; its
  // bytes go back at once, and the next owner must wait for this write (hazard-prone reuse).
  for (; unread != 0; unread &= unread - 1) {
    const uint32_t sym = writes[static_cast<unsigned>(std::countr_zero(unread))].sym;
    if (syms_[sym].live) release(sym);
  }
  return idx;
}

// The check is O(nodes): spacing checks at least `nodes` placements apart keeps its cost
// O(1) per placement however many buffers are live (tiny-buffers keeps thousands).
void Builder::check_allocator() {
  const allocator::Allocator& a = table_.allocator();
  if (std::string err = a.check_invariants(); !err.empty()) throw AllocatorBroken{std::move(err)};
  const allocator::Stats s = a.stats();
  next_allocator_check_ = placed_ + std::max<uint64_t>(kAllocatorCheckPeriod, s.free_nodes + s.used_nodes);
}

uint32_t Builder::new_symbol(uint64_t bytes, uint32_t refs, OpKind kind, uint8_t depth, uint32_t from) {
  if (bytes == 0 || bytes > npu_.sram_bytes.value) return kNone;
  for (;;) {
    const allocator::SymbolTable::Defined d = from == kNone
                                                  ? table_.define_new(Bytes{bytes}, refs)
                                                  : table_.define_version(SymbolId{from}, Bytes{bytes}, refs);
    if (d.ok()) {
      // A broken allocator is reported where it broke, before the generator trips over it.
      if (++placed_ >= next_allocator_check_) check_allocator();
      return track(d.id, kind, depth, from);
    }
    ++sum_.oom;
    if (!make_room(d.alloc.oom.padded.value)) {
      ++sum_.skipped;
      return kNone;
    }
  }
}

void Builder::release(uint32_t sym) {
  table_.release(SymbolId{sym});
  forget(sym);
}

void Builder::forget(uint32_t sym) {
  Sym& s = syms_[sym];
  const allocator::Placement pl = placement(sym);
  shadow_.assign(pl.addr.value, pl.padded.value, s.acc);
  s.live = false;
  if (s.live_pos != kNone) {
    const uint32_t last = live_.back();
    live_[s.live_pos] = last;
    syms_[last].live_pos = s.live_pos;
    live_.pop_back();
    s.live_pos = kNone;
  }
}

bool Builder::pinned(uint32_t sym) const {
  // Four compares without branches: pick_input asks for every candidate it looks at.
  return (pin_[0] == sym) | (pin_[1] == sym) | (pin_[2] == sym) | (pin_[3] == sym);
}

uint32_t Builder::pick_input(uint64_t min_written, bool compute) {
  auto usable = [&](uint32_t id) {  // the generator's own record first, the table's last
    const Sym& s = syms_[id];
    return s.live && (!compute || s.depth < p_.chain_depth) && s.written >= min_written && !pinned(id) &&
           refs(id) > 0;
  };
  // Lifetimes: a symbol past its due point is preferred, so buffers die near their due.
  if (due_heap_.size() > 2 * live_.size() + kDueHeapSlack) drop_dead_dues();
  while (!due_heap_.empty() && !syms_[sym_of(due_heap_.front())].live) {
    std::pop_heap(due_heap_.begin(), due_heap_.end(), std::greater<>());
    due_heap_.pop_back();
  }
  if (!due_heap_.empty() && due_of(due_heap_.front()) <= now() && usable(sym_of(due_heap_.front())))
    return sym_of(due_heap_.front());
  for (int tries = 0; tries < 4 && !live_.empty(); ++tries) {
    const uint32_t id = live_[rng_.below(live_.size())];
    if (usable(id)) return id;
  }
  return kNone;
}

// The heap keeps the entries of symbols that died until they reach the front, and popping
// each one there cost a sift-down through the whole heap (a quarter of pick_input). An
// entry that died away from the front is never seen again: only pick_input's loop above
// removes entries, always the front, and it pops dead ones until a live one leads, so
// such an entry would be popped the moment it led. Dropping all of them at once (the
// front stays, dead or not: step() looks at it) leaves every front, and with unique keys
// every pick, as it was; done when they outnumber the live ones, it costs O(1) each.
void Builder::drop_dead_dues() {
  auto keep = due_heap_.begin() + 1;
  for (auto it = keep; it != due_heap_.end(); ++it)
    if (syms_[sym_of(*it)].live) *keep++ = *it;
  due_heap_.erase(keep, due_heap_.end());
  std::make_heap(due_heap_.begin(), due_heap_.end(), std::greater<>());
}

uint64_t Builder::sample_size(const SizeDist& d) {
  const uint64_t sram = npu_.sram_bytes.value;
  double u = static_cast<double>(rng_.next() >> 11) * 0x1.0p-53;
  if ((u -= d.unit) < 0) return align_;
  if ((u -= d.largest_free) < 0) {
    const uint64_t lf = table_.allocator().stats().largest_free.value;
    if (lf > 0) return std::min(lf, max_len_);
  }
  if ((u -= d.whole_sram) < 0) return std::min(sram, max_len_);
  uint64_t size;
  if (d.log_uniform) {
    // log-uniform: uniform bit length, then uniform within it
    const auto lo = static_cast<uint64_t>(d.bytes.min), hi = static_cast<uint64_t>(d.bytes.max);
    const int lb = 63 - __builtin_clzll(lo), hb = 63 - __builtin_clzll(hi);
    const int b = static_cast<int>(rng_.range(lb, hb));
    const uint64_t blo = std::max(lo, uint64_t{1} << b), bhi = std::min(hi, (uint64_t{2} << b) - 1);
    size = static_cast<uint64_t>(rng_.range(static_cast<int64_t>(blo), static_cast<int64_t>(bhi)));
  } else {
    size = static_cast<uint64_t>(rng_.range(d.bytes.min, d.bytes.max));
  }
  if ((u -= d.odd) < 0 && align_ > 1) {
    // not a multiple of the unit: the allocator must pad it
    size = size / align_ * align_ + 1 + rng_.below(align_ - 1);
  }
  return std::min({size, sram, max_len_});
}

GeneratedProgram Builder::run() {
  try {
    while (emitted_ < limit_) step();
  } catch (const LengthReached&) {
  } catch (AllocatorBroken& e) {
    allocator_check_ = std::move(e.what);
  }
  prefault_.stop();  // nothing more to fill
  // A halt ends every program; it waits for every queue to drain.
  instrs_.push_back(isa::Instruction::make(roles_.halt()));  // within the reservation: no move
  ++emitted_;
  // The token order and the shadow clocks are dead now: their memory goes back before the
  // symbols and the DDR image are built (17 MB at 1M instructions), which lowers the peak.
  order_ = isa::TokenOrderBuilder{};
  shadow_ = ShadowClocks{};

  GeneratedProgram out;
  out.bundle.isa = &isa_;
  out.bundle.config = npu_;
  out.seed = opt_.seed;
  out.ddr = ddr_;
  out.header = header_;
  // The DDR input image: random bytes from the seed, on a stream of their own.
  Rng ddr_rng(opt_.seed ^ 0xdd2dd2dd2dd2ull);
  std::vector<uint8_t>& image = out.bundle.ddr_init;
  image.resize(ddr_.input_bytes);
  // Each draw gives the next 8 bytes, least significant first: on a little-endian host,
  // its own bytes in order (one store instead of eight, over megabytes per program).
  const size_t whole = image.size() / 8 * 8;
  for (size_t i = 0; i < image.size(); i += 8) {
    const uint64_t v = ddr_rng.next();
    if (std::endian::native == std::endian::little && i < whole) {
      std::memcpy(image.data() + i, &v, 8);
      continue;
    }
    for (size_t b = 0; b < 8 && i + b < image.size(); ++b) image[i + b] = static_cast<uint8_t>(v >> (8 * b));
  }
  sum_.instructions = instrs_.size();
  sum_.peak_sram = table_.allocator().stats().high_water.value;
  out.allocator_check = allocator_check_.empty() ? table_.allocator().check_invariants() : allocator_check_;
  table_.allocator().set_event_callback({});
  out.symbols = std::move(symbols_out_);  // complete: each symbol was recorded when placed (track)
  out.bundle.instrs = std::move(instrs_);
  out.refs = std::move(refs_);
  for (const SymRef& r : out.refs) sum_.buffers += r.write;
  out.summary = sum_;
  // All final: the stream writes the rest beside the other writers. The arrays kept their
  // storage as they moved into `out` (and keep it as it moves on to the caller).
  if (feed_.stream) feed_.stream->complete({out.bundle.instrs.size(), out.refs.size()});
  feed_.stream = nullptr;
  return out;
}

Bytes estimated_peak_memory(int64_t length, const isa::NpuConfig& npu) {
  return Bytes{static_cast<uint64_t>(std::max<int64_t>(length, 0)) * kPeakBytesPerInstruction +
               npu.ddr_bytes.value};
}

GeneratedProgram generate(const isa::Isa& isa, const isa::NpuConfig& npu, const Profile& profile,
                          const GenOptions& options) {
  const int64_t length = options.length > 0 ? options.length : profile.length;
  const Bytes need = estimated_peak_memory(length, npu);
  if (options.max_memory.value != 0 && need.value > options.max_memory.value)
    throw Error(fmt::format("gen: {} instructions need about {} MiB at the peak ({} bytes per instruction and "
                            "the DDR image), over the limit of {} MiB: lower --length or raise --max-memory",
                            length, need.value >> 20, kPeakBytesPerInstruction, options.max_memory.value >> 20));
  Builder b(isa, npu, profile, options);
  return b.run();
}

}  // namespace npuforge::gen
