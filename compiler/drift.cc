#include "compiler/drift.h"

#include <cmath>

#include "compiler/convert.h"
#include "compiler/qref.h"

namespace npuforge::compiler {

std::vector<LayerDrift> layer_drift(const QGraph& graph, const model::Graph& float_graph,
                                    const model::TensorMap& inputs) {
  model::RunOptions ro;
  ro.keep_intermediates = true;
  const model::TensorMap want = model::run_graph(float_graph, inputs, ro);
  const QrefResult got = run_qref(graph, inputs);
  std::vector<LayerDrift> out;
  for (size_t i = 0; i < graph.ops.size(); ++i)
    for (TensorId id : op_outputs(graph.ops[i])) {
      const QTensor& t = graph.tensor(id);
      auto w = want.find(t.name);
      if (!t.is_int8() || w == want.end()) continue;
      const model::Tensor q = dequantize(got.values.at(id.value), t);
      double ab = 0, aa = 0, bb = 0, mx = 0;
      for (int64_t k = 0; k < q.numel(); ++k) {
        const double a = q.values<float>()[k], b = w->second.real_at(k);
        ab += a * b;
        aa += a * a;
        bb += b * b;
        mx = std::max(mx, std::fabs(a - b));
      }
      LayerDrift d;
      d.tensor = t.name;
      d.op = i;
      d.cosine = aa == 0 && bb == 0 ? 1 : ab / std::sqrt(aa * bb);
      d.max_abs = mx;
      d.scale = t.scale;
      out.push_back(d);
    }
  return out;
}

}  // namespace npuforge::compiler
