// Forwarding header: yaml_bounded.h moved to runner/base/ (the base library). It stays only
// for the files that still name the old path and are not ours to edit today
// (runner/gate/, test/gate/, locks/file_store.cpp); scripts/check-layers lists them as
// exceptions. Include "runner/base/yaml_bounded.h" in new code.
#pragma once

#include "runner/base/yaml_bounded.h"  // IWYU pragma: export
