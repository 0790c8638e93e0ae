// ProbeSchedule: runs the depth probes (core/probes) on a fixed held-out probe batch at the
// cadence of ProbeConfig and turns their arrays into run-store rows. The probe functions stay
// pure; this is where cadence and metric names live.
// Stored names — layer series: variance, norm_var_attn, norm_var_ffn, angular_adjacent,
// block_influence, effectiveness, prune_delta, prune_delta_se, jacobian_identity,
// block_prune_best_start, dyt_saturation (DyT schemes only), lens_kl, lens_top1, lens_entropy,
// lens_ce (the logit lens, with lens_settle and effective_depth), spectral_alpha, stable_rank
// (weight spectra, with spectral_alpha_mean); matrices: angular (L x L), block_prune,
// block_prune_se (L x L), skip_effect (L x L, at the end when the pruning probes are on); scalars:
// loss_probe, lazy_layers, low_layers, lazy_ratio, jump_strength, probe_seconds,
// dyt_saturation_final (DyT schemes only). The pruning sweeps evaluate
// `pruneSequences` of the probe batch's rows, evenly spaced (probes::pruningRows), the other
// families all of them.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "data/token_dataset.h"
#include "experiment/experiment_config.h"
#include "model/decoder.h"
#include "probes/depth_probes.h"
#include "probes/weight_spectra.h"
#include "store/store_types.h"

namespace depthlab::experiment {

/// The rows of one forward-probe result (runForwardProbes, or statsOfTrace for a watched
/// model): loss_probe, the layer series, DyT saturation where present, the lazy/low counts by
/// `config`'s thresholds and, with `matrix`, the angular matrix (L x L). Appends to `out`.
void addForwardRows(store::WriteBatch& out, int64_t step, const probes::ForwardProbes& f,
                    const ProbeConfig& config, bool matrix);

/// The rows of the weight spectra (probes/weight_spectra.h): spectral_alpha and stable_rank per
/// block, spectral_alpha_mean.
void addSpectraRows(store::WriteBatch& out, int64_t step, const probes::WeightSpectra& s);

/// Probe families selectable by name (analyze --probes).
extern const std::vector<std::string>
    kProbeNames;  // variance, angular, lens, pruning, block_pruning, skip_effect, jacobian, spectra

class ProbeSchedule {
 public:
  ProbeSchedule(const ProbeConfig& config, const data::TokenDataset& data, torch::Device device);
  /// On a given probe batch: inputs and targets (B, T) int64, on the model's device.
  ProbeSchedule(const ProbeConfig& config, torch::Tensor inputs, torch::Tensor targets);

  /// Told as the families run: (family, done, total); for the pruning families once per
  /// evaluation, for the others once when they finish (done = total = 1).
  using Progress = std::function<void(const std::string& family, int done, int total)>;
  void setProgress(Progress progress) { m_progress = std::move(progress); }

  /// The families due after `step` updates (every family when `final`).
  std::set<std::string> dueAt(int64_t step, bool final) const;
  /// Runs what is due after `step` updates (all of it when `final`); appends rows to `out`.
  /// Returns the seconds spent.
  double runDue(model::Decoder& model, int64_t step, bool final, store::WriteBatch& out) const;
  /// Runs the named probe families now (analyze after the fact). Only reads the schedule, so
  /// several threads may run it at once on different models. With both pruning families the
  /// single-layer sweep is the block sweep's first column (the same evaluations).
  double run(model::Decoder& model, int64_t step, const std::set<std::string>& which,
             store::WriteBatch& out) const;
  const ProbeConfig& config() const { return m_config; }
  /// The probe batch: inputs and targets (B, T) on the model's device.
  const torch::Tensor& inputs() const { return m_inputs; }
  const torch::Tensor& targets() const { return m_targets; }

 private:
  ProbeConfig m_config;
  void selectPruningRows();
  torch::Tensor m_inputs, m_targets;            // (B, T) probe batch
  torch::Tensor m_pruneInputs, m_pruneTargets;  // (B', T) the rows the pruning sweeps use
  Progress m_progress;
};

}  // namespace depthlab::experiment
