// Op family "shape": see op_families.h. Definitions are added by the engineer owning it.
#include "model/op_families.h"

namespace npuforge::model {

void register_shape_ops(OpRegistry& /*r*/) {}

}  // namespace npuforge::model
