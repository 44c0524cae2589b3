#include "util/plant.h"

#include <array>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge {
namespace {

constexpr std::array kCatalogue = {
#define NPUFORGE_RTL(module, parameter, value) PlantRtlVariant{#module, #parameter, value}
#define NPUFORGE_NOT_RTL PlantRtlVariant{}
#define NPUFORGE_PLANT_INFO(id, name, layer, rtl, finds, breaks) \
  PlantInfo{PlantId::id, name, PlantLayer::layer, rtl, finds, breaks},
    NPUFORGE_PLANTS(NPUFORGE_PLANT_INFO)
#undef NPUFORGE_PLANT_INFO
#undef NPUFORGE_NOT_RTL
#undef NPUFORGE_RTL
};

// Every Rtl plant names its variant and no other plant does.
constexpr bool variants_match_layers() {
  for (const PlantInfo& p : kCatalogue)
    if ((p.layer == PlantLayer::Rtl) == p.rtl.module.empty()) return false;
  return true;
}
static_assert(variants_match_layers(), "an Rtl plant needs NPUFORGE_RTL(...), every other NPUFORGE_NOT_RTL");

}  // namespace

std::string_view to_string(PlantLayer layer) {
  switch (layer) {
    case PlantLayer::Allocator: return "allocator";
    case PlantLayer::Generator: return "generator";
    case PlantLayer::Model: return "model";
    case PlantLayer::Rtl: return "rtl";
  }
  return "?";
}

std::span<const PlantInfo> plant_catalogue() { return kCatalogue; }

const PlantInfo& plant_info(PlantId id) {
  const auto i = static_cast<size_t>(id);
  if (i == 0 || i > kCatalogue.size()) throw Error(fmt::format("plant #{}: no such plant", i));
  return kCatalogue[i - 1];
}

std::string_view plant_name(Plant plant) { return plant.any() ? plant_info(plant.id).name : std::string_view(); }

Plant parse_plant(std::string_view name) {
  if (name.empty() || name == "none") return {};
  for (const PlantInfo& p : kCatalogue)
    if (p.name == name) return Plant{p.id};
  std::string valid;
  for (const PlantInfo& p : kCatalogue) valid += fmt::format("{}{}", valid.empty() ? "" : ", ", p.name);
  throw Error(fmt::format("--plant: unknown plant '{}' (valid: {}; `npuforge plants` describes them)", name, valid));
}

bool plant_needs_rtl(Plant plant) { return plant.any() && plant_info(plant.id).layer == PlantLayer::Rtl; }

bool plant_in_rtl_module(Plant plant, std::string_view module) {
  return plant_needs_rtl(plant) && plant_info(plant.id).rtl.module == module;
}

Plant parse_rtl_plant(std::string_view name) {
  if (name == "none") return {};
  for (const PlantInfo& p : kCatalogue)
    if (p.layer == PlantLayer::Rtl && p.name == name) return Plant{p.id};
  std::string valid = "none";
  for (const PlantInfo& p : kCatalogue)
    if (p.layer == PlantLayer::Rtl) valid += fmt::format(", {}", p.name);
  throw Error(fmt::format("--rtl-variant: '{}' is not an RTL plant (valid: {}; `npuforge plants` describes them)",
                          name, valid));
}

}  // namespace npuforge
