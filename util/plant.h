#pragma once
// The catalogue of planted bugs (issue 13): one-line defects in the allocator, the generator,
// the SystemC model and the RTL, each selected at run time by name, so that the tool's own
// checks can be measured against them (`npuforge plants`, `npuforge kill-rate`).
//
// A Plant is a plain value carried in the options of the part it breaks (Allocator::set_plant,
// gen::GenOptions::plant, sim::sc_model::ScOptions::plant); there is no global switch. Code
// tests it with `plant.is(PlantId::X)` behind `plant.any()`, one predictable branch when off.
//
// Adding a plant is one line in NPUFORGE_PLANTS below (enum value, name, layer, what it
// breaks) plus the code that honours it. An Rtl plant maps to an ScOptions setting in
// sim/sc_model/sc_backend.cc (apply_rtl_plant) and needs `--rtl` to be seen.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace npuforge {

enum class PlantLayer : uint8_t { Allocator, Generator, Model, Rtl };
std::string_view to_string(PlantLayer layer);

// X(id, name, layer, what it breaks)
#define NPUFORGE_PLANTS(X)                                                                                   \
  X(AllocSplitOffByOne, "alloc-split-off-by-one", Allocator,                                                 \
    "a split's free remainder starts one alignment unit late, losing the unit between the parts")            \
  X(AllocNoMergePrev, "alloc-no-merge-prev", Allocator, "free() never merges with a free left neighbour")    \
  X(AllocNoMergeNext, "alloc-no-merge-next", Allocator, "free() never merges with a free right neighbour")   \
  X(AllocExactFitSplit, "alloc-exact-fit-split", Allocator,                                                  \
    "an exact fit is split anyway, leaving an empty free node behind")                                       \
  X(AllocLeakNode, "alloc-leak-node", Allocator, "merged-away node slots are never released to the pool")    \
  X(AllocCounterDrift, "alloc-counter-drift", Allocator, "free() forgets to decrement the used-node count")   \
  X(AllocNoPadding, "alloc-no-padding", Allocator,                                                           \
    "alloc() reserves the raw size, not the size padded to the alignment unit")                              \
  X(GenOverlapLive, "gen-overlap-live", Generator,                                                           \
    "every 4th allocation is reported one unit inside the previous live buffer (symbol reused while live)")  \
  X(GenEarlyFree, "gen-early-free", Generator,                                                               \
    "every 4th buffer's SRAM goes back to the allocator right after placement, while still live")            \
  X(GenDropToken, "gen-drop-token", Generator, "every 4th dependency token is left out of the program")      \
  X(GenNoReuseWait, "gen-no-reuse-wait", Generator,                                                          \
    "a writer does not wait for the earlier readers of the freed bytes it reuses")                           \
  X(ModelIgnoreWait, "model-ignore-wait", Model, "the compute queue ignores its wait tokens")                \
  X(ModelStoreEarly, "model-store-early", Model,                                                             \
    "the store queue issues without waiting for the compute it depends on to retire")                        \
  X(ModelDmaOffByOne, "model-dma-off-by-one", Model, "the load DMA reads DDR one byte past the operand")      \
  X(ModelStaleRead, "model-stale-read", Model,                                                               \
    "the load queue signals before its SRAM write lands, so consumers read stale bytes")                     \
  X(ModelStoreShort, "model-store-short", Model, "the store DMA drops the last byte of every transfer")       \
  X(ModelDoubleSignal, "model-double-signal", Model, "a compute signal counts twice, releasing a later wait") \
  X(ModelFetchBitFlip, "model-fetch-bit-flip", Model,                                                      \
    "one bit of one fetched instruction word flips: the first load's SRAM destination moves one unit")      \
  X(RtlDecoderFieldBit, "rtl-decoder-field-bit", Rtl, "the Verilated decoder corrupts one field bit")         \
  X(RtlScratchpadStuckBit, "rtl-scratchpad-stuck-bit", Rtl,                                                  \
    "the Verilated scratchpad has a word-address bit stuck at 0")                                              \
  X(RtlBankConflict, "rtl-bank-conflict", Rtl,                                                               \
    "the Verilated scratchpad reports a read that lost its bank to a write as served")                        \
  X(RtlMacSign, "rtl-mac-sign", Rtl, "the Verilated compute unit's MAC zero-extends its b operand")            \
  X(RtlNoSaturation, "rtl-no-saturation", Rtl, "the Verilated compute unit's requant wraps instead of clamping") \
  X(RtlRequantRound, "rtl-requant-round", Rtl, "the Verilated compute unit's requant truncates instead of rounding")

enum class PlantId : uint16_t {
  None,
#define NPUFORGE_PLANT_ENUM(id, name, layer, breaks) id,
  NPUFORGE_PLANTS(NPUFORGE_PLANT_ENUM)
#undef NPUFORGE_PLANT_ENUM
};

struct Plant {
  PlantId id = PlantId::None;
  constexpr bool any() const { return id != PlantId::None; }
  constexpr bool is(PlantId p) const { return id == p; }
  constexpr bool operator==(const Plant&) const = default;
};

struct PlantInfo {
  PlantId id;
  std::string_view name;
  PlantLayer layer;
  std::string_view breaks;  // one line
};

// Every plant, in catalogue order (None excluded).
std::span<const PlantInfo> plant_catalogue();
// The catalogue entry of a plant other than None.
const PlantInfo& plant_info(PlantId id);
// "" for None.
std::string_view plant_name(Plant plant);
// "" and "none" give None; an unknown name throws npuforge::Error listing the valid names.
Plant parse_plant(std::string_view name);
// True when the plant lives in RTL (its runs need --rtl).
bool plant_needs_rtl(Plant plant);

}  // namespace npuforge
