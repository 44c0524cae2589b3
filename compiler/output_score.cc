#include "compiler/output_score.h"

#include <algorithm>
#include <cmath>

#include "compiler/qref.h"

namespace npuforge::compiler {

double cosine_similarity(const model::Tensor& a, const model::Tensor& b) {
  double ab = 0, aa = 0, bb = 0;
  const int64_t n = std::min(a.numel(), b.numel());
  for (int64_t i = 0; i < n; ++i) {
    const double x = a.real_at(i), y = b.real_at(i);
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  if (aa == 0 && bb == 0) return 1;
  if (aa == 0 || bb == 0) return 0;
  return ab / std::sqrt(aa * bb);
}

std::vector<model::TensorMap> float_outputs(const model::Graph& float_graph,
                                           const std::vector<model::TensorMap>& samples) {
  std::vector<model::TensorMap> out;
  const model::Interpreter interp(float_graph);
  for (const model::TensorMap& in : samples) out.push_back(interp.run(in));
  return out;
}

OutputScore score_outputs(const QGraph& graph, const std::vector<model::TensorMap>& samples,
                          const std::vector<model::TensorMap>& want) {
  OutputScore s;
  double sum = 0;
  size_t n = 0;
  for (size_t i = 0; i < samples.size() && i < want.size(); ++i) {
    const QrefResult got = run_qref(graph, samples[i]);
    s.per_sample.push_back(1);
    for (const auto& [name, w] : want[i]) {
      const auto g = got.outputs.find(name);
      // A missing or reshaped output is the worst score, never a silent pass.
      const double c = g == got.outputs.end() || g->second.shape() != w.shape() ? -1 : cosine_similarity(g->second, w);
      s.min_cosine = std::min(s.min_cosine, c);
      s.per_sample.back() = std::min(s.per_sample.back(), c);
      sum += c;
      ++n;
    }
  }
  s.mean_cosine = n ? sum / static_cast<double>(n) : 1;
  return s;
}

}  // namespace npuforge::compiler
