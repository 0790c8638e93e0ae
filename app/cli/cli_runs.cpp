// `depthlab-cli runs list | show ID | rm ID | tag ID TAG | note ID TEXT`.
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>

#include "cli_common.h"
#include "experiment/resource_estimate.h"
#include "experiment/run_selection.h"
#include "text_table.h"

namespace depthlab::cli {

namespace {

store::RunInfo requireRun(store::RunStore& s, int64_t id) {
  auto r = s.run(id);
  if (!r) throw std::runtime_error("no run with id " + std::to_string(id) + " in " + s.path());
  return *r;
}

void printRunTable(const std::vector<store::RunInfo>& runs,
                   const std::map<int64_t, store::RunSummary>& summaries) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : runs) {
    std::string tags;
    for (const auto& t : r.tags) tags += (tags.empty() ? "" : ",") + t;
    std::string steps = "-", lossVal = "-";  // the steps trained and the latest validation loss
    if (auto it = summaries.find(r.id); it != summaries.end()) {
      if (it->second.lastStep >= 0) steps = std::to_string(it->second.lastStep + 1);
      if (it->second.lossVal) {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "%.4f", *it->second.lossVal);
        lossVal = buf;
      }
    }
    rows.push_back({std::to_string(r.id), r.name, r.scheme, store::toString(r.status), steps,
                    lossVal, r.groupName, formatTime(r.createdAt), tags});
  }
  std::cout << formatTextTable(
      {"ID", "NAME", "SCHEME", "STATUS", "STEPS", "VAL LOSS", "GROUP", "CREATED", "TAGS"}, rows);
  if (runs.empty()) std::cout << "(no runs yet)\n";
}

// The stored config as readable lines: one section a line ("  model    dFF=172  dModel=64 ..."),
// wrapped at 100 columns; the raw JSON where it does not parse (`--json` always has it whole).
std::string configSummary(const std::string& configJson) {
  const auto j = nlohmann::json::parse(configJson, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return "  config   " + configJson + "\n";
  auto text = [](const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  std::string out = "  config\n";
  for (const auto& [section, value] : j.items()) {
    std::vector<std::string> items;
    if (value.is_object()) {
      for (const auto& [k, v] : value.items()) items.push_back(k + "=" + text(v));
    } else {
      items.push_back(text(value));
    }
    std::string line = "    " + section;
    line.append(line.size() < 14 ? 14 - line.size() : 1, ' ');
    const size_t indent = line.size();
    size_t lineStart = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0 && line.size() - lineStart + 2 + items[i].size() > 100) {
        line += "\n" + std::string(indent, ' ');
        lineStart = line.size() - indent;
      } else if (i > 0) {
        line += "  ";
      }
      line += items[i];
    }
    out += line + "\n";
  }
  return out;
}

// `prefix` + `text` wrapped at spaces within `width` columns (a word longer than the line, a
// path, stays whole), continuation lines indented under the text.
std::string wrapped(const std::string& prefix, const std::string& text, size_t width = 100) {
  const std::string indent(prefix.size(), ' ');
  std::string out, line = prefix;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find(' ', i);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(i, end - i);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
    }
    if (line.size() > indent.size()) line += ' ';
    line += word;
    i = end + 1;
  }
  return out + line + "\n";
}

