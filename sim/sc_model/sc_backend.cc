#include "sim/sc_model/sc_backend.h"

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "util/error.h"
#include "sim/sc_model/npu_top.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

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

#if defined(__SANITIZE_ADDRESS__)
// SystemC 2.3.4 announces its coroutine switches to AddressSanitizer (__sanitizer_start/
// finish_switch_fiber), but the way back to this thread's own stack at the end of a run is
// left out: ASan goes on taking a coroutine's freed stack for this thread's, ignores the
// stack clean-up every later C++ throw asks for ("ASan is ignoring requested
// __asan_handle_no_return"), and the redzones of the frames those throws unwind are then
// reported as stack-buffer-overflows in whatever runs next in the process (the next program
// simulated, a YAML error). After a run, this announces the switch back to this thread's
// stack and clears the shadow below the caller's frame, where nothing is live.
[[gnu::noinline]] void restore_asan_stack() {
  pthread_attr_t attr;
  void* low = nullptr;
  size_t size = 0;
  if (::pthread_getattr_np(::pthread_self(), &attr) != 0) return;
  ::pthread_attr_getstack(&attr, &low, &size);
  ::pthread_attr_destroy(&attr);
  void* fake_stack = nullptr;
  const void* was_bottom = nullptr;
  size_t was_size = 0;
  __sanitizer_start_switch_fiber(&fake_stack, low, size);
  __sanitizer_finish_switch_fiber(fake_stack, &was_bottom, &was_size);
  char* const here = static_cast<char*>(__builtin_frame_address(0));
  if (here > low) __asan_unpoison_memory_region(low, static_cast<size_t>(here - static_cast<char*>(low)));
}
#else
void restore_asan_stack() {}
#endif

// "Simulation stopped by user" and "tracing timescale unit set" are routine here.
void quiet_reports() {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
}

// An RTL plant runs in the RTL blocks only.
void check_rtl_plant(const ScOptions& o) {
  if (plant_needs_rtl(o.plant) && o.sram == SramModel::Tlm)
    throw Error(fmt::format("plant {} lives in RTL: simulate with --rtl", plant_name(o.plant)));
}

}  // namespace

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
  restore_asan_stack();
}

std::vector<ScOutput> run_together(const Semantics& sem, std::span<const ScJob> jobs) {
  if (!can_simulate())
    throw Error("SystemC model: a simulation already ran on this SystemC kernel; SystemC elaborates once per "
                "kernel, so install a fresh one first (restart_kernel; sim::verify::run does) or elaborate the "
                "models side by side (run_together)");
  for (const ScJob& job : jobs) {
    if (!job.program || !job.checkers) throw Error("SystemC model: a job without program or checkers");
    check_rtl_plant(job.options);
    if (!job.program->isa) throw Error(fmt::format("SystemC model: program {} has no ISA", job.program->name));
  }
  quiet_reports();
  struct AfterRun {  // also when a run throws: its throw left this thread's stack to ASan's cleanup
    ~AfterRun() { restore_asan_stack(); }
  } after_run;  // declared before the tops: they are gone when it runs
  size_t running = jobs.size();
  auto on_done = [&running] {
    if (--running == 0) sc_core::sc_stop();
  };
  std::vector<std::unique_ptr<NpuTop>> tops;
  for (size_t k = 0; k < jobs.size(); ++k) {
    tops.push_back(std::make_unique<NpuTop>(fmt::format("npu{}", k).c_str(), *jobs[k].program, sem,
                                            *jobs[k].checkers, jobs[k].options, on_done));
  }
  sc_core::sc_start();
  std::vector<ScOutput> outputs;
  for (size_t k = 0; k < jobs.size(); ++k) {
    outputs.push_back(tops[k]->output());
    jobs[k].checkers->on_end();
  }
  return outputs;
}

ScBackend::ScBackend(const Semantics& sem, ScOptions options) : sem_(&sem), options_(std::move(options)) {
  check_rtl_plant(options_);
}

std::string_view ScBackend::name() const {
  switch (options_.sram) {
    case SramModel::Tlm: return "systemc-tlm";
    case SramModel::Rtl: return "systemc-rtl";
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
