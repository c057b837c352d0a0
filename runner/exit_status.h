// Forwarding header: exit_status.h moved to runner/base/ (the base library). It stays only
// for the files that still name the old path and are not ours to edit today
// (runner/gate/, test/gate/, locks/file_store.cpp); scripts/check-layers lists them as
// exceptions. Include "runner/base/exit_status.h" in new code.
#pragma once

#include "runner/base/exit_status.h"  // IWYU pragma: export
