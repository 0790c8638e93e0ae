// ExperimentConfig: everything that defines a DepthLab experiment, as a plain struct that
// round-trips through JSON (the same JSON the run store keeps). It composes the sections the
// modules own (model/model_config.h, data/data_config.h, train/optim_config.h,
// probes/probe_config.h) with the run loop's own RunConfig. validate() names the offending
// field. No torch here.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "data/data_config.h"
#include "model/model_config.h"
#include "probes/probe_config.h"
#include "train/optim_config.h"
#include "util/config_error.h"

namespace depthlab::experiment {

// Each section is owned by the module it configures; ExperimentConfig composes them.
using model::ModelConfig;
using model::SchemeOptions;
using data::DataConfig;
using train::OptimConfig;
using probes::ProbeConfig;
using util::ConfigError;

/// The run loop's own section: seed, device, threads, evaluation, checkpoints, logging.
struct RunConfig {
  int64_t seed = 1;
  std::string device = "cpu";     // cpu | cuda | cuda:N
  int threads = 0;                // intra-op threads; 0 = the measured default
  int evalEvery = 100;            // steps between validation passes (and at the end)
  int evalBatches = 8;            // fixed validation batches
  int checkpointEvery = 0;        // steps between checkpoints; 0 = by wall time only
  double checkpointMinutes = 10;  // wall time between checkpoints; 0 = off
  int checkpointKeep = 3;         // the last N checkpoints kept (plus the best and the final)
  int logEvery = 1;               // steps between train-loss rows
  bool bf16 = false;              // autocast to bf16 (CUDA only)
  int processes = 1;              // data-parallel ranks (one GPU each on CUDA); 1 = one process
};

struct ExperimentConfig {
  std::string preset;             // name it was derived from, informational
  std::string name;               // run-group name; "" = generated
  std::vector<std::string> schemes = {"pre_ln", "lns"};
  ModelConfig model;
  SchemeOptions options;
  DataConfig data;
  OptimConfig optim;
  RunConfig run;
  ProbeConfig probes;
};

/// The scheme ids of model::schemeCatalogue(), in its order.
extern const std::vector<std::string> kSchemes;
extern const std::vector<std::string> kLnsPlacements;

nlohmann::json toJson(const ExperimentConfig& c);
/// Missing keys keep `base`'s values (the defaults unless given); unknown keys and wrong types
/// throw ConfigError.
ExperimentConfig configFromJson(const nlohmann::json& j, const ExperimentConfig& base = {});
ExperimentConfig loadConfigFile(const std::string& path, const ExperimentConfig& base = {});
/// A config file's JSON; ConfigError naming the file when it cannot be read or is not JSON.
nlohmann::json readConfigJson(const std::string& path);
void saveConfigFile(const ExperimentConfig& c, const std::string& path);

struct ConfigIssue {
  std::string field;    // dotted path, e.g. "model.nHeads"
  std::string message;  // full sentence naming the field
};
/// What a config is checked as: a group about to be trained (every check), or one run of a
/// group (its stored config names its own scheme alone: checks about the group's schemes
/// together, such as an LNS placement no scheme of it reads, are left out).
enum class ConfigScope { Group, Run };
std::vector<ConfigIssue> validate(const ExperimentConfig& c, ConfigScope scope = ConfigScope::Group);
/// Throws ConfigError listing every issue.
void requireValid(const ExperimentConfig& c);

/// Sets the micro-batch to `micro` sequences (a divisor of the global batch batchSize x
/// gradAccum, which stays) and keeps the validation set the config asked for: evalBatches x
/// batchSize windows, now in batches of `micro` (data::TokenDataset::valBatch spreads the same
/// windows whatever the split when the count divides; else rounded up to whole batches).
/// Throws std::invalid_argument when `micro` does not divide the global batch.
void applyMicroBatch(ExperimentConfig& config, int micro);
/// What a Trainer needs of an experiment: model, scheme options, optimizer, seed, bf16.
train::TrainerConfig trainerConfig(const ExperimentConfig& c);

}  // namespace depthlab::experiment
