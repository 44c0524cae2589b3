// Op family "norm": see op_families.h. Definitions are added by the engineer owning it.
#include "model/op_families.h"

namespace npuforge::model {

void register_norm_ops(OpRegistry& /*r*/) {}

}  // namespace npuforge::model
