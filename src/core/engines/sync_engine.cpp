#include "core/engines/sync_engine.hpp"

#include "core/engines/engine_run.hpp"

namespace trnsim::core {

void SyncEngine::run() {
  run_loop(*this);
}

}  // namespace trnsim::core
