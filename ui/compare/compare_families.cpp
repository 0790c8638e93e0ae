// See compare_families.h.
#include "compare/compare_families.h"

#include <QFile>
#include <QFileDialog>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>

namespace depthlab::ui {

QGroupBox* makeFamilyBox(const experiment::FamilyTable& t) {
  auto* box = new QGroupBox(QObject::tr("Model families: lazy and effective layers"));
  auto* layout = new QVBoxLayout(box);
  auto* table = new QTableWidget(static_cast<int>(t.rows.size()), 8);
  table->setObjectName(QStringLiteral("familyTable"));
  table->setHorizontalHeaderLabels({QObject::tr("model"), QObject::tr("family"), QObject::tr("layers"),
                                    QObject::tr("lazy (E_l)"), QObject::tr("low (E_l)"),
                                    QObject::tr("effective (E_l)"), QObject::tr("E_l thresholds"),
                                    QObject::tr("lazy (pruning)")});
  table->verticalHeader()->setVisible(false);
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  for (int i = 0; i < static_cast<int>(t.rows.size()); ++i) {
    const auto& r = t.rows[static_cast<size_t>(i)];
    QStringList cells = {QString::fromStdString(r.name), QString::fromStdString(r.family),
                         QString::number(r.nLayers)};
    for (const auto& cell : experiment::familyCountCells(r)) cells << QString::fromStdString(cell);
    for (int col = 0; col < cells.size(); ++col) table->setItem(i, col, new QTableWidgetItem(cells[col]));
  }
  table->resizeColumnsToContents();
  const int height = table->horizontalHeader()->sizeHint().height() + 4 +
                     table->verticalHeader()->defaultSectionSize() * static_cast<int>(t.rows.size());
  table->setMinimumHeight(std::min(360, height));
  table->setMaximumHeight(std::max(120, height + 20));  // the rows, not the box's whole height
  layout->addWidget(table);
  auto* note = new QLabel(QObject::tr("Lazy by pruning: removing the layer raises the probe loss by "
                                      "less than %1% of it. A model without a probe shows –: "
                                      "analyze it (Run → Analyze, or depthlab-cli analyze).")
                              .arg(100 * t.pruneShare));
  note->setWordWrap(true);
  layout->addWidget(note);
  auto* buttons = new QHBoxLayout;
  auto* saveCsv = new QPushButton(QObject::tr("Save CSV…"));
  auto* saveTex = new QPushButton(QObject::tr("Save LaTeX…"));
  buttons->addWidget(saveCsv);
  buttons->addWidget(saveTex);
  buttons->addStretch(1);
  layout->addLayout(buttons);
  auto save = [box](const QString& filter, const std::string& text) {
    const QString f = QFileDialog::getSaveFileName(box, QObject::tr("Save"), QString(), filter);
    if (f.isEmpty()) return;
    QFile out(f);
    if (out.open(QIODevice::WriteOnly)) out.write(QByteArray::fromStdString(text));
  };
  QObject::connect(saveCsv, &QPushButton::clicked, box,
                   [save, t] { save(QObject::tr("CSV (*.csv)"), experiment::familyTableCsv(t)); });
  QObject::connect(saveTex, &QPushButton::clicked, box,
                   [save, t] { save(QObject::tr("LaTeX (*.tex)"), experiment::familyTableLatex(t)); });
  return box;
}

}  // namespace depthlab::ui
