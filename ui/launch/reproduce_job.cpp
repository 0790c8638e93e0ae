// See reproduce_job.h.
#include "launch/reproduce_job.h"

#include "launch/cli_job.h"

namespace depthlab::ui {

ReproduceJob::ReproduceJob(QString database, QString cliPath, QObject* parent)
    : QObject(parent), m_db(std::move(database)), m_cli(std::move(cliPath)) {}

ReproduceJob::~ReproduceJob() {
  if (m_job && m_detach) {
    m_job->disconnect(this);
    m_job->setParent(nullptr);  // not destroyed: its process is not terminated
  }
}

bool ReproduceJob::start(const QString& recipe, const QStringList& arguments) {
  if (busy()) return false;
  m_recipe = recipe;
  m_job = new CliJob(m_cli, m_db, arguments, this);
  connect(m_job, &CliJob::progress, this, [this](const QString& line) {
    emit message(tr("Reproduce %1: %2").arg(m_recipe, line.simplified()));
  });
  connect(
      m_job, &CliJob::finished, this, [this](int code, const QString& out, const QString& error) {
        m_job->deleteLater();
        m_job = nullptr;
        const QString recipe = m_recipe;
        m_recipe.clear();
        if (code != 0) {
          emit failed(tr("Reproduce %1 stopped with an error").arg(recipe),
                      error.isEmpty() ? tr("depthlab-cli exited with code %1").arg(code) : error);
          return;
        }
        emit finished(recipe, out);
      });
  emit message(
      tr("Reproduce %1: starting depthlab-cli %2").arg(recipe, arguments.join(QLatin1Char(' '))));
  m_job->start();
  return true;
}

}  // namespace depthlab::ui
