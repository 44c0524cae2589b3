#pragma once
// Clean-up (docs/compiler.md section 3): hardware-independent clean-up of a shape-inferred float graph.
//  - folds BatchNormalization and constant per-channel Mul/Div/Add/Sub into the preceding
//    Conv or Gemm's weights and bias (when that Conv/Gemm has no other reader);
//  - replaces a BatchNormalization that cannot be folded by Mul + Add of per-channel constants;
//  - drops no-ops: Identity, Dropout (inference), Cast to the same type, Reshape/Flatten/
//    Squeeze/Unsqueeze/Expand to the same shape, identity Transpose, zero Pad, Concat of one
//    input, Mul/Div by 1 and Add/Sub of 0.
// The float outputs stay the same up to rounding (the folds reassociate one multiply).
#include <string>
#include <vector>

#include "compiler/hints.h"
#include "model/ir.h"

namespace npuforge::compiler {

struct CleanupReport {
  std::vector<std::string> removed_noops;     // node names
  std::vector<std::string> folded;            // "bn1 -> conv1", one per folded node
  std::vector<std::string> decomposed;        // BatchNormalizations turned into Mul + Add
};

// `hints` (may be null) follows the edits: weight scales are rescaled by the folds, ranges
// follow renamed values.
CleanupReport cleanup(model::Graph& graph, QuantHints* hints = nullptr);

}  // namespace npuforge::compiler
