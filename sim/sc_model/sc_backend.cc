#include "sim/sc_model/sc_backend.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "util/error.h"
#include "sim/sc_model/npu_top.h"

// libsystemc.so defines main() and calls sc_main(); npuforge programs have their own main()
// and start the simulation with sc_start(), so this one only satisfies the linker. Weak, so
// that a test or tool may still define its own.
extern "C" __attribute__((weak)) int sc_main(int, char**) {
  std::fputs("npuforge: sc_main is not used; SystemC runs are started by sim::sc_model\n", stderr);
  return 1;
}

namespace npuforge::sim::sc_model {
namespace {

void quiet_systemc() {
  // The banner is printed when the SystemC kernel is first touched; keep stdout/stderr clean.
  ::setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
}

// "Simulation stopped by user" and "tracing timescale unit set" are routine here.
void quiet_reports() {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
}

constexpr RtlVariantInfo kVariants[] = {
    {RtlVariant::DecoderField, "rtl_decoder_field", "npu_decoder inverts bit 0 of the first own field"},
    {RtlVariant::SpadStuckBit, "rtl_spad_stuck_bit", "npu_scratchpad has a word-address bit stuck at 0"},
    {RtlVariant::BankConflict, "rtl_bank_conflict",
     "npu_scratchpad reports a read served when it lost its bank to a write"},
    {RtlVariant::MacSign, "rtl_mac_sign", "npu_compute's MAC zero-extends the int8 b operand"},
    {RtlVariant::NoSaturation, "rtl_no_saturation", "npu_compute's requant wraps to 8 bits instead of clamping"},
    {RtlVariant::RequantRound, "rtl_requant_round", "npu_compute's requant truncates instead of rounding"},
};

}  // namespace

std::span<const RtlVariantInfo> rtl_variants() { return kVariants; }

std::string_view to_string(RtlVariant v) {
  for (const auto& info : kVariants)
    if (info.variant == v) return info.name;
  return "none";
}

RtlVariant rtl_variant_from_name(std::string_view name) {
  if (name == "none") return RtlVariant::None;
  std::string list = "none";
  for (const auto& info : kVariants) {
    if (info.name == name) return info.variant;
    list += fmt::format(", {}", info.name);
  }
  throw Error(fmt::format("unknown RTL variant '{}' (expected one of: {})", name, list));
}

bool rtl_decoder_available() {
#if NPUFORGE_HAVE_RTL_DECODER
  return true;
#else
  return false;
#endif
}

bool can_simulate() {
  quiet_systemc();
  return sc_core::sc_get_status() == sc_core::SC_ELABORATION && !sc_core::sc_start_of_simulation_invoked();
}

void restart_kernel() {
  if (can_simulate()) return;
  // sc_get_curr_simcontext() creates the default context on demand; a new one in its place
  // is a fresh kernel (time 0, no objects, elaboration phase). The process's first kernel is
  // never deleted: libsystemc's own static events (sc_process_handle's non_event) were
  // registered with it when the library loaded, and their destructors at exit look their
  // names up in its object manager (a use after free, seen as a crash at exit). Only the
  // kernels made here are deleted, so a worker holds at most two, however many seeds it
  // runs. The one piece of process-global state here mirrors SystemC's own.
  static sc_core::sc_simcontext* made_here = nullptr;
  sc_core::sc_simcontext* old = sc_core::sc_curr_simcontext;
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext;
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  if (old == made_here) delete old;  // deleted after the switch: its destructor sees the new one as current
  made_here = sc_core::sc_curr_simcontext;
}

std::vector<ScOutput> run_together(const Semantics& sem, std::span<const ScJob> jobs) {
  if (!can_simulate())
    throw Error("SystemC model: a simulation already ran in this process; SystemC elaborates "
                "once per process, so run each simulation in its own process (or use run_together)");
  for (const ScJob& job : jobs) {
    if (!job.program || !job.checkers) throw Error("SystemC model: a job without program or checkers");
    if (!job.program->isa) throw Error(fmt::format("SystemC model: program {} has no ISA", job.program->name));
  }
  quiet_reports();
  size_t running = jobs.size();
  auto on_done = [&running] {
    if (--running == 0) sc_core::sc_stop();
  };
  std::vector<std::unique_ptr<NpuTop>> tops;
  for (size_t k = 0; k < jobs.size(); ++k) {
    tops.push_back(std::make_unique<NpuTop>(fmt::format("npu{}", k).c_str(), *jobs[k].program, sem,
                                            *jobs[k].checkers, apply_rtl_plant(jobs[k].options), on_done));
  }
  sc_core::sc_start();
  std::vector<ScOutput> outputs;
  for (size_t k = 0; k < jobs.size(); ++k) {
    outputs.push_back(tops[k]->output());
    jobs[k].checkers->on_end();
  }
  return outputs;
}

ScOptions apply_rtl_plant(ScOptions o) {
  if (!plant_needs_rtl(o.plant)) return o;
  if (o.sram == SramModel::Tlm)
    throw Error(fmt::format("plant {} lives in RTL: simulate with --rtl", plant_name(o.plant)));
  // One line per RTL plant: the ScOptions setting that selects its Verilated variant.
  if (o.plant.is(PlantId::RtlDecoderFieldBit)) o.rtl_decoder_bug = true;
  if (o.plant.is(PlantId::RtlScratchpadStuckBit)) o.sram = SramModel::RtlStuckBit;
  if (o.plant.is(PlantId::RtlBankConflict)) o.rtl_variant = RtlVariant::BankConflict;
  if (o.plant.is(PlantId::RtlMacSign)) o.rtl_variant = RtlVariant::MacSign;
  if (o.plant.is(PlantId::RtlNoSaturation)) o.rtl_variant = RtlVariant::NoSaturation;
  if (o.plant.is(PlantId::RtlRequantRound)) o.rtl_variant = RtlVariant::RequantRound;
  return o;
}

ScBackend::ScBackend(const Semantics& sem, ScOptions options) : sem_(&sem), options_(apply_rtl_plant(std::move(options))) {}

std::string_view ScBackend::name() const {
  switch (options_.sram) {
    case SramModel::Tlm: return "systemc-tlm";
    case SramModel::Rtl: return "systemc-rtl";
    case SramModel::RtlStuckBit: return "systemc-rtl-stuck-bit";
    case SramModel::RtlConflictBug: return "systemc-rtl-conflict-bug";
  }
  return "systemc";
}

RunResult ScBackend::run(const bundle::Program& program, Checkers& checkers) {
  const ScJob job{&program, &checkers, options_};
  std::vector<ScOutput> out = run_together(*sem_, std::span<const ScJob>(&job, 1));
  stats_ = std::move(out[0].stats);
  ddr_ = std::move(out[0].ddr);
  return std::move(out[0].result);
}

}  // namespace npuforge::sim::sc_model
