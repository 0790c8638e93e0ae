// EvalScope: a model in eval mode for a scope, then back to whatever mode it was in. The probes
// measure in eval mode (no dropout) and leave a training model training.
// Does not: touch grad mode (the probes hold their own torch::NoGradGuard).
#pragma once

#include "model/decoder.h"

namespace depthlab::probes {

class EvalScope {
 public:
  explicit EvalScope(model::Decoder& m) : m_model(m), m_wasTraining(m->is_training()) {
    m_model->eval();
  }
  ~EvalScope() { m_model->train(m_wasTraining); }
  EvalScope(const EvalScope&) = delete;
  EvalScope& operator=(const EvalScope&) = delete;

 private:
  model::Decoder& m_model;
  bool m_wasTraining;
};

}  // namespace depthlab::probes
