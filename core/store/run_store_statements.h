// RunStore's cached prepared statements for the hot write path. Private to core/store.
#pragma once

#include "store/run_store.h"

namespace depthlab::store {

struct RunStore::Statements {
  explicit Statements(const SqliteDb& db)
      : bump(db, "UPDATE store_meta SET value = value + 1 WHERE key = 'change_counter' "
                 "RETURNING value"),
        touch(db, "UPDATE runs SET version = ?2 WHERE id = ?1"),
        insScalar(db, "INSERT OR REPLACE INTO scalars(run_id, key, step, value) VALUES (?1,?2,?3,?4)"),
        insLayer(db, "INSERT OR REPLACE INTO layer_series(run_id, metric, step, n_layers, data) "
                     "VALUES (?1,?2,?3,?4,?5)"),
        insMatrix(db, "INSERT OR REPLACE INTO matrices(run_id, kind, step, n_rows, n_cols, data) "
                      "VALUES (?1,?2,?3,?4,?5,?6)"),
        insEvent(db, "INSERT INTO events(run_id, step, time, level, message) "
                     "VALUES (?1,?2,?3,?4,?5)") {}
  SqliteStatement bump, touch, insScalar, insLayer, insMatrix, insEvent;
};

}  // namespace depthlab::store
