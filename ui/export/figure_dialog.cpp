// See figure_dialog.h.
#include "export/figure_dialog.h"
#include "store_poller.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "dashboard/panel_specs.h"
#include "export/figure_catalogue.h"
#include "plot/run_labels.h"

namespace depthlab::ui {

namespace {
constexpr double kPtPerCm = 72.0 / 2.54;
}

FigureDialog::FigureDialog(store::RunStore& store, std::vector<int64_t> runIds,
                           const QString& initialFigure, FigureStyle style, QWidget* parent)
    : QDialog(parent), m_store(store), m_runIds(std::move(runIds)), m_base(std::move(style)) {
  setWindowTitle(tr("Paper figure"));
  addStoredNames(m_base, m_store);  // the names the database keeps, as the CLI's export uses
  auto* outer = new QHBoxLayout(this);
  auto* left = new QVBoxLayout;
  outer->addLayout(left, 0);
  auto* form = new QFormLayout;
  left->addLayout(form);
  addStyleFields(form);
  addRunLists(left);
  fillNames();
  readRuns();
  auto* right = new QVBoxLayout;
  outer->addLayout(right, 1);
  auto* save = addPreviewSide(right);
  connectPreview();
  connect(save, &QPushButton::clicked, this, &FigureDialog::saveAsked);
  setFigure(initialFigure);
  updatePreview();
}

namespace {

// A length in centimetres from `minimum` to 40, 0.5 cm a step.
QDoubleSpinBox* centimetres(double minimum, double valuePt, const QString& tip) {
  auto* box = new QDoubleSpinBox;
  box->setRange(minimum, 40);
  box->setDecimals(1);
  box->setSingleStep(0.5);
  box->setSuffix(QStringLiteral(" cm"));
  box->setValue(valuePt / kPtPerCm);
  box->setToolTip(tip);
  return box;
}

}  // namespace

void FigureDialog::addStyleFields(QFormLayout* form) {
  m_figure = new QComboBox;
  m_figure->setObjectName(QStringLiteral("figure"));
  for (const auto& row : figureCatalogue()) {  // the catalogue's figures, in its order
    m_figure->addItem(QString::fromUtf8(row.title), QString::fromLatin1(row.id));
  }
  QStringList set;
  for (const auto& id : dashboard::exportedFigures()) set << id;
  m_figure->addItem(tr("The figure set (%1), into a folder").arg(set.join(QStringLiteral(", "))),
                    QStringLiteral("set"));
  m_figure->setToolTip(tr("Which figure (the same as depthlab-cli export --figure)"));
  form->addRow(tr("Figure"), m_figure);
  m_format = new QComboBox;
  m_format->addItems({QStringLiteral("pdf"), QStringLiteral("svg"), QStringLiteral("png")});
  m_format->setToolTip(
      tr("PDF and SVG are vector (fonts embedded); PNG uses the DPI of the style"));
  form->addRow(tr("Format"), m_format);
  m_width = centimetres(3, m_base.widthPt, tr("8.5 cm: one column; 17 cm: a full page width"));
  m_width->setObjectName(QStringLiteral("widthCm"));
  form->addRow(tr("Width"), m_width);
  m_height = centimetres(0, m_base.heightPt, tr("auto: from the width and the panel grid"));
  m_height->setSpecialValueText(tr("auto"));
  form->addRow(tr("Height"), m_height);
  m_font = new QDoubleSpinBox;
  m_font->setRange(4, 16);
  m_font->setDecimals(1);
  m_font->setSuffix(QStringLiteral(" pt"));
  m_font->setValue(m_base.fontPt);
  form->addRow(tr("Font size"), m_font);
  m_palette = new QComboBox;
  m_palette->addItems({QStringLiteral("okabe-ito"), QStringLiteral("tol-bright")});
  m_palette->setCurrentText(m_base.palette);
  m_palette->setToolTip(tr("Colour-blind-safe palettes"));
  form->addRow(tr("Palette"), m_palette);
  m_smoothing = new QDoubleSpinBox;
  m_smoothing->setObjectName(QStringLiteral("smoothing"));
  m_smoothing->setRange(0, 0.99);
  m_smoothing->setDecimals(2);
  m_smoothing->setSingleStep(0.05);
  m_smoothing->setSpecialValueText(tr("0 (raw)"));
  m_smoothing->setValue(m_base.smoothing);
  m_smoothing->setToolTip(
      tr("Loss figure: EMA weight of the train curves, as the dashboard's "
         "smoothing (the raw curve stays faint; the key says the weight)"));
  form->addRow(tr("Loss smoothing"), m_smoothing);
}

void FigureDialog::addRunLists(QVBoxLayout* left) {
  left->addWidget(new QLabel(tr("Runs")));
  m_runs = new QListWidget;
  m_runs->setObjectName(QStringLiteral("runs"));
  std::vector<store::RunInfo> infos;
  for (int64_t id : m_runIds) {
    if (auto r = m_store.run(id)) infos.push_back(*r);
  }
  const QStringList labels = runLabels(infos, m_base);
  for (size_t i = 0; i < infos.size(); ++i) {
    auto* item = new QListWidgetItem(
        QStringLiteral("#%1  %2").arg(infos[i].id).arg(labels[static_cast<int>(i)]));
    item->setData(Qt::UserRole, QVariant::fromValue<qlonglong>(infos[i].id));
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Checked);
    m_runs->addItem(item);
  }
  m_runs->setMaximumHeight(140);
  left->addWidget(m_runs);
  left->addWidget(new QLabel(tr("Names in the figure (edit the right column)")));
  m_names = new QTableWidget;
  m_names->setObjectName(QStringLiteral("names"));
  m_names->setColumnCount(2);
  m_names->setHorizontalHeaderLabels({tr("scheme or run"), tr("shown as")});
  m_names->horizontalHeader()->setStretchLastSection(true);
  m_names->verticalHeader()->hide();
  m_names->setToolTip(
      tr("\"pre_ln\" names a scheme in every figure; \"#7\" one run. Saved with the style."));
  left->addWidget(m_names, 1);
}

