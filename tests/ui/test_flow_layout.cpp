// FlowLayout (ui/flow_layout.h): one line when there is room, a new line where the next widget
// would not fit, hidden widgets skipped, and a minimum width of the widest widget instead of
// all of them.
#include <gtest/gtest.h>

#include <QApplication>
#include <QPushButton>
#include <QVBoxLayout>

#include "flow_layout.h"

using namespace depthlab;

namespace {

struct Row {
  QWidget host;
  QWidget* row = new QWidget;
  ui::FlowLayout* flow = new ui::FlowLayout(row, 6);
  std::vector<QPushButton*> buttons;
  Row() {
    (new QVBoxLayout(&host))->addWidget(row);
    flow->setContentsMargins(0, 0, 0, 0);
    for (int i = 0; i < 6; ++i) {
      buttons.push_back(new QPushButton(QStringLiteral("button %1").arg(i)));
      buttons.back()->setFixedSize(100, 30);
      flow->addWidget(buttons.back());
    }
  }
  void showAt(int width) {
    host.resize(width, 300);
    host.show();
    QApplication::processEvents();
    row->setGeometry(0, 0, width, flow->heightForWidth(width));
    flow->setGeometry(row->rect());
  }
};

}  // namespace

TEST(FlowLayout, OneLineWhereThereIsRoomAndNewLinesWhereNot) {
  Row r;
  r.showAt(700);  // 6 x 100 + 5 x 6 = 630: one line
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(r.buttons[i]->geometry().topLeft(), QPoint(i * 106, 0)) << i;
  }
  EXPECT_EQ(r.flow->heightForWidth(700), 30);
  r.showAt(330);  // three a line: 3 x 100 + 2 x 6 = 312
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(r.buttons[i]->geometry().topLeft(), QPoint((i % 3) * 106, (i / 3) * 36)) << i;
  }
  EXPECT_EQ(r.flow->heightForWidth(330), 66);
  EXPECT_EQ(r.flow->heightForWidth(50), 6 * 30 + 5 * 6);  // one a line
}

TEST(FlowLayout, HiddenWidgetsTakeNoRoom) {
  Row r;
  r.buttons[1]->hide();
  r.showAt(700);
  EXPECT_EQ(r.buttons[2]->geometry().topLeft(), QPoint(106, 0));
  EXPECT_EQ(r.flow->sizeHint().width(), 5 * 100 + 4 * 6);
}

TEST(FlowLayout, AsksForTheWidestWidgetNotForAllOfThem) {
  Row r;
  EXPECT_EQ(r.flow->minimumSize().width(), 100);
  EXPECT_EQ(r.flow->sizeHint().width(), 630);  // all on one line when there is room
  EXPECT_TRUE(r.flow->hasHeightForWidth());
  EXPECT_LT(r.host.minimumSizeHint().width(), 200);
}
