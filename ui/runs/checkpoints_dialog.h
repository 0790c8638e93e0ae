// CheckpointsDialog: what the Runs tab's "Checkpoints" shows for one run: its checkpoints by
// step with the validation loss at that step, file, size (or "missing" where the file is gone)
// and when each was written; the folder's path, selectable and copyable; and "Open folder",
// which says so when no file manager opens it (the button had only named the folder in the
// status bar). Reads the store and the file system; changes nothing.
#pragma once

#include <QDialog>

#include <cstdint>

#include "store/run_store.h"

class QLabel;
class QLineEdit;
class QTableWidget;

namespace depthlab::ui {

class CheckpointsDialog : public QDialog {
  Q_OBJECT
 public:
  CheckpointsDialog(store::RunStore& store, int64_t runId, QWidget* parent = nullptr);

  QTableWidget* table() const { return m_table; }
  /// The folder of the newest checkpoint (the line at the top).
  QString folder() const;
  /// The selected checkpoint's path, else the folder (what "Copy path" copies).
  QString pathToCopy() const;
  /// What "Open folder" did: empty until pressed.
  QString openNote() const;
  /// Opens the folder with the desktop's file manager; false (and a note) when none did.
  bool openFolder();

 private:
  QLineEdit* m_folder = nullptr;
  QTableWidget* m_table = nullptr;
  QLabel* m_note = nullptr;
};

}  // namespace depthlab::ui