// `runs show ID`: the run's row, config, latest scalars, checkpoints and events.
void showRun(const GlobalOptions& g, int64_t id) {
  auto s = openStoreToRead(g);
  auto r = requireRun(s, id);
  auto latest = s.latestScalars(id);
  auto ckpts = s.checkpoints(id);
  auto events = s.events(id);
  if (g.json) {
    auto j = runToJson(r);
    for (const auto& [k, p] : latest) j["latest"][k] = {{"step", p.step}, {"value", p.value}};
    j["layer_metrics"] = s.layerMetrics(id);
    j["matrix_kinds"] = s.matrixKinds(id);
    for (const auto& c : ckpts) j["checkpoints"].push_back({{"step", c.step}, {"path", c.path}});
    for (const auto& e : events) {
      j["events"].push_back({{"level", store::toString(e.level)},
                             {"message", e.message},
                             {"step", e.step ? nlohmann::json(*e.step) : nlohmann::json()}});
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "run " << r.id << ": " << r.name << "\n"
            << "  status   " << store::toString(r.status) << "\n"
            << "  scheme   " << r.scheme << "   group " << r.groupName << "   seed " << r.seed
            << "\n  device   " << r.device << "   host " << r.host << " pid " << r.pid << "\n"
            << "  created  " << formatTime(r.createdAt) << "   finished "
            << formatTime(r.finishedAt.value_or(0)) << "\n";
  if (const auto trained = store::trainingSeconds(r)) {  // not the pauses before resumes
    std::cout << "  trained  " << experiment::formatDuration(*trained);
    if (r.pausedSeconds > 0) {
      std::cout << "   (stopped " << experiment::formatDuration(r.pausedSeconds)
                << " in all before resumes)";
    }
    std::cout << "\n";
  }
  if (!r.tags.empty()) {
    std::cout << "  tags    ";
    for (const auto& t : r.tags) std::cout << " " << t;
    std::cout << "\n";
  }
  if (!r.notes.empty()) std::cout << "  notes    " << r.notes << "\n";
  std::cout << configSummary(r.configJson);
  for (const auto& [k, p] : latest) {
    std::cout << "  " << std::left << std::setw(16) << k << p.value << "  (step " << p.step
              << ")\n";
  }
  for (const auto& c : ckpts) std::cout << "  checkpoint step " << c.step << ": " << c.path << "\n";
  for (const auto& e : events) {
    std::cout << wrapped("  [" + std::string(store::toString(e.level)) + "] ", e.message);
  }
}

/// What the `runs` subcommands read: a selection, a run id, a tag or note text.
struct RunsArgs {
  std::string selection;
  int64_t id = 0;
  std::string text;
};

void listRuns(GlobalOptions& g, const std::string& selection) {
  auto s = openStoreToRead(g);
  auto all = s.listRuns();
  if (!selection.empty()) {
    std::map<int64_t, const store::RunInfo*> byId;
    for (const auto& r : all) byId[r.id] = &r;
    std::vector<store::RunInfo> chosen;
    for (int64_t want : experiment::resolveRunSelection(selection, s)) {  // in the order given
      if (auto it = byId.find(want); it != byId.end()) chosen.push_back(*it->second);
    }
    all = std::move(chosen);
  }
  if (g.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : all) j.push_back(runToJson(r));
    std::cout << j.dump(2) << "\n";
  } else {
    printRunTable(all, s.runSummaries());
  }
}

void deleteRun(GlobalOptions& g, int64_t id) {
  auto s = openStore(g);
  if (!s.deleteRun(id)) throw std::runtime_error("no run with id " + std::to_string(id));
  if (!g.json)
    std::cout << "deleted run " << id << "\n";
  else
    std::cout << nlohmann::json{{"deleted", id}}.dump() << "\n";
}

/// A tag or a note: the run must exist; --json prints the run as it now is.
void editRun(GlobalOptions& g, int64_t id, const std::function<void(store::RunStore&)>& edit) {
  auto s = openStore(g);
  requireRun(s, id);
  edit(s);
  if (g.json) std::cout << runToJson(requireRun(s, id)).dump(2) << "\n";
}

}  // namespace

void addRunsCommand(CLI::App& app, GlobalOptions& g) {
  auto* runs = app.add_subcommand("runs", "List and edit stored runs");
  runs->require_subcommand(1);
  auto a = std::make_shared<RunsArgs>();

  auto* list = runs->add_subcommand("list", "List every run (or those --runs names)");
  list->add_option(
      "--runs", a->selection,
      "Only these runs: ids 3,4,7, a range 5-8, or group:NAME (mixed, comma-separated)");
  list->callback([&g, a] { listRuns(g, a->selection); });

  auto* show = runs->add_subcommand("show", "Show one run: config, latest metrics, events");
  show->add_option("id", a->id, "Run id")->required();
  show->callback([&g, a] { showRun(g, a->id); });

  auto* rm = runs->add_subcommand("rm", "Delete a run and all its metrics");
  rm->add_option("id", a->id, "Run id")->required();
  rm->callback([&g, a] { deleteRun(g, a->id); });

  auto* tag = runs->add_subcommand("tag", "Add a tag to a run");
  tag->add_option("id", a->id, "Run id")->required();
  tag->add_option("tag", a->text, "Tag")->required();
  tag->callback(
      [&g, a] { editRun(g, a->id, [&](store::RunStore& s) { s.addTag(a->id, a->text); }); });

  auto* note = runs->add_subcommand("note", "Set a run's notes");
  note->add_option("id", a->id, "Run id")->required();
  note->add_option("text", a->text, "Notes")->required();
  note->callback(
      [&g, a] { editRun(g, a->id, [&](store::RunStore& s) { s.setNotes(a->id, a->text); }); });
}

}  // namespace depthlab::cli
