// Forwarding header: real_clock.h moved to runner/base/ (the base library). It stays only
// for the files that still name the old path and are not ours to edit today
// (runner/gate/, test/gate/, locks/file_store.cpp); scripts/check-layers lists them as
// exceptions. Include "runner/base/real_clock.h" in new code.
#pragma once

#include "runner/base/real_clock.h"  // IWYU pragma: export
