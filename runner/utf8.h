// Forwarding header: utf8.h moved to runner/base/ (the base library). It stays only
// for the files that still name the old path and are not ours to edit today
// (runner/gate/, test/gate/, locks/file_store.cpp); scripts/check-layers lists them as
// exceptions. Include "runner/base/utf8.h" in new code.
#pragma once

#include "runner/base/utf8.h"  // IWYU pragma: export
