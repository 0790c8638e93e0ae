// The set-up panel's messages in the form's words: a config key ("model.nHeads") becomes the
// label its editor has in the form ("Heads"), and a number typed into a box outside its range
// is said while it is typed (a spin box otherwise holds it back without a word and puts the old
// value back when the focus leaves).
#pragma once

#include <QString>

class QSpinBox;
class QWidget;

namespace depthlab::ui {

/// The form label of the editor named `key` (its object name) inside `panel`; "" when none.
QString fieldLabel(const QWidget* panel, const QString& key);
/// `message` with every editor's key inside `panel` replaced by its form label.
QString withFieldLabels(const QString& message, const QWidget* panel);
/// "Width: 6 is below the smallest, 8" while the box's text is a number outside its range;
/// "" otherwise. `label`: the box's form label.
QString typedOutOfRange(const QSpinBox* box, const QString& label);

}  // namespace depthlab::ui
