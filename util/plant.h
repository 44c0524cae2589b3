#pragma once
// The catalogue of planted bugs: one-line defects in the allocator, the generator,
// the SystemC model and the RTL, each selected at run time by name, so that the tool's own
// checks can be measured against them (`npuforge plants`, `npuforge kill-rate`).
//
// A Plant is a plain value carried in the options of the part it breaks (Allocator::set_plant,
// gen::GenOptions::plant, sim::sc_model::ScOptions::plant); there is no global switch. Code
// tests it with `plant.is(PlantId::X)` behind `plant.any()`, one predictable branch when off.
//
// Adding a plant is one entry in NPUFORGE_PLANTS below (enum value, name, layer, RTL variant,
// the finding that catches it, what it breaks) plus the code that honours it. An Rtl plant is a parameter of one
// rtl_stubs/ module: its entry alone makes the build Verilate the variant and the block pick
// it (sim/sc_model), and it needs `--rtl` to be seen.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace npuforge {

enum class PlantLayer : uint8_t { Allocator, Generator, Model, Rtl };
std::string_view to_string(PlantLayer layer);

// X(id, name, layer, rtl, finds, what it breaks). `finds` is the finding kind that catches it
// in the nightly runs, as `npuforge kill-rate` names it (measured: every plant caught at seed
// 1; tests/regress/plants_test.cc checks it). `rtl` says how an Rtl plant is built:
// NPUFORGE_RTL(module, PARAMETER, value) is rtl_stubs/<module>.sv Verilated with -GPARAMETER=value
// as the model class V<id> (rtl_stubs/CMakeLists.txt reads these lines and generates the
// variants and the per-module lists of rtl_plant_models.h from them); NPUFORGE_NOT_RTL for the
// other layers. Keep one entry's `X(id, "name", layer, rtl` on one line: CMake matches it.
#define NPUFORGE_PLANTS(X)                                                                                        \
  X(AllocSplitOffByOne, "alloc-split-off-by-one", Allocator, NPUFORGE_NOT_RTL,                                    \
    "allocator/invariant",                                                                                        \
    "a split's free remainder starts one alignment unit late, losing the unit between the parts")                 \
  X(AllocNoMergePrev, "alloc-no-merge-prev", Allocator, NPUFORGE_NOT_RTL,                                         \
    "allocator/invariant", "free() never merges with a free left neighbour")                                      \
  X(AllocNoMergeNext, "alloc-no-merge-next", Allocator, NPUFORGE_NOT_RTL,                                         \
    "allocator/invariant", "free() never merges with a free right neighbour")                                     \
  X(AllocExactFitSplit, "alloc-exact-fit-split", Allocator, NPUFORGE_NOT_RTL,                                     \
    "allocator/invariant", "an exact fit is split anyway, leaving an empty free node behind")                     \
  X(AllocLeakNode, "alloc-leak-node", Allocator, NPUFORGE_NOT_RTL,                                                \
    "allocator/invariant", "merged-away node slots are never released to the pool")                               \
  X(AllocCounterDrift, "alloc-counter-drift", Allocator, NPUFORGE_NOT_RTL,                                        \
    "allocator/invariant", "free() forgets to decrement the used-node count")                                     \
  X(AllocNoPadding, "alloc-no-padding", Allocator, NPUFORGE_NOT_RTL,                                              \
    "allocator/invariant", "alloc() reserves the raw size, not the size padded to the alignment unit")            \
  X(GenOverlapLive, "gen-overlap-live", Generator, NPUFORGE_NOT_RTL,                                              \
    "overlap/live-overlap",                                                                                       \
    "every 4th allocation is reported one unit inside the previous live buffer (symbol reused while live)")       \
  X(GenEarlyFree, "gen-early-free", Generator, NPUFORGE_NOT_RTL,                                                  \
    "overlap/live-overlap",                                                                                       \
    "every 4th buffer's SRAM goes back to the allocator right after placement, while still live")                 \
  X(GenDropToken, "gen-drop-token", Generator, NPUFORGE_NOT_RTL,                                                  \
    "shadow/read-unwritten", "every 4th dependency token is left out of the program")                             \
  X(GenNoReuseWait, "gen-no-reuse-wait", Generator, NPUFORGE_NOT_RTL,                                             \
    "hazard/hazard", "a writer does not wait for the earlier readers of the freed bytes it reuses")               \
  X(ModelIgnoreWait, "model-ignore-wait", Model, NPUFORGE_NOT_RTL,                                                \
    "executor/order-violation", "the compute queue ignores its wait tokens")                                      \
  X(ModelStoreEarly, "model-store-early", Model, NPUFORGE_NOT_RTL,                                                \
    "executor/order-violation", "the store queue issues without waiting for the compute it depends on to retire") \
  X(ModelDmaOffByOne, "model-dma-off-by-one", Model, NPUFORGE_NOT_RTL,                                            \
    "golden/ddr-mismatch", "the load DMA reads DDR one byte past the operand")                                    \
  X(ModelStaleRead, "model-stale-read", Model, NPUFORGE_NOT_RTL,                                                  \
    "executor/order-violation",                                                                                   \
    "the load queue signals before its SRAM write lands, so consumers read stale bytes")                          \
  X(ModelStoreShort, "model-store-short", Model, NPUFORGE_NOT_RTL,                                                \
    "golden/ddr-mismatch", "the store DMA drops the last byte of every transfer")                                 \
  X(ModelDoubleSignal, "model-double-signal", Model, NPUFORGE_NOT_RTL,                                            \
    "executor/order-violation", "a compute signal counts twice, releasing a later wait")                          \
  X(ModelFetchBitFlip, "model-fetch-bit-flip", Model, NPUFORGE_NOT_RTL,                                           \
    "shadow/outside-buffer",                                                                                      \
    "one bit of one fetched instruction word flips: the first load's SRAM destination moves one unit")            \
  X(RtlDecoderFieldBit, "rtl-decoder-field-bit", Rtl, NPUFORGE_RTL(npu_decoder, PLANT_FIELD_BUG, 1),              \
    "rtl/rtl-mismatch", "the Verilated decoder corrupts one field bit")                                           \
  X(RtlScratchpadStuckBit, "rtl-scratchpad-stuck-bit", Rtl, NPUFORGE_RTL(npu_scratchpad, STUCK_ADDR_BIT, 5),      \
    "golden/ddr-mismatch", "the Verilated scratchpad has a word-address bit stuck at 0")                          \
  X(RtlBankConflict, "rtl-bank-conflict", Rtl, NPUFORGE_RTL(npu_scratchpad, PLANT_CONFLICT_BUG, 1),               \
    "rtl/rtl-mismatch", "the Verilated scratchpad reports a read that lost its bank to a write as served")        \
  X(RtlMacSign, "rtl-mac-sign", Rtl, NPUFORGE_RTL(npu_compute, PLANT_MAC_SIGN, 1),                                \
    "golden/ddr-mismatch", "the Verilated compute unit's MAC zero-extends its b operand")                         \
  X(RtlNoSaturation, "rtl-no-saturation", Rtl, NPUFORGE_RTL(npu_compute, PLANT_NO_SATURATION, 1),                 \
    "golden/ddr-mismatch", "the Verilated compute unit's requant wraps instead of clamping")                      \
  X(RtlRequantRound, "rtl-requant-round", Rtl, NPUFORGE_RTL(npu_compute, PLANT_REQUANT_ROUND, 1),                 \
    "golden/ddr-mismatch", "the Verilated compute unit's requant truncates instead of rounding")

