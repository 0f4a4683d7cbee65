#pragma once
// Qt's raster engine splits every fill of 96 or more spans (a tall widget's background under a
// clipped repaint, a Fusion scroll bar or group box frame, a plot's 1.5-2 px line) into segments
// for a thread pool and blocks until they are done. On 2 cores whose other core a worker holds,
// the window's UI thread ping-ponged with the pool every few microseconds and waited for pool
// threads the workers delayed (issue 44: 500-700 hand-offs while 400 k samples streamed, the
// longest waits 2-9 ms). The window keeps its fills on the UI thread, as Qt 6.6+ does with
// QT_NO_GUI_THREADPOOL:
// - Qt 6.4-6.5 hand them to QThreadPool::globalInstance(), which this file overrides in the
//   executable that links it: null on the UI thread (Qt's fill code then fills on the caller,
//   as it does when the application is closing down), Qt's own pool on every other thread;
// - Qt 6.6+ read QT_NO_GUI_THREADPOOL, which keepFillsOnTheUiThread() sets unless it is set.
namespace pitlane::app {

// Before the QApplication. True where fills stay on the calling UI thread.
bool keepFillsOnTheUiThread();

}  // namespace pitlane::app
