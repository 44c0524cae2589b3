#pragma once
// Shared by the ISA tests: the message of the npuforge::Error a call throws.
#include <string>

#include <gtest/gtest.h>

#include "util/error.h"

namespace npuforge::isa::testing {

// Runs `f`, expects npuforge::Error, and returns its message ("" and a test failure without).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no npuforge::Error thrown";
  return {};
}

}  // namespace npuforge::isa::testing

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)
