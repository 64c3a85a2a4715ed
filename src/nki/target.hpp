// The target description the NKI front end traces for (the tracer's --target JSON): the
// architecture constants NKI exposes (nl.tile_size and allocation limits), taken from the
// configuration through kernel::Target, and the config's `compiler` section. Leaves out every
// timing number: tracing does not depend on speeds.
#pragma once

#include <nlohmann/json.hpp>

#include "config/params.hpp"

namespace trnsim::nki {

/// {"name", "nc_version", "pmax", ..., "compiler": {...}}: every key the tracer reads, in a fixed
/// order (the JSON is part of what decides the traced kernel, so it is deterministic).
nlohmann::ordered_json target_json(const config::Params& params);

}  // namespace trnsim::nki
