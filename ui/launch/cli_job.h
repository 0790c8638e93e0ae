// CliJob: one `depthlab-cli` command run in the background for the window (import a Hugging Face
// model, analyze it, export a run), so the GUI thread never waits on it and a crash stays in
// that process. Reports each line the command prints on stderr (its progress) and, at the end,
// its exit code, stdout and the last error line. One command per job; the job deletes nothing.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace depthlab::ui {

class CliJob : public QObject {
  Q_OBJECT
 public:
  /// `cliPath` empty: RunLauncher::defaultCliPath(). `arguments` come after `--db <database>`.
  CliJob(QString cliPath, QString database, QStringList arguments, QObject* parent = nullptr);
  ~CliJob() override;
  void start();
  bool running() const { return m_process.state() != QProcess::NotRunning; }

 Q_SIGNALS:
  void progress(const QString& line);
  /// `error`: the command's last stderr line when it failed ("" on success).
  void finished(int exitCode, const QString& output, const QString& error);

 private:
  QProcess m_process;
  QString m_cli, m_db;
  QStringList m_args;
  QByteArray m_stderrPending;
  QString m_lastErrorLine;
};

}  // namespace depthlab::ui
