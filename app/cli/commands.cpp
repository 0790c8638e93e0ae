// See commands.h.
#include "commands.h"

namespace depthlab::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"train", Work::Computes, &addTrainCommand},
      {"resume", Work::Computes, &addResumeCommand},
      {"presets", Work::Reads, &addPresetsCommand},
      {"analyze", Work::Computes, &addAnalyzeCommand},
      {"report", Work::Reads, &addReportCommand},
      // importing checks the model on text; exporting writes weights
      {"import-hf", Work::Computes, &addImportHfCommand},
      {"eval", Work::Computes, &addEvalCommand},
      {"export-hf", Work::Computes, &addExportHfCommand},
      {"export", Work::Reads, &addExportCommand},
      {"import-tensorboard", Work::Reads, &addImportTensorBoardCommand},
      {"runs", Work::Reads, &addRunsCommand},
      {"bench", Work::Computes, &addBenchCommand},
      {"corpus", Work::Reads, &addCorpusCommand},
      {"reproduce", Work::Computes, &addReproduceCommand},
      {"schemes", Work::Reads, &addSchemesCommand},
  };
  return table;
}

}  // namespace depthlab::cli
