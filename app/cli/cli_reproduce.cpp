// `depthlab-cli reproduce`: the paper's recipes (experiment/paper_recipes). Without a name it
// lists them; `reproduce NAME --corpus DIR [--tokenizer spm:/path/t5.model] [--device cuda]`
// prints what the recipe will cost here, trains what is left of it (rerun after a crash, it
// resumes), then lays the validation perplexity beside the paper's and exports the paper-style
// figures into one folder. `--report` only reports. The work is experiment/reproduction's.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "experiment/paper_recipes.h"
#include "experiment/reproduction.h"
#include "experiment/reproduction_report.h"
#include "experiment/run_cost.h"
#include "run_console.h"
#include "text_table.h"

namespace depthlab::cli {

namespace {

struct ReproduceArgs {
  std::string name, corpus, tokenizer, device = "cpu", out, checkpointDir, schemes;
  std::vector<std::string> sets;  // --set section.key=value over the recipe's config
  bool force = false, reportOnly = false, noFigures = false;
};

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

std::string significant(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string signedFixed(double v, int digits) { return (v >= 0 ? "+" : "") + fixed(v, digits); }

void listRecipes(bool json) {
  nlohmann::json j = nlohmann::json::array();
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : experiment::paperRecipes()) {
    std::string schemes;
    for (const auto& a : r.arms) {
      for (const auto& s : a.schemes)
        schemes += (schemes.empty() ? "" : " ") + s + (a.label.empty() ? "" : "+" + a.label);
    }
    const double tokens = static_cast<double>(r.steps) * r.globalBatch * r.config(0).model.seqLen;
    const double gpu = experiment::recipeH200Seconds(r);
    rows.push_back({r.name, r.preset, experiment::formatThousands(r.steps),
                    experiment::formatCount(tokens), "~" + experiment::formatLongDuration(gpu),
                    schemes, r.title});
    j.push_back({{"name", r.name},
                 {"title", r.title},
                 {"source", r.source},
                 {"preset", r.preset},
                 {"steps", r.steps},
                 {"token_slots", tokens},
                 {"h200_seconds", gpu},
                 {"paper_size", r.paperSize},
                 {"choices", r.choices}});
  }
  if (json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << formatTextTable(
                   {"RECIPE", "SHAPE", "UPDATES", "TOKEN SLOTS", "ONE H200", "SCHEMES", "WHAT"},
                   rows)
            << "\n`reproduce NAME --corpus DIR` trains one (C4's en .json.gz files; "
               "--tokenizer spm:/path/spiece.model for T5's tokenizer); `reproduce NAME --report` "
               "lays its runs beside the paper.\nONE H200: all of a recipe's runs in turn at the "
               "lab's measured 669k tokens/s (LLaMA-130M, bf16; docs/performance.md), scaled by "
               "FLOPs; a GPU needs the CUDA build (make run-torch2, build/torch2).\n";
}

void printReport(const experiment::PaperRecipe& recipe, const experiment::ReproductionReport& rep,
                 bool json) {
  if (json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : rep.rows) {
      rows.push_back(
          {{"arm", r.arm},
           {"scheme", r.scheme},
           {"run", r.runId},
           {"status", store::toString(r.status)},
           {"step", r.step},
           {"steps", r.steps},
           {"val_loss", r.valLoss ? nlohmann::json(*r.valLoss) : nlohmann::json()},
           {"ppl", r.perplexity ? nlohmann::json(*r.perplexity) : nlohmann::json()},
           {"paper_ppl", r.paperPerplexity ? nlohmann::json(*r.paperPerplexity) : nlohmann::json()},
           {"within_band", r.withinBand}});
    }
    std::cout << nlohmann::json{{"recipe", recipe.name},
                                {"band", recipe.band},
                                {"complete", rep.complete},
                                {"rows", rows}}
                     .dump(2)
              << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : rep.rows) {
    rows.push_back(
        {r.scheme + (r.arm.empty() ? "" : " + " + r.arm), std::to_string(r.runId),
         store::toString(r.status), std::to_string(r.step) + "/" + std::to_string(r.steps),
         r.valLoss ? fixed(*r.valLoss, 4) : "-", r.perplexity ? fixed(*r.perplexity, 2) : "-",
         r.paperPerplexity ? fixed(*r.paperPerplexity, 2) : "-",
         r.difference ? signedFixed(*r.difference, 2) : "-",
         r.difference ? (r.withinBand ? "yes" : "no") : "-",
         r.lastLayerVariance ? significant(*r.lastLayerVariance) : "-"});
  }
  std::printf("reproduce %s: %s\n  %s\n\n", recipe.name.c_str(), recipe.title.c_str(),
              recipe.source.c_str());
  std::cout << formatTextTable({"SCHEME", "RUN", "STATUS", "STEP", "VAL LOSS", "PPL", "PAPER",
                                "DIFF", "WITHIN +-" + fixed(recipe.band, 1), "LAST-LAYER VAR"},
                               rows);
  for (const auto& g : rep.gains) {
    std::printf("\nLNS over Pre-LN%s: %s PPL (%s%%)",
                g.arm.empty() ? "" : (" (" + g.arm + ")").c_str(), signedFixed(g.ppl, 2).c_str(),
                signedFixed(g.percent, 1).c_str());
    if (g.paperPpl)
      std::printf("; the paper's: %s PPL (%s%%)", signedFixed(*g.paperPpl, 2).c_str(),
                  signedFixed(*g.paperPercent, 1).c_str());
    std::printf("\n");
  }
  std::printf(
      "\nThe band: +-%.1f PPL, the gap seen reproducing the official code (its issue #5: LNS at "
      "130M gave 26.2, not 25.76); perplexity = exp(validation loss).%s\n",
      recipe.band, rep.complete ? "" : " Not every run has finished: the numbers are provisional.");
}

// The paper-style figures of the recipe's runs, through depthlab-export, into `dir`.
void exportFigures(const std::vector<store::RunInfo>& runs, const std::string& dir,
                   const std::string& db) {
  if (runs.empty()) return;
  std::string ids;
  for (const auto& r : runs) ids += (ids.empty() ? "" : ",") + std::to_string(r.id);
  std::filesystem::create_directories(dir);
  std::vector<std::string> args = {siblingExecutable("depthlab-export"),
                                   "--runs",
                                   ids,
                                   "--figure",
                                   "set",
                                   "--format",
                                   "pdf",
                                   "--width",
                                   "8.5cm",
                                   "--out",
                                   dir};
  if (!db.empty()) args.insert(args.end(), {"--db", db});
  std::string command;
  for (const auto& a : args) command += "'" + a + "' ";
  const int rc = std::system(command.c_str());
  if (rc != 0)
    std::fprintf(stderr, "depthlab-cli: the figure export failed (exit %d): %s\n", rc,
                 command.c_str());
  else
    std::printf("figures (loss, variance per layer, angular distance, pruning): %s\n", dir.c_str());
}

void runReproduce(GlobalOptions& g, const ReproduceArgs& a) {
  if (a.name.empty()) return listRecipes(g.json);
  const auto& recipe = experiment::requireRecipe(a.name);
  auto store = openStore(g);
  if (!a.reportOnly) {
    experiment::ReproduceOptions o;
    o.corpus = a.corpus;
    o.tokenizer = a.tokenizer;
    o.device = a.device;
    o.force = a.force;
    o.schemes = splitList(a.schemes);
    o.sets = a.sets;
    const auto started = std::chrono::steady_clock::now();
    const auto plan = experiment::planReproduction(store, recipe, o, [&](const std::string& what) {
      if (!g.json) {
        printPhase(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
            what);
      }
    });
    if (!g.json) {
      std::printf("reproduce %s: %s\n", recipe.name.c_str(), recipe.title.c_str());
      for (const auto& line : plan.costLines) std::printf("  %s\n", line.c_str());
      std::fflush(stdout);
    }
    if (!plan.nothingToDo()) {
      RunConsole console(store.path(), g.json);
      auto options = console.groupOptions();
      options.checkpointDir = a.checkpointDir;
      experiment::runReproduction(store, plan, options);
      if (console.stopped()) {
        std::fprintf(stderr, "stopped: `reproduce %s` again continues it\n", recipe.name.c_str());
        return;
      }
    }
  }
  printReport(recipe, experiment::reproductionReport(store, recipe), g.json);
  std::fflush(stdout);  // the report before the exporter's own lines
  if (!a.noFigures && !g.json) {
    const std::string dir =
        !a.out.empty()
            ? a.out
            : (std::filesystem::path(store.path()).parent_path() / ("reproduce-" + recipe.name))
                  .string();
    exportFigures(experiment::recipeRuns(store, recipe), dir, g.db);
  }
}

}  // namespace

void addReproduceCommand(CLI::App& app, GlobalOptions& g) {
  auto a = std::make_shared<ReproduceArgs>();
  auto* cmd = app.add_subcommand("reproduce",
                                 "The paper's recipes: list them, train one on your corpus "
                                 "and GPU, lay the result beside the paper");
  cmd->add_option("name", a->name, "Recipe (none: list them)");
  cmd->add_option("--corpus", a->corpus, "Corpus: C4 en .json.gz files, a folder, a token store");
  cmd->add_option("--tokenizer", a->tokenizer,
                  "spm:/path/spiece.model (T5's, as the paper) or spm:N");
  cmd->add_option("--device", a->device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--schemes", a->schemes, "Only these of the recipe's schemes (comma-separated)");
  cmd->add_option("--checkpoint-dir", a->checkpointDir, "Where checkpoints go");
  cmd->add_option("--set", a->sets,
                  "section.key=value over the recipe's config (repeatable), e.g. --set "
                  "data.packing=packed; each change is said as a departure from the paper");
  cmd->add_option("--out", a->out,
                  "Folder of the figures (default: reproduce-NAME beside the database)");
  cmd->add_flag("--force", a->force,
                "Start a paper-size recipe on a CPU, or on a corpus it would read more than once");
  cmd->add_flag("--report", a->reportOnly, "Report only: train nothing");
  cmd->add_flag("--no-figures", a->noFigures, "Do not export the figures");
  cmd->callback([&g, a] { runReproduce(g, *a); });
}

}  // namespace depthlab::cli