enum class PlantId : uint16_t {
  None,
#define NPUFORGE_PLANT_ENUM(id, name, layer, rtl, finds, breaks) id,
  NPUFORGE_PLANTS(NPUFORGE_PLANT_ENUM)
#undef NPUFORGE_PLANT_ENUM
};

struct Plant {
  PlantId id = PlantId::None;
  constexpr bool any() const { return id != PlantId::None; }
  constexpr bool is(PlantId p) const { return id == p; }
  constexpr bool operator==(const Plant&) const = default;
};

// An Rtl plant's Verilated variant: rtl_stubs/<module>.sv with -G<parameter>=<value>.
struct PlantRtlVariant {
  std::string_view module;  // empty for the other layers
  std::string_view parameter;
  int64_t value = 0;
};

struct PlantInfo {
  PlantId id;
  std::string_view name;
  PlantLayer layer;
  PlantRtlVariant rtl;
  std::string_view finds;   // the finding kind that catches it ("golden/ddr-mismatch")
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
// True when `plant` is an RTL plant of rtl_stubs/<module>.sv (a block picks its variant by it).
bool plant_in_rtl_module(Plant plant, std::string_view module);
// The RTL plant named `name` (`npuforge sim --rtl-variant`); throws npuforge::Error listing the
// RTL plants for a name that is not one. "none" gives None.
Plant parse_rtl_plant(std::string_view name);

}  // namespace npuforge
