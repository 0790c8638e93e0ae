# depthlab_core sources that include torch (compiled with the precompiled header).
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES
  model/layers.cpp
  model/block.cpp
  model/decoder.cpp
  train/checkpoint.cpp
  train/checkpoint_stream.cpp
  train/checkpoint_tensors.cpp
  train/checkpoint_v1.cpp
  bench/checkpoint_bench.cpp
  experiment/reproduction.cpp
  experiment/step_timing.cpp
  train/trainer.cpp
  train/cuda_graph_step.cpp
  experiment/run_group.cpp experiment/run_resume.cpp experiment/run_resume_many.cpp
  io/safetensors.cpp
  io/safetensors_archive.cpp
  bench/train_bench.cpp
  bench/update_gemms.cpp
)
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES
  experiment/experiment_config.cpp
  experiment/run_config.cpp
  experiment/config_fields.cpp experiment/config_set.cpp
  experiment/presets.cpp
  model/block_plan.cpp model/scheme_catalogue.cpp model/scheme_sets.cpp
  data/corpus.cpp
  data/tokenizer.cpp
  data/token_dataset.cpp
  train/lr_schedule.cpp
)
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES
  probes/probe_math.cpp
  probes/probe_tokens.cpp
  probes/head_loss.cpp
  probes/depth_probes.cpp probes/trace_stats.cpp probes/saturation_probe.cpp
  probes/traced_forward.cpp probes/logit_lens.cpp probes/weight_spectra.cpp probes/stream_outliers.cpp probes/sublayer_contributions.cpp probes/attention_sinks.cpp probes/skip_effect.cpp probes/tuned_lens.cpp
  experiment/probe_schedule.cpp
  train/thread_share.cpp
  train/row_split.cpp
  train/worker_team.cpp
  experiment/background_probes.cpp
)
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES experiment/analyze.cpp experiment/tuned_lens_run.cpp)
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES experiment/run_report.cpp experiment/store_link.cpp
  experiment/paper_recipes.cpp experiment/reproduction_report.cpp
  experiment/resource_estimate.cpp experiment/run_cost.cpp)
# Checkpoint ownership, verification and pruning (reads checkpoint headers; no tensors).
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES experiment/run_checkpoints.cpp)
# The checkpoint folder's claim (a copied database takes its own id): plain C++.
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES experiment/checkpoint_folder.cpp)
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES bench/probe_bench.cpp bench/gpu_train_bench.cpp)
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES train/devices.cpp experiment/micro_batch.cpp)
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES experiment/sweep.cpp)
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES analysis/statistics.cpp analysis/run_comparison.cpp util/table_text.cpp
  analysis/layer_diagnosis.cpp experiment/group_names.cpp experiment/preflight.cpp
  experiment/run_selection.cpp)
# Lazy-layer counts by a run's own thresholds (the probes and the dashboard).
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES probes/lazy_layers.cpp probes/depth_summaries.cpp)
# Multiple-choice tasks scored by log-likelihood (depthlab-cli eval --task).
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES tasks/task_file.cpp)
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES tasks/task_scoring.cpp)
# Whether compared runs share corpus, tokenizer, sequence length and steps (Compare's warning).
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES analysis/run_mismatch.cpp)
# The family table: imported models side by side by lazy and effective layers.
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES experiment/family_table.cpp)
# Fused CPU kernels (raw loops, no torch) and their autograd / optimizer wiring.
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES kernels/cpu_kernels.cpp kernels/attention_kernels.cpp
  kernels/probe_kernels.cpp kernels/blas_gemm.cpp)
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES model/fused_ops.cpp model/packed_ops.cpp
  model/causal_attention.cpp train/fused_adam.cpp)
# Autograd wiring of the CUDA kernels (kernels/cuda/, built only with a CUDA LibTorch).
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES model/cuda_ops.cpp)
# The loops vectorise only without errno-setting sqrt; `omp simd` marks the reductions.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/kernels/cpu_kernels.cpp
                            ${CMAKE_CURRENT_LIST_DIR}/kernels/attention_kernels.cpp
                            ${CMAKE_CURRENT_LIST_DIR}/kernels/probe_kernels.cpp
  PROPERTIES COMPILE_OPTIONS "-O3;-fno-math-errno;-fopenmp-simd")
# Paper-scale corpora: streaming tokenization into memory-mapped token stores.
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES data/mapped_file.cpp data/token_source.cpp
  data/token_store.cpp data/store_check.cpp data/jsonl_text.cpp data/corpus_sources.cpp data/corpus_chunker.cpp
  data/tokenize_pipeline.cpp data/corpus_prepare.cpp data/shard_stream.cpp data/corpus_sample.cpp data/document_split.cpp
  util/stream_hash.cpp bench/data_bench.cpp)
# Data-parallel training on c10d (Gloo on the CPU, NCCL on CUDA GPUs).
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES distributed/launch_env.cpp distributed/batch_shard.cpp
  distributed/local_launcher.cpp)
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES distributed/gradient_sync.cpp experiment/data_parallel.cpp
  experiment/train_loop.cpp experiment/train_setup.cpp
  bench/dp_train_bench.cpp)
# The c10d headers need USE_C10D_GLOO / USE_C10D_NCCL to declare their classes: compiled
# without the precompiled header (whose macros differ), see core/CMakeLists.txt.
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES distributed/process_group.cpp)
# Hugging Face models: config, import as a run, their text, evaluation and export.
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES hf/hf_config.cpp hf/hf_config_gpt.cpp hf/model_text.cpp
  hf/checkpoint_series.cpp hf/hub_fetch.cpp)
# Where the build puts the SentencePiece helper (app/CMakeLists.txt), for tests run in the tree.
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES util/spm_program.cpp util/helper_program.cpp)
# TensorBoard event files through the depthlab-tensorboard helper (app/CMakeLists.txt).
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES experiment/tensorboard_runs.cpp)
set_source_files_properties(experiment/tensorboard_runs.cpp PROPERTIES COMPILE_DEFINITIONS
  DEPTHLAB_TENSORBOARD_BUILT="${CMAKE_BINARY_DIR}/app/depthlab-tensorboard")
set_source_files_properties(util/spm_program.cpp PROPERTIES COMPILE_DEFINITIONS
  DEPTHLAB_SPM_ENCODE_BUILT="${CMAKE_BINARY_DIR}/app/depthlab-spm-encode")
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES hf/hf_import.cpp hf/model_analysis.cpp hf/imported_probes.cpp hf/run_model.cpp hf/task_eval.cpp
  hf/hf_export.cpp hf/series_import.cpp)
# Imported architectures: rope scaling (no torch) and the checkpoint-name map of each family.
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES model/rope_scaling.cpp hf/hf_weight_map.cpp)
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES analysis/depth_study.cpp)
# Watched runs: a user's own training loop recorded through the Python binding (python/).
list(APPEND DEPTHLAB_CORE_TORCH_SOURCES watch/watched_run.cpp)
# Whether a run's norm outputs show the depth scale its scheme promises (report's warning).
list(APPEND DEPTHLAB_CORE_PLAIN_SOURCES experiment/depth_scale_check.cpp)
