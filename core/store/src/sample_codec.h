#pragma once
// Latencies of one stored chunk (schema v10, table sample_chunks): zigzag varints of the first
// latency and of each difference to the one before. Consecutive latencies of a block differ by
// little, so a sample takes 1-3 bytes instead of a 48-byte row of the v1-v9 samples table.
#include <QByteArray>
#include <QSqlDatabase>
#include <QStringList>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pitlane::store::detail {

QByteArray encodeLatencies(const std::int64_t* ns, std::size_t count);
// Appends the `count` latencies of `blob` to `out`; false (out unchanged) when the blob does not
// hold exactly `count` of them.
bool decodeLatencies(const QByteArray& blob, std::size_t count, std::vector<std::int64_t>& out);
// check-history: the chunks whose BLOB does not hold their n latencies (a problem each, at most
// 20); adds the measured samples of the sound ones to *samples.
QStringList damagedChunks(const QSqlDatabase& db, qint64* samples);

}  // namespace pitlane::store::detail
