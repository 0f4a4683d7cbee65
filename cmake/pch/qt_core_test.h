// Precompiled header of the integration tests (their harness and every test linking it): qt_core.h
// and GoogleTest (cmake/PitlanePch.cmake, issue 45).
#pragma once
#include "qt_core.h"

#include <gtest/gtest.h>
