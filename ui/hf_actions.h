// HfActions: the window's Hugging Face commands. "Open Hugging Face model…" imports a model folder
// (depthlab-cli import-hf) and then probes it on the lab's default corpus (depthlab-cli analyze),
// both in the background with their progress in the status bar, and opens its dashboard;
// "Export HF…" in the Runs tab writes a trained run as a LlamaForCausalLM folder (export-hf).
// Failures come back as the command's own message. No model code runs in the GUI process.
#pragma once

#include <QObject>
#include <QString>

#include <cstdint>

namespace depthlab::ui {

class CliJob;

class HfActions : public QObject {
  Q_OBJECT
 public:
  HfActions(QString database, QString cliPath, QString corpusPath, QObject* parent = nullptr);

  /// Imports `dir`, then analyzes it on the corpus (a second step the user can skip by error).
  void openModel(const QString& dir);
  /// Writes run `runId` to the new folder `outDir`.
  void exportRun(int64_t runId, const QString& outDir);
  bool busy() const { return m_job != nullptr; }

 Q_SIGNALS:
  void message(const QString& text);
  /// A step failed: title and the command's message.
  void failed(const QString& title, const QString& text);
  /// The imported run (after its analysis) whose dashboard to open.
  void imported(int64_t runId);
  void exported(int64_t runId, const QString& dir);

 private:
  void analyze(int64_t runId, const QString& name);
  CliJob* startJob(const QStringList& args);

  QString m_db, m_cli, m_corpus;
  CliJob* m_job = nullptr;
};

}  // namespace depthlab::ui
