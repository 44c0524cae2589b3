// File I/O fails loudly: a full disk (here /dev/full, which answers every write with ENOSPC)
// and a missing file are errors naming the file and the cause, never a silently short file.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "util/error.h"
#include "util/file_io.h"
#include "util/sysinfo.h"

namespace npuforge::util {
namespace {

std::string error_of(const auto& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FileIo, FullDiskIsAnErrorNamingFileAndCause) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  // Larger than any stream buffer, so some bytes reach the device before close, and one byte,
  // which reaches it only when the file is closed.
  for (const size_t size : {size_t{1}, size_t{1} << 20}) {
    const std::string what = error_of([&] { write_file("/dev/full", std::string(size, 'x'), "program"); });
    EXPECT_NE(what.find("/dev/full: cannot write program"), std::string::npos) << what;
    EXPECT_NE(what.find("No space left on device"), std::string::npos) << what;
  }
}

TEST(FileIo, MissingFileOrDirectoryIsNamed) {
  const std::string read = error_of([] { read_file("/nonexistent/npuforge/x.s", "assembly"); });
  EXPECT_NE(read.find("/nonexistent/npuforge/x.s: cannot open assembly"), std::string::npos) << read;
  const std::string write = error_of([] { write_file("/nonexistent/npuforge/x.s", "halt\n", "assembly"); });
  EXPECT_NE(write.find("/nonexistent/npuforge/x.s: cannot create assembly"), std::string::npos) << write;
}

TEST(FileIo, RoundTripKeepsEveryByte) {
  const auto path = std::filesystem::temp_directory_path() / "npuforge_file_io_test.bin";
  std::string bytes(70000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + 7);
  write_file(path, bytes, "test data");
  EXPECT_EQ(read_file(path, "test data"), bytes);
  std::filesystem::remove(path);
}

TEST(SysInfo, DefaultLimitIsThreeQuartersOfMemory) {
  const uint64_t total = physical_memory().value;
  EXPECT_GT(total, 0u);
  EXPECT_EQ(default_memory_limit().value, total / 4 * 3);
}

}  // namespace
}  // namespace npuforge::util
