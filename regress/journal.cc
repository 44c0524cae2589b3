#include "regress/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include "regress/json_read.h"
#include "regress/results.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/text.h"

namespace npuforge::regress {
namespace fs = std::filesystem;
namespace {

std::string absolute(const std::string& p) { return p.empty() ? p : fs::absolute(p).lexically_normal().string(); }

std::string job_json(const Job& j) {
  return fmt::format(
      "{{\"index\": {}, \"run\": {}, \"seed\": {}, \"profile\": {}, \"npu\": {}, \"length\": {}, \"rtl\": {}, "
      "\"plant\": {}}}",
      j.index, util::json_quote(j.run), j.seed, util::json_quote(absolute(j.profile)),
      util::json_quote(absolute(j.npu)), j.length, j.rtl ? "true" : "false", util::json_quote(j.plant));
}

Job parse_job(const YAML::Node& n, const std::string& where) {
  if (!n.IsMap()) throw Error(fmt::format("{}: expected a JSON object", where));
  return read_job_fields(n, where);
}

std::string errno_text(int e) { return e == EFBIG ? "File too large (ulimit -f?)" : std::strerror(e); }

}  // namespace

std::string run_json(const RegressOptions& o) {
  std::string s = fmt::format(
      "{{\"version\": 1, \"shard\": \"{}/{}\", \"list_jobs\": {}, \"timeout\": {}, \"keep\": {}, "
      "\"isolate_seeds\": {}, \"shrink\": {}, \"shrink_max\": {}, \"jobs\": [",
      o.shard.k, o.shard.n, o.list_jobs ? o.list_jobs : o.jobs.size(), o.timeout_s, o.keep ? "true" : "false",
      o.isolate_seeds ? "true" : "false", o.shrink ? "true" : "false", o.shrink_max);
  for (size_t i = 0; i < o.jobs.size(); ++i) s += (i ? ",\n  " : "\n  ") + job_json(o.jobs[i]);
  return s + "\n]}\n";
}

RegressOptions parse_run_json(std::string_view text, std::string_view source) {
  const YAML::Node n = parse_json_object(text, source);
  if (json_field<int>(n, "version", source) != 1) throw Error(fmt::format("{}: unknown version (expected 1)", source));
  RegressOptions o;
  o.shard = parse_shard(json_field<std::string>(n, "shard", source));
  o.list_jobs = json_field<uint64_t>(n, "list_jobs", source);
  o.timeout_s = json_field<double>(n, "timeout", source);
  o.keep = json_field<bool>(n, "keep", source);
  o.isolate_seeds = json_field<bool>(n, "isolate_seeds", source);
  o.shrink = json_field<bool>(n, "shrink", source);
  o.shrink_max = json_field<size_t>(n, "shrink_max", source);
  const YAML::Node jobs = n["jobs"];
  if (!jobs || !jobs.IsSequence()) throw Error(fmt::format("{}: missing field 'jobs' (a list)", source));
  for (size_t i = 0; i < jobs.size(); ++i) o.jobs.push_back(parse_job(jobs[i], fmt::format("{}: jobs[{}]", source, i)));
  if (o.jobs.empty()) throw Error(fmt::format("{}: 'jobs' is empty", source));
  return o;
}

JournalContents read_journal(const fs::path& path) {
  JournalContents c;
  if (!fs::exists(path)) return c;
  // A device (/dev/full, /dev/zero) would read for ever.
  if (!fs::is_regular_file(path)) throw Error(fmt::format("{}: the results journal is not a regular file", path.string()));
  const std::string text = util::read_file(path, "results journal");
  size_t end = text.rfind('\n');
  end = end == std::string::npos ? 0 : end + 1;
  c.torn = end < text.size();
  c.valid_bytes = end;
  c.results = parse_results(std::string_view(text).substr(0, end), path.string());
  return c;
}

Journal::Journal(const fs::path& path, uint64_t keep_bytes) : path_(path), size_(keep_bytes) {
  // Not O_TRUNC-by-unlink: a journal that is a symlink (to /dev/full in the tests) is written through.
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(fmt::format("{}: cannot open the results journal: {}", path.string(), errno_text(errno)));
  if (::ftruncate(fd_, static_cast<off_t>(keep_bytes)) != 0 && errno != EINVAL) {
    const int e = errno;
    ::close(fd_);
    throw Error(fmt::format("{}: cannot cut the results journal to {} bytes: {}", path.string(), keep_bytes, errno_text(e)));
  }
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::append(const SeedResult& r) {
  const std::string line = result_json(r) + "\n";
  // pwrite at our own offset: after a short write the next line overwrites the partial one.
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::pwrite(fd_, line.data() + done, line.size() - done, static_cast<off_t>(size_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : ENOSPC;
      if (done > 0) (void)!::ftruncate(fd_, static_cast<off_t>(size_));
      throw Error(fmt::format("{}: cannot write the result of {} ({} bytes): {}", path_.string(), r.job.id(),
                              line.size(), errno_text(e)));
    }
    done += static_cast<size_t>(n);
  }
  size_ += line.size();
}

RunLock::RunLock(const fs::path& dir) : path_(dir / ".lock") {
  // A runner that finishes removes the file while it holds the lock: a lock taken on the
  // removed file in that moment is no lock at all, so try again on the new one.
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (try_lock(dir)) return;
  }
  throw Error(fmt::format("{}: cannot lock: the file keeps being replaced", path_.string()));
}

bool RunLock::try_lock(const fs::path& dir) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(fmt::format("{}: cannot open the run lock: {}", path_.string(), errno_text(errno)));
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  if (::fcntl(fd_, F_SETLK, &fl) == 0) {
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      return true;
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  const int e = errno;
  struct flock holder {};
  holder.l_type = F_WRLCK;
  holder.l_whence = SEEK_SET;
  const bool known = ::fcntl(fd_, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK;
  ::close(fd_);
  fd_ = -1;
  if (e != EACCES && e != EAGAIN) throw Error(fmt::format("{}: cannot lock: {}", path_.string(), errno_text(e)));
  throw Error(fmt::format("{}: another `npuforge regress`{} is running in this results directory ({}); wait for it "
                          "or stop it, or give another --out",
                          dir.string(), known ? fmt::format(" (pid {})", holder.l_pid) : std::string(), path_.string()));
}

// The file is removed while still locked, so a finished results directory holds no empty
// .lock; a runner that dies leaves it (with no lock on it: the kernel drops the lock).
RunLock::~RunLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

bool interrupted_run(const fs::path& dir) {
  if (!fs::exists(dir / "run.json")) return false;
  const fs::path shard = dir / "shard.json";
  if (!fs::exists(shard)) return true;
  try {
    return parse_run_info(util::read_file(shard, "shard info"), shard.string()).finished == 0;
  } catch (const Error&) {
    return true;  // a shard.json cut short by a kill
  }
}

}  // namespace npuforge::regress