QPushButton* FigureDialog::addPreviewSide(QVBoxLayout* right) {
  m_previewLabel = new QLabel;
  m_previewLabel->setObjectName(QStringLiteral("preview"));
  m_previewLabel->setMinimumSize(560, 400);
  m_previewLabel->setAlignment(Qt::AlignCenter);
  m_previewLabel->setStyleSheet(QStringLiteral("background: #e8e8e8;"));
  right->addWidget(m_previewLabel, 1);
  m_warnings = new QLabel;
  m_warnings->setWordWrap(true);
  m_warnings->setStyleSheet(QStringLiteral("color: #a04000;"));
  right->addWidget(m_warnings);
  auto* buttons = new QDialogButtonBox;
  auto* save = buttons->addButton(tr("Save…"), QDialogButtonBox::AcceptRole);
  save->setToolTip(tr("Write the figure (and its CSV and JSON) and keep this style"));
  buttons->addButton(QDialogButtonBox::Close);
  right->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  return save;
}

void FigureDialog::connectPreview() {
  m_debounce = new QTimer(this);
  m_debounce->setSingleShot(true);
  m_debounce->setInterval(150);
  connect(m_debounce, &QTimer::timeout, this, &FigureDialog::updatePreview);
  auto later = [this] { m_debounce->start(); };
  connect(m_figure, &QComboBox::currentIndexChanged, this, later);
  connect(m_format, &QComboBox::currentIndexChanged, this, later);
  connect(m_palette, &QComboBox::currentIndexChanged, this, later);
  for (auto* spin : {m_width, m_height, m_font, m_smoothing})
    connect(spin, &QDoubleSpinBox::valueChanged, this, later);
  connect(m_runs, &QListWidget::itemChanged, this, later);
  connect(m_names, &QTableWidget::itemChanged, this, later);
}

void FigureDialog::saveAsked() {
  const bool set = figure() == QLatin1String("set");
  const QString path =
      set ? QFileDialog::getExistingDirectory(this, tr("Folder for the figure set"))
          : QFileDialog::getSaveFileName(this, tr("Save figure"),
                                         figure() + QLatin1Char('.') + m_format->currentText(),
                                         tr("Figures (*.pdf *.svg *.png)"));
  if (path.isEmpty()) return;
  try {
    const QStringList files = saveTo(path);
    QMessageBox::information(this, tr("Figure saved"),
                             tr("Wrote:\n%1").arg(files.join(QLatin1Char('\n'))));
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Export failed"), QString::fromStdString(e.what()));
  }
}

