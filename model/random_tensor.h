#pragma once
// Seeded random tensor values, the same on every machine (npuforge::Rng): the `random:`
// constants of YAML graphs and the inputs `npuforge npy` makes.
#include <cstdint>
#include <optional>

#include "model/tensor.h"
#include "util/rng.h"

namespace npuforge::model {

// The range a dtype's random values take by default: [-1, 1) for float32, the dtype's range for
// the narrow integer types and bool, [-1000, 1000] for int32 and int64.
struct RandomRange {
  double low = 0, high = 0;
};
RandomRange default_random_range(DType dtype);

// Fills `t` from `rng`: float32 uniform in [low, high), integer types uniform in [low, high]
// inclusive. Throws npuforge::Error when low > high, or a bound of an integer range is not an
// integer the dtype holds.
void fill_random(Tensor& t, Rng& rng, RandomRange range);

}  // namespace npuforge::model
