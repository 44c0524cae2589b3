#include "regress/proc.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <climits>
#include <cstring>
#include <map>
#include <thread>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::regress {
namespace {

int open_out(const std::string& path) {
  const char* p = path.empty() ? "/dev/null" : path.c_str();
  return ::open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

sigset_t sigchld_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  return set;
}

void unblock_sigchld() {
  const sigset_t set = sigchld_set();
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

// Sleeps until a child changes state or `ms` pass (SIGCHLD is blocked while the pool runs,
// so a child that exits between the last waitpid and here still wakes us).
void wait_for_child(long ms) {
  const sigset_t set = sigchld_set();
  const timespec ts{ms / 1000, (ms % 1000) * 1'000'000};
  (void)::sigtimedwait(&set, nullptr, &ts);
}

pid_t spawn(const std::vector<std::string>& argv, const std::string& out, const std::string& err,
            const std::function<int()>& in_child = {}) {
  if (argv.empty() && !in_child) throw Error("run_process: empty command");
  const int fo = open_out(out);
  const int fe = (err == out && !out.empty()) ? fo : open_out(err);
  if (fo < 0 || fe < 0) throw Error(fmt::format("cannot open '{}' or '{}' for writing: {}", out, err, std::strerror(errno)));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);  // the child must not write the parent's buffered output again
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    unblock_sigchld();  // run_pool blocks it; an exec'd program expects the default
    die_with_parent(parent);
  }
  if (pid == 0 && in_child) {
    ::dup2(fo, 1);
    ::dup2(fe, 2);
    ::_exit(run_child_function(in_child));  // no atexit handlers or static destructors of the parent's state
  }
  if (pid == 0) {
    ::dup2(fo, 1);
    ::dup2(fe, 2);
    ::execv(args[0], args.data());
    const std::string msg = fmt::format("exec {} failed: {}\n", argv[0], std::strerror(errno));
    (void)!::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(fo);
  if (fe != fo) ::close(fe);
  if (pid < 0) throw Error(fmt::format("fork failed: {}", std::strerror(errno)));
  return pid;
}

ProcResult decode(int status, double seconds, bool timed_out) {
  ProcResult r;
  r.seconds = seconds;
  r.timed_out = timed_out;
  if (WIFEXITED(status) && !timed_out) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// Kills and reaps every running child (their results are not wanted any more).
template <typename Map>
void stop_all(Map& running) {
  for (const auto& [pid, r] : running) ::kill(pid, SIGKILL);
  for (const auto& [pid, r] : running) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  running.clear();
}

}  // namespace

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void die_with_parent(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(128 + SIGKILL);
}

int run_child_function(const std::function<int()>& fn) {
  int code = 2;
  try {
    code = fn();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  std::fflush(nullptr);
  return code;
}

std::string self_exe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error("cannot read /proc/self/exe");
  return std::string(buf, static_cast<size_t>(n));
}

ProcResult run_process(const std::vector<std::string>& argv, const std::string& out_path,
                       const std::string& err_path, double timeout_s) {
  const auto t0 = Clock::now();
  const pid_t pid = spawn(argv, out_path, err_path);
  int status = 0;
  bool timed_out = false;
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, timeout_s > 0 ? WNOHANG : 0);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) throw Error(fmt::format("waitpid failed: {}", std::strerror(errno)));
    if (timeout_s > 0 && seconds_since(t0) > timeout_s && !timed_out) {
      ::kill(pid, SIGKILL);
      timed_out = true;
    }
    if (timeout_s > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return decode(status, seconds_since(t0), timed_out);
}

void run_pool(const std::vector<Task>& tasks, unsigned workers, double timeout_s,
              const std::function<void(size_t, const ProcResult&)>& on_done,
              const std::function<void()>& on_tick, const bool* stop) {
  struct Running {
    size_t index;
    Clock::time_point start;
    bool killed = false;
  };
  std::map<pid_t, Running> running;
  size_t next = 0;
  auto last_tick = Clock::now();
  workers = std::max(1u, workers);
  const sigset_t chld = sigchld_set();
  sigset_t old_mask;
  ::sigprocmask(SIG_BLOCK, &chld, &old_mask);
  while (next < tasks.size() || !running.empty()) {
    if (stop && *stop) {
      stop_all(running);
      break;
    }
    while (running.size() < workers && next < tasks.size()) {
      const Task& t = tasks[next];
      running.emplace(spawn(t.argv, t.out_path, t.err_path, t.in_child), Running{next, Clock::now()});
      ++next;
    }
    bool reaped = false;
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      const pid_t r = ::waitpid(it->first, &status, WNOHANG);
      if (r == it->first) {
        const Running done = it->second;
        it = running.erase(it);
        on_done(done.index, decode(status, seconds_since(done.start), done.killed));
        reaped = true;
        continue;
      }
      if (timeout_s > 0 && !it->second.killed && seconds_since(it->second.start) > timeout_s) {
        ::kill(it->first, SIGKILL);
        it->second.killed = true;
      }
      ++it;
    }
    if (reaped || seconds_since(last_tick) > 0.2) {
      on_tick();
      last_tick = Clock::now();
    }
    if (!reaped) wait_for_child(20);
  }
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  on_tick();
}

}  // namespace npuforge::regress
