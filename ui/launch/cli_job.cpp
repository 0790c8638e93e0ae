// See cli_job.h.
#include "launch/cli_job.h"

#include "launch/run_launcher.h"

namespace depthlab::ui {

namespace {

// The argument parser's closing hint says nothing about what went wrong: the line before it does.
bool isHelpHint(const QString& line) {
  return line == QLatin1String("Run with --help for more information.");
}

}  // namespace

CliJob::CliJob(QString cliPath, QString database, QStringList arguments, QObject* parent)
    : QObject(parent),
      m_cli(cliPath.isEmpty() ? RunLauncher::defaultCliPath() : std::move(cliPath)),
      m_db(std::move(database)),
      m_args(std::move(arguments)) {
  connect(&m_process, &QProcess::readyReadStandardError, this, [this] {
    m_stderrPending += m_process.readAllStandardError();
    int end;
    while ((end = m_stderrPending.indexOf('\n')) >= 0) {
      const QString line = QString::fromUtf8(m_stderrPending.left(end)).trimmed();
      m_stderrPending.remove(0, end + 1);
      if (line.isEmpty()) continue;
      if (!isHelpHint(line)) m_lastErrorLine = line;
      emit progress(line);
    }
  });
  connect(&m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    const QString out = QString::fromUtf8(m_process.readAllStandardOutput());
    const QString rest = QString::fromUtf8(m_stderrPending).trimmed();
    if (!rest.isEmpty() && !isHelpHint(rest)) m_lastErrorLine = rest;
    if (status != QProcess::NormalExit) {
      emit finished(-1, out, tr("depthlab-cli stopped unexpectedly (%1)").arg(m_lastErrorLine));
      return;
    }
    QString error = code == 0 ? QString() : m_lastErrorLine;
    if (error.startsWith(QStringLiteral("depthlab-cli: "))) error = error.mid(14);
    emit finished(code, out, error);
  });
  connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
    if (e == QProcess::FailedToStart) {
      emit finished(-1, QString(), tr("cannot start %1: %2").arg(m_cli, m_process.errorString()));
    }
  });
}

CliJob::~CliJob() {
  if (running()) {
    m_process.disconnect(this);
    m_process.terminate();
    m_process.waitForFinished(5000);
  }
}

void CliJob::start() {
  QStringList args = {QStringLiteral("--db"), m_db};
  args += m_args;
  m_process.start(m_cli, args);
}

}  // namespace depthlab::ui
