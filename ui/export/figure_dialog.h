// FigureDialog: the window's way to make a paper figure. Pick the figure (loss, variance,
// angular, pruning, or all four into a folder), the runs, the format, the physical size and the
// font, the loss figure's smoothing, rename schemes and runs for the legend ("Pre-LN", "LNS
// (ours)"; kept in the run database, where the CLI's export and Compare's LaTeX table read them),
// and see a live preview that is the exported figure (the same drawFigure the CLI's export uses, at
// the same size). Saving writes the figure with its CSV and JSON and keeps the style (names
// included) for the next export. Reads the offered runs' series once, when it opens (FigureRuns,
// through the dashboard's reader; with the window's store on its poller's loader thread, the
// preview saying so meanwhile) and on reloadRuns(); redrawing a preview reads no store. Saving
// exports from the store as the CLI does. Trains nothing.
#pragma once

#include <QDialog>
#include <QImage>

#include <vector>

#include "export/figure_export.h"
#include "export/figure_style.h"
#include "store/run_store.h"

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QPushButton;
class QVBoxLayout;
class QLabel;
class QListWidget;
class QTableWidget;
class QTimer;

namespace depthlab::ui {

class FigureDialog : public QDialog {
  Q_OBJECT
 public:
  /// `runIds`: the runs offered (all checked); `figure`: a figure-catalogue id
  /// (figure_catalogue.h) or "set".
  FigureDialog(store::RunStore& store, std::vector<int64_t> runIds, const QString& figure,
               FigureStyle style, QWidget* parent = nullptr);

  /// What Save would export now (for a set: the first figure's request).
  ExportRequest request() const;
  QString figure() const;  // "loss" ... or "set"
  FigureStyle style() const;
  void setFigure(const QString& figure);
  void setWidthCm(double cm);
  void setFormat(const QString& format);
  /// Names a scheme ("pre_ln") or a run ("#7") in the figure's labels.
  void setDisplayName(const QString& key, const QString& name);
  /// Redraws the preview now (it also redraws itself shortly after each change and resize),
  /// from the runs read when the dialog opened or last reloaded: no store read.
  void updatePreview();
  /// Reads the offered runs' series again (a run trained further since) and redraws.
  void reloadRuns();
  /// Pixels per point that show a figure of `figurePt` whole in `room` (0.5 to 2.5).
  static double previewScale(QSize figurePt, QSize room);
  QImage previewImage() const { return m_preview; }
  QString warnings() const;
  /// Exports to `path` (a file; a folder for "set"). Returns the files written; throws
  /// std::runtime_error with the reason.
  QStringList saveTo(const QString& path);
  /// Whether the window's loader thread is still reading the offered runs (the preview waits).
  bool isReading() const { return m_reading; }

 Q_SIGNALS:
  /// The style (size, font, names) after a save: the window keeps it for the next export.
  void styleSaved(const depthlab::ui::FigureStyle& style);

 protected:
  void resizeEvent(QResizeEvent* e) override;

 private:
  void addStyleFields(QFormLayout* form);  // figure, format, size, font, palette, smoothing
  void addRunLists(QVBoxLayout* left);     // the runs offered and the names table
  QPushButton* addPreviewSide(QVBoxLayout* right);  // preview, warnings, buttons; returns Save
  void connectPreview();  // a change of any field redraws the preview (debounced)
  void saveAsked();       // Save…: asks where, saves, says what it wrote
  void fillNames();
  void readRuns();  // m_read from the offered runs
  std::vector<int64_t> checkedRuns() const;

  store::RunStore& m_store;
  std::vector<int64_t> m_runIds;
  FigureRuns m_read;         // the offered runs' series (and family table), read once
  QString m_readError;       // why they could not be read, if so
  bool m_reading = false;    // the window's loader thread is reading them
  int m_readGeneration = 0;  // the newest read; answers to older ones are dropped
  FigureStyle m_base;
  QComboBox *m_figure, *m_format, *m_palette;
  QDoubleSpinBox *m_width, *m_height, *m_font, *m_smoothing;
  QListWidget* m_runs;
  QTableWidget* m_names;
  QLabel* m_previewLabel;
  QLabel* m_warnings;
  QTimer* m_debounce;
  QImage m_preview;
};

}  // namespace depthlab::ui