void FigureDialog::fillNames() {
  QSignalBlocker block(m_names);
  std::set<QString> schemes;
  std::vector<store::RunInfo> infos;
  for (int64_t id : m_runIds) {
    if (auto r = m_store.run(id)) {
      infos.push_back(*r);
      schemes.insert(QString::fromStdString(r->scheme));
    }
  }
  m_names->setRowCount(static_cast<int>(schemes.size() + infos.size()));
  int row = 0;
  for (const auto& s : schemes) {
    auto* key = new QTableWidgetItem(s);
    key->setFlags(key->flags() & ~Qt::ItemIsEditable);
    m_names->setItem(row, 0, key);
    m_names->setItem(row++, 1, new QTableWidgetItem(schemeDisplayName(m_base, s)));
  }
  for (const auto& r : infos) {
    auto* key = new QTableWidgetItem(QStringLiteral("#%1").arg(r.id));
    key->setFlags(key->flags() & ~Qt::ItemIsEditable);
    key->setToolTip(QString::fromStdString(r.name));
    m_names->setItem(row, 0, key);
    // Empty: the run is called by its scheme's name (or its own name when renamed).
    m_names->setItem(row++, 1, new QTableWidgetItem(m_base.runNames.value(r.id)));
  }
}

namespace {

// The offered runs' series and family table, or why they could not be read.
struct DialogRead {
  FigureRuns runs;
  QString error;
};

std::shared_ptr<DialogRead> readForDialog(store::RunStore& store, const std::vector<int64_t>& ids) {
  auto out = std::make_shared<DialogRead>();
  try {
    out->runs = readFigureRuns(store, ids, /*withFamilyTable=*/false);
  } catch (const std::exception& e) {
    out->error = QString::fromStdString(e.what());
    return out;
  }
  try {  // the family figures' table; without it the other figures still draw
    out->runs.family =
        std::make_shared<const experiment::FamilyTable>(experiment::makeFamilyTable(store, ids));
  } catch (const std::exception&) {}
  return out;
}

}  // namespace

void FigureDialog::readRuns() {
  std::vector<int64_t> ids;
  for (int i = 0; i < m_runs->count(); ++i)
    ids.push_back(m_runs->item(i)->data(Qt::UserRole).toLongLong());
  m_read = FigureRuns{};
  m_readError.clear();
  if (ids.empty()) return;
  auto take = [this](const std::shared_ptr<DialogRead>& read) {
    m_read = read->runs;
    m_readError = read->error;
  };
  // The window's store: read on its loader thread; the preview says so until the runs arrive.
  if (auto* poller = StorePoller::owning(m_store)) {
    const int generation = ++m_readGeneration;
    m_reading = poller->readAsync<std::shared_ptr<DialogRead>>(
        [ids](store::RunStore& store) { return readForDialog(store, ids); }, this,
        [this, take, generation](std::shared_ptr<DialogRead> read) {
          if (generation != m_readGeneration) return;  // a later read is under way
          m_reading = false;
          take(read);
          updatePreview();
        },
        [this, generation](const QString& message) {
          if (generation != m_readGeneration) return;
          m_reading = false;
          m_readError = message;
          updatePreview();
        });
    if (m_reading) return;
  }
  take(readForDialog(m_store, ids));
}

void FigureDialog::reloadRuns() {
  readRuns();
  updatePreview();
}

std::vector<int64_t> FigureDialog::checkedRuns() const {
  std::vector<int64_t> ids;
  for (int i = 0; i < m_runs->count(); ++i) {
    if (m_runs->item(i)->checkState() == Qt::Checked)
      ids.push_back(m_runs->item(i)->data(Qt::UserRole).toLongLong());
  }
  return ids;
}

QString FigureDialog::figure() const { return m_figure->currentData().toString(); }

FigureStyle FigureDialog::style() const {
  FigureStyle s = m_base;
  s.widthPt = m_width->value() * kPtPerCm;
  s.heightPt = m_height->value() * kPtPerCm;
  s.fontPt = m_font->value();
  s.palette = m_palette->currentText();
  s.smoothing = m_smoothing->value();
  for (int r = 0; r < m_names->rowCount(); ++r) {
    const QString key = m_names->item(r, 0)->text();
    const QString name = m_names->item(r, 1) ? m_names->item(r, 1)->text().trimmed() : QString();
    if (key.startsWith(QLatin1Char('#'))) {
      if (name.isEmpty())
        s.runNames.remove(key.mid(1).toLongLong());
      else
        s.runNames[key.mid(1).toLongLong()] = name;
    } else if (name.isEmpty() || name == defaultSchemeName(key)) {
      s.schemeNames.remove(key);
    } else {
      s.schemeNames[key] = name;
    }
  }
  return s;
}

