#pragma once
// The schedule (docs/compiler.md section 8): the execution order. Ops are ordered breadth-first: level by level
// (an op's level is one more than its latest producer's), and within a level the ops of the
// target that ran last come first, so NPU work and CPU work stay in long runs. CPU steps that
// end up next to each other become one step (one interpreter call, no int8 round trip between
// them); then the segments are the maximal runs of NPU ops and the CPU steps between them.
#include "compiler/qgraph.h"

namespace npuforge::compiler {

void schedule(QGraph& graph);

// Removes tensors no op and no model input/output refers to, renumbering the ids.
void compact_tensors(QGraph& graph);

// Fills graph.segments from graph.ops as they are ordered now.
void compute_segments(QGraph& graph);

}  // namespace npuforge::compiler
