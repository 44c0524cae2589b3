#include "regress/worker_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>

#include <fmt/core.h>

#include "util/error.h"

namespace npuforge::regress {
namespace {

// One answer of a worker: the task it ran and run_worker's exit code.
struct Answer {
  uint64_t index;
  int64_t code;
  uint64_t retiring;  // non-zero: the worker exits after this answer and must be replaced
};

// Seeds a worker runs before it is replaced. Under AddressSanitizer one: SystemC's coroutine
// switches are not announced to ASan (as Debian builds SystemC 2.3.4), and
// the stack poison they leave makes ASan report false stack-buffer-overflows in the next
// seed's code. The pool's protocol, replacement and charging are the same either way.
#if defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kSeedsPerWorker = 1;
#else
constexpr uint64_t kSeedsPerWorker = UINT64_MAX;
#endif

// Reads exactly `n` bytes; false at end of file (the other side closed) or on an error.
bool read_full(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// The task's log becomes stdout and stderr (as the per-seed child had them).
void redirect_output(const Task& t) {
  const char* path = t.out_path.empty() ? "/dev/null" : t.out_path.c_str();
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;  // the seed still runs; its messages are lost (as with a full disk)
  ::dup2(fd, 1);
  ::dup2(fd, 2);
  ::close(fd);
}

// The worker's life: a task index in, its answer out, until the runner closes the pipe.
[[noreturn]] void worker_main(const std::vector<Task>& tasks, int cmd, int res) {
  uint64_t index = 0;
  for (uint64_t ran = 1; read_full(cmd, &index, sizeof index); ++ran) {
    if (index >= tasks.size()) break;
    redirect_output(tasks[index]);
    const int code = run_child_function(tasks[index].in_child);
    const Answer a{index, code, ran >= kSeedsPerWorker};
    if (::write(res, &a, sizeof a) != static_cast<ssize_t>(sizeof a)) break;  // the runner is gone
    if (a.retiring) break;
  }
  ::_exit(0);  // no atexit handlers or static destructors of the runner's state
}

struct Worker {
  pid_t pid = -1;
  int cmd = -1;  // runner -> worker: task indices
  int res = -1;  // worker -> runner: answers
  std::optional<size_t> task;  // the seed it is on
  Clock::time_point start;
  bool killed = false;  // killed at the timeout
};

// Forks a worker; `others` are the pipes of the running workers, which it must not hold
// open (a dead worker's pipe would never report end of file).
Worker start_worker(const std::vector<Task>& tasks, const std::vector<Worker>& others) {
  int cmd[2], res[2];
  if (::pipe(cmd) != 0) throw Error(fmt::format("pipe failed: {}", std::strerror(errno)));
  if (::pipe(res) != 0) {
    ::close(cmd[0]);
    ::close(cmd[1]);
    throw Error(fmt::format("pipe failed: {}", std::strerror(errno)));
  }
  std::fflush(nullptr);  // the child must not write the runner's buffered output again
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    die_with_parent(parent);
    ::signal(SIGPIPE, SIG_DFL);
    for (const Worker& w : others) {
      ::close(w.cmd);
      ::close(w.res);
    }
    ::close(cmd[1]);
    ::close(res[0]);
    worker_main(tasks, cmd[0], res[1]);
  }
  ::close(cmd[0]);
  ::close(res[1]);
  if (pid < 0) {
    ::close(cmd[1]);
    ::close(res[0]);
    throw Error(fmt::format("fork failed: {}", std::strerror(errno)));
  }
  Worker w;
  w.pid = pid;
  w.cmd = cmd[1];
  w.res = res[0];
  return w;
}

void close_worker(Worker& w) {
  ::close(w.cmd);
  ::close(w.res);
  w.cmd = w.res = -1;
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

ProcResult died(int status, const Worker& w) {
  ProcResult r;
  r.seconds = seconds_since(w.start);
  r.timed_out = w.killed;
  if (WIFEXITED(status) && !w.killed) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  // A worker that exits between seeds with code 0 still left its seed unanswered.
  if (r.exit_code == 0) r.exit_code = -1;
  return r;
}

class Pool {
 public:
  Pool(const std::vector<Task>& tasks, unsigned workers, double timeout_s,
       const std::function<void(size_t, const ProcResult&)>& on_done)
      : tasks_(tasks), max_(std::max(1u, workers)), timeout_s_(timeout_s), on_done_(on_done) {}
  ~Pool() { stop_all(); }

  size_t started() const { return started_; }
  bool busy() const { return next_ < tasks_.size() || !workers_.empty(); }

  // Gives every idle worker its next seed, starting workers up to the limit.
  void feed() {
    for (Worker& w : workers_)
      if (!w.task) send(w);
    while (workers_.size() < max_ && next_ < tasks_.size()) {
      workers_.push_back(start_worker(tasks_, workers_));
      ++started_;
      send(workers_.back());
    }
    // Workers with nothing left to do are closed (they exit at end of file) and reaped.
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (it->task) {
        ++it;
        continue;
      }
      close_worker(*it);
      reap(it->pid);
      it = workers_.erase(it);
    }
  }

  // Waits up to `ms` for answers, handles them and any worker that died or timed out.
  // Returns whether a seed finished.
  bool step(int ms) {
    std::vector<pollfd> fds;
    for (const Worker& w : workers_) fds.push_back(pollfd{w.res, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), ms) < 0 && errno != EINTR)
      throw Error(fmt::format("poll failed: {}", std::strerror(errno)));
    bool finished = false;
    for (size_t k = 0; k < workers_.size(); ++k) {
      Worker& w = workers_[k];
      if (!fds[k].revents || !w.task) continue;
      Answer a{};
      if (read_full(w.res, &a, sizeof a) && a.index == *w.task) {
        answered(w, a);
        finished = true;
      } else {
        lost(w);  // end of file: the worker died on its seed
        finished = true;
      }
    }
    std::erase_if(workers_, [](const Worker& w) { return w.pid < 0; });
    check_timeouts();
    return finished;
  }

