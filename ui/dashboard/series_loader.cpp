// See series_loader.h.
#include "dashboard/series_loader.h"


#include <algorithm>

namespace depthlab::ui {

bool groupTouched(const GroupData& base, const std::vector<store::RunInfo>& runs,
                  const std::vector<int64_t>& changed) {
  for (const auto& info : runs) {
    if (QString::fromStdString(info.groupName) != base.group()) continue;
    const auto& held = base.runs();
    const bool isNew = std::none_of(held.begin(), held.end(), [&](const RunData& r) { return r.info.id == info.id; });
    if (isNew || changed.empty() || std::find(changed.begin(), changed.end(), info.id) != changed.end()) return true;
  }
  return false;
}

GroupSnapshot loadGroup(store::RunStore& store, const QString& group, const GroupSnapshot& base,
                        const std::vector<int64_t>& changed) {
  if (base && !groupTouched(*base, store.listRuns(), changed)) return base;
  // A copy to reload: the snapshot the views hold stays as it is until they take the new one.
  auto next = base ? std::make_shared<GroupData>(*base) : std::make_shared<GroupData>(group);
  if (!next->reload(store, changed) && base) return base;
  return next;
}

void SeriesLoader::load(const QString& group, GroupSnapshot base, std::vector<int64_t> changed,
                        QObject* receiver, Done done, Failed failed) {
  read<GroupSnapshot>(
      [group, base = std::move(base), changed = std::move(changed)](store::RunStore& store) {
        return loadGroup(store, group, base, changed);
      },
      receiver, std::move(done), std::move(failed));
}

void SeriesLoader::post(std::function<void(store::RunStore&)> work, QObject* relay, QPointer<QObject> to,
                        Failed failed) {
  // Answers go through the relay (the poller, which outlives this thread) and are dropped
  // there, on the GUI thread, when the receiver has gone meanwhile.
  QMetaObject::invokeMethod(this, [this, work = std::move(work), relay, to, failed = std::move(failed)] {
    try {
      if (!m_store) m_store.emplace(store::RunStore::open(m_path, store::RunStore::Mode::ReadOnly));
      work(*m_store);
    } catch (const std::exception& e) {
      const QString message = QString::fromStdString(e.what());
      QMetaObject::invokeMethod(relay, [to, failed, message] { if (to) failed(message); }, Qt::QueuedConnection);
    }
  }, Qt::QueuedConnection);
}

}  // namespace depthlab::ui
