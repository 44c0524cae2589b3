// util::BufferedWriter: whatever mix of put, format and reserve/commit reaches the file in
// order, across buffer boundaries and past a buffer-sized piece; a full disk is an error
// naming the file at close().
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "util/buffered_writer.h"
#include "util/error.h"
#include "util/file_io.h"
#include "util/rng.h"

namespace npuforge::util {
namespace {

namespace fs = std::filesystem;

TEST(BufferedWriter, EveryWayOfWritingReachesTheFileInOrder) {
  const fs::path path = fs::temp_directory_path() / ("npuforge_bw_" + std::to_string(::getpid()));
  std::string expected;
  {
    BufferedWriter out(path, "test file");
    Rng rng(5);
    while (expected.size() < 3 * BufferedWriter::kBufferBytes) {
      switch (rng.below(5)) {
        case 0: {
          const std::string s(rng.below(300), static_cast<char>('a' + rng.below(26)));
          out.put(s);
          expected += s;
          break;
        }
        case 1: {
          const char c = static_cast<char>('A' + rng.below(26));
          out.put(c);
          expected += c;
          break;
        }
        case 2: {
          const uint64_t v = rng.next();
          out.format("<{}>", v);
          expected += "<" + std::to_string(v) + ">";
          break;
        }
        case 3: {  // reserve more than is written, as the program writers do
          char* p = out.reserve(512);
          const size_t n = rng.below(512);
          for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>('0' + i % 10), expected += p[i];
          out.commit(p + n);
          break;
        }
        default:
          if (rng.chance(0.01)) {  // larger than the buffer: written through
            const std::string big(BufferedWriter::kBufferBytes + 3, 'z');
            out.put(big);
            expected += big;
          }
      }
    }
    out.close();
  }
  const std::string got = read_file(path);
  fs::remove(path);
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected);
}

TEST(BufferedWriter, FullDiskIsReportedAtCloseNamingTheFile) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full on this system";
  BufferedWriter out("/dev/full", "assembly");
  out.put("halt\n");
  try {
    out.close();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full: cannot write assembly: No space left on device"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace npuforge::util