ExportRequest FigureDialog::request() const {
  ExportRequest req;
  req.runs = checkedRuns();
  req.figure = figure() == QLatin1String("set") ? dashboard::exportedFigures().front() : figure();
  req.format = m_format->currentText();
  req.style = style();
  return req;
}

void FigureDialog::setFigure(const QString& f) {
  const int i = m_figure->findData(f);
  if (i >= 0) m_figure->setCurrentIndex(i);
}
void FigureDialog::setWidthCm(double cm) { m_width->setValue(cm); }
void FigureDialog::setFormat(const QString& format) { m_format->setCurrentText(format); }

void FigureDialog::setDisplayName(const QString& key, const QString& name) {
  for (int r = 0; r < m_names->rowCount(); ++r) {
    const QString k = m_names->item(r, 0)->text();
    if (k == key || k == QLatin1Char('#') + key) m_names->item(r, 1)->setText(name);
  }
}

QString FigureDialog::warnings() const { return m_warnings->text(); }

double FigureDialog::previewScale(QSize figurePt, QSize room) {
  const double byWidth = (room.width() - 10) / static_cast<double>(std::max(1, figurePt.width()));
  const double byHeight =
      (room.height() - 10) / static_cast<double>(std::max(1, figurePt.height()));
  return std::clamp(std::min(byWidth, byHeight), 0.5, 2.5);
}

void FigureDialog::resizeEvent(QResizeEvent* e) {
  QDialog::resizeEvent(e);
  m_debounce->start();  // the preview fits the new size
}

void FigureDialog::updatePreview() {
  const ExportRequest req = request();
  if (req.runs.empty()) {
    m_preview = QImage();
    m_previewLabel->setText(tr("Check at least one run"));
    return;
  }
  if (m_reading) {
    m_preview = QImage();
    m_previewLabel->setText(tr("Reading the runs from the database\u2026"));
    return;
  }
  try {
    QCustomPlot plot;
    if (!m_readError.isEmpty()) throw std::runtime_error(m_readError.toStdString());
    const QStringList warnings = drawFigure(&plot, m_read, req);  // no store read
    const QSize pt = figureSizePt(req);
    // The exported figure at its size, scaled to fit the preview whole (a tall figure, four
    // runs' panels two by two at 8.5 cm, had been scaled to the width and cut at top and bottom).
    const double scale = previewScale(pt, m_previewLabel->size());
    m_preview = plot.toPixmap(pt.width(), pt.height(), scale).toImage();
    m_previewLabel->setPixmap(QPixmap::fromImage(m_preview));
    m_warnings->setText(tr("%1 × %2 cm")
                            .arg(pt.width() / kPtPerCm, 0, 'f', 1)
                            .arg(pt.height() / kPtPerCm, 0, 'f', 1) +
                        (figure() == QLatin1String("set")
                             ? tr(" (preview: the %1 figure of the set)").arg(req.figure)
                             : QString()) +
                        (warnings.isEmpty()
                             ? QString()
                             : QStringLiteral(" — ") + warnings.join(QStringLiteral("; "))));
  } catch (const std::exception& e) {
    m_preview = QImage();
    m_previewLabel->setText(QString::fromStdString(e.what()));
  }
}

QStringList FigureDialog::saveTo(const QString& path) {
  ExportRequest req = request();
  if (req.runs.empty()) throw std::runtime_error("no run is checked");
  ExportResult r;
  if (figure() == QLatin1String("set")) {
    r = exportFigureSet(m_store, req.runs, req.format, path, req.style);
  } else {
    req.path = path;
    if (QFileInfo(path).suffix().isEmpty())
      req.path += QLatin1Char('.') + req.format;
    else
      req.format = QFileInfo(path).suffix().toLower();
    r = exportFigure(m_store, req);
  }
  m_base = req.style;
  // The names go to the database too: `depthlab-cli export` and Compare's LaTeX table read them.
  std::vector<QString> schemes;
  std::vector<qint64> runs;
  for (int row = 0; row < m_names->rowCount(); ++row) {
    const QString key = m_names->item(row, 0)->text();
    if (key.startsWith(QLatin1Char('#')))
      runs.push_back(key.mid(1).toLongLong());
    else
      schemes.push_back(key);
  }
  try {
    storeNames(req.style, m_store, schemes, runs);
  } catch (const std::exception& e) {  // a read-only database: the figure is saved all the same
    m_warnings->setText(
        tr("Names not kept in the database: %1").arg(QString::fromStdString(e.what())));
  }
  Q_EMIT styleSaved(req.style);
  return r.files;
}

}  // namespace depthlab::ui
