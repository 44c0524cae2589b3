#pragma once
// The parts of the shape op family kept in their own files; register_shape_ops
// (ops_shape.cc) calls them (internal header).
#include "model/op.h"

namespace npuforge::model {

void register_layout_ops(OpRegistry& r);    // ops_layout.cc: Gather, GatherElements, Concat, Split, Slice, Transpose
void register_pad_tile_ops(OpRegistry& r);  // ops_pad_tile.cc: Pad, Tile, Expand

}  // namespace npuforge::model
