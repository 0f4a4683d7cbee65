#pragma once
// The `allocator` knob, orchestrator side: which library a worker must be started with
// (LD_PRELOAD) and which environment goes with it. The worker itself cannot switch its heap
// allocator after it started; it only reads back what is mapped (engine/system.h,
// mappedAllocator) and fails its configure with `bad_knob` when that is not what was asked.
// QtCore only.
#include "pitlane/spec/knob_choices.h"

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <string>

namespace pitlane::session {

struct AllocatorLaunch {
    QString preload;  // library path for LD_PRELOAD; empty for "system"
    QStringList env;  // extra "NAME=value" entries (e.g. MALLOC_CONF for jemalloc)
    QString error;    // non-empty: the knob cannot be honoured here; says why and what to install
};

// What starting a worker with `allocator` ("system", "jemalloc", "tcmalloc") takes. jemalloc is
// libjemalloc.so.2 (Debian package libjemalloc2), tcmalloc libtcmalloc_minimal.so.4 (Debian
// package libtcmalloc-minimal4), looked up in /usr/lib/<multiarch>, /lib/<multiarch>, /usr/lib,
// /usr/local/lib/<multiarch> and /usr/local/lib; $PITLANE_JEMALLOC / $PITLANE_TCMALLOC (a path)
// replace that search.
AllocatorLaunch allocatorLaunch(spec::Allocator allocator);
// The same by the knob's name (the window's choices); an unknown name gives an error.
AllocatorLaunch allocatorLaunch(const std::string& allocator);

// `env` with `launch` applied: the library is put in front of an existing LD_PRELOAD (so its
// malloc wins), and each of launch.env is set unless `env` already has that variable (a user's
// own MALLOC_CONF is kept). A launch with an error, or for "system", returns `env` unchanged.
QProcessEnvironment withAllocator(QProcessEnvironment env, const AllocatorLaunch& launch);

}  // namespace pitlane::session
