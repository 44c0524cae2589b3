#pragma once
// The one exception type npuforge throws for bad input. Its message already names the
// file, line or field and what was expected, so callers print it as is and exit 1.
#include <stdexcept>
#include <string>

namespace npuforge {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace npuforge
