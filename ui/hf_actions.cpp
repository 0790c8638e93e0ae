// See hf_actions.h.
#include "hf_actions.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>

#include "launch/cli_job.h"

namespace depthlab::ui {

HfActions::HfActions(QString database, QString cliPath, QString corpusPath, QObject* parent)
    : QObject(parent), m_db(std::move(database)), m_cli(std::move(cliPath)), m_corpus(std::move(corpusPath)) {}

CliJob* HfActions::startJob(const QStringList& args) {
  m_job = new CliJob(m_cli, m_db, args, this);
  connect(m_job, &CliJob::progress, this, &HfActions::message);
  return m_job;
}

void HfActions::openModel(const QString& dir) {
  if (busy()) {
    emit message(tr("A Hugging Face import or export is still running"));
    return;
  }
  auto* job = startJob({QStringLiteral("import-hf"), dir, QStringLiteral("--json")});
  connect(job, &CliJob::finished, this, [this, job, dir](int code, const QString& out, const QString& error) {
    job->deleteLater();
    m_job = nullptr;
    if (code != 0) {
      emit failed(tr("Cannot import %1").arg(dir), error);
      return;
    }
    const auto j = QJsonDocument::fromJson(out.toUtf8()).object();
    const auto runId = static_cast<int64_t>(j.value(QStringLiteral("run_id")).toDouble());
    emit message(tr("Imported %1 as run %2 (%3 layers, %4 M parameters); probing it on %5…")
                     .arg(j.value(QStringLiteral("architecture")).toString())
                     .arg(runId)
                     .arg(j.value(QStringLiteral("layers")).toInt())
                     .arg(j.value(QStringLiteral("parameters")).toDouble() / 1e6, 0, 'f', 1)
                     .arg(QDir(m_corpus).dirName()));
    analyze(runId, QDir(dir).dirName());
  });
  emit message(tr("Importing %1…").arg(dir));
  job->start();
}

void HfActions::analyze(int64_t runId, const QString& name) {
  auto* job = startJob({QStringLiteral("analyze"), QStringLiteral("--run"), QString::number(runId),
                        QStringLiteral("--corpus"), m_corpus});
  connect(job, &CliJob::progress, this, [this, name](const QString& line) {
    emit message(tr("%1: %2").arg(name, line));
  });
  connect(job, &CliJob::finished, this, [this, job, runId, name](int code, const QString&, const QString& error) {
    job->deleteLater();
    m_job = nullptr;
    if (code != 0) {
      emit failed(tr("Imported %1 as run %2, but could not probe it").arg(name).arg(runId),
                  error + tr("\n\nThe run is kept; probe it later with\ndepthlab-cli analyze --run %1 "
                             "--corpus TEXT (or --tokens IDS)").arg(runId));
      emit imported(runId);
      return;
    }
    emit message(tr("Probed %1 (run %2)").arg(name).arg(runId));
    emit imported(runId);
  });
  job->start();
}

void HfActions::exportRun(int64_t runId, const QString& outDir) {
  if (busy()) {
    emit message(tr("A Hugging Face import or export is still running"));
    return;
  }
  auto* job = startJob({QStringLiteral("export-hf"), QStringLiteral("--run"), QString::number(runId),
                        QStringLiteral("--out"), outDir});
  connect(job, &CliJob::finished, this, [this, job, runId, outDir](int code, const QString& out, const QString& error) {
    job->deleteLater();
    m_job = nullptr;
    if (code != 0) {
      emit failed(tr("Cannot export run %1").arg(runId), error);
      return;
    }
    emit message(out.trimmed());
    emit exported(runId, outDir);
  });
  emit message(tr("Exporting run %1 to %2…").arg(runId).arg(outDir));
  job->start();
}

}  // namespace depthlab::ui
