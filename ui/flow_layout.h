// FlowLayout: lays its widgets out left to right and starts a new line where the next one
// would not fit, so a row of many buttons asks for the width of its widest button, not of all
// of them (the runs browser's action buttons). Items keep their size hints; no stretch.
#pragma once

#include <QLayout>
#include <QList>

namespace depthlab::ui {

class FlowLayout : public QLayout {
 public:
  explicit FlowLayout(QWidget* parent = nullptr, int spacing = -1);
  ~FlowLayout() override;

  void addItem(QLayoutItem* item) override;
  int count() const override;
  QLayoutItem* itemAt(int index) const override;
  QLayoutItem* takeAt(int index) override;
  Qt::Orientations expandingDirections() const override;
  bool hasHeightForWidth() const override;
  int heightForWidth(int width) const override;
  QSize minimumSize() const override;
  QSize sizeHint() const override;
  void setGeometry(const QRect& rect) override;

 private:
  /// Places the items in `rect` (only measures when `place` is false); returns the height used.
  int arrange(const QRect& rect, bool place) const;
  int gap() const;

  QList<QLayoutItem*> m_items;
  int m_spacing;
};

}  // namespace depthlab::ui