  void stop_all() {
    for (Worker& w : workers_) ::kill(w.pid, SIGKILL);
    for (Worker& w : workers_) {
      close_worker(w);
      reap(w.pid);
    }
    workers_.clear();
  }

 private:
  void send(Worker& w) {
    if (next_ >= tasks_.size()) return;
    const uint64_t index = next_;
    w.task = next_++;
    w.start = Clock::now();
    w.killed = false;
    // A worker that died since its last answer fails this write (EPIPE; SIGPIPE is
    // ignored) or never answers: either way its end of file charges this seed.
    (void)!::write(w.cmd, &index, sizeof index);
  }

  void answered(Worker& w, const Answer& a) {
    ProcResult r;
    r.seconds = seconds_since(w.start);
    r.exit_code = static_cast<int>(a.code);
    w.task.reset();
    if (a.retiring) {  // it exits now: reaped here, replaced by feed()
      close_worker(w);
      reap(w.pid);
      w.pid = -1;
    }
    on_done_(a.index, r);
  }

  // The worker died (or was killed at the timeout) on its seed: that seed is charged, the
  // worker is reaped and replaced by feed().
  void lost(Worker& w) {
    ::kill(w.pid, SIGKILL);  // a worker that closed its pipe but lingers
    close_worker(w);
    const int status = reap(w.pid);
    const size_t index = *w.task;
    const ProcResult r = died(status, w);
    w.pid = -1;
    on_done_(index, r);
  }

  void check_timeouts() {
    if (timeout_s_ <= 0) return;
    for (Worker& w : workers_) {
      if (w.task && !w.killed && seconds_since(w.start) > timeout_s_) {
        ::kill(w.pid, SIGKILL);  // its pipe then reports end of file: lost() charges the seed
        w.killed = true;
      }
    }
  }

  const std::vector<Task>& tasks_;
  unsigned max_;
  double timeout_s_;
  const std::function<void(size_t, const ProcResult&)>& on_done_;
  std::vector<Worker> workers_;
  size_t next_ = 0;
  size_t started_ = 0;
};

}  // namespace

uint64_t seeds_per_worker() { return kSeedsPerWorker; }

size_t run_worker_pool(const std::vector<Task>& tasks, unsigned workers, double timeout_s,
                     const std::function<void(size_t, const ProcResult&)>& on_done,
                     const std::function<void()>& on_tick, const bool* stop) {
  for (const Task& t : tasks)
    if (!t.in_child) throw Error("run_worker_pool: a task without in_child");
  // A write to a worker that just died must fail with EPIPE, not kill the runner.
  struct sigaction ignore{}, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  Pool pool(tasks, workers, timeout_s, on_done);
  auto last_tick = Clock::now();
  while (pool.busy()) {
    if (stop && *stop) break;
    pool.feed();
    if (!pool.busy()) break;
    const bool finished = pool.step(20);
    if (finished || seconds_since(last_tick) > 0.2) {
      on_tick();
      last_tick = Clock::now();
    }
  }
  pool.stop_all();
  ::sigaction(SIGPIPE, &old, nullptr);
  on_tick();
  return pool.started();
}

}  // namespace npuforge::regress
