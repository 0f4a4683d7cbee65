#pragma once
// Latencies of one stored chunk (schema v10, table sample_chunks): zigzag varints of the first
// latency and of each difference to the one before. Consecutive latencies of a block differ by
// little, so a sample takes 1-3 bytes instead of a 48-byte row of the v1-v9 samples table.
// Schema v12: each chunk's CRC-32 (zlib's) over its arm, block, first iteration, n, batch size,
// worker, process and BLOB, written with it and verified on every read (chunkState): a BLOB
// changed in place that still decodes to n latencies (wrong figures, silently) is found.
// Chunks written before v12 hold NULL: read as before, counted as unchecked.
#include <QByteArray>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pitlane::store::detail {

QByteArray encodeLatencies(const std::int64_t* ns, std::size_t count);
// Appends the `count` latencies of `blob` to `out`; false (out unchanged) when the blob does not
// hold exactly `count` of them.
bool decodeLatencies(const QByteArray& blob, std::size_t count, std::vector<std::int64_t>& out);

// The row of a sample chunk, as stored.
struct ChunkRow {
    qint64 arm = 0;
    int block = 0;
    qint64 firstIter = 0, n = 0;
    int batchSize = 1, worker = 0, process = 0;
    QByteArray blob;
    QVariant crc;  // NULL: written before schema v12 (unchecked)
};
quint32 chunkChecksum(const ChunkRow& c);

enum class ChunkState { Sound, Unchecked, Damaged };
// Decodes the chunk into `out` (appended) when it is sound or unchecked and decodes; else
// `why` says what is wrong ("fails its checksum (stored 0x..., computed 0x...)", "does not hold
// the 500 latencies it says") and `out` is unchanged.
ChunkState chunkState(const ChunkRow& c, std::vector<std::int64_t>& out, QString* why);
// "chunk 4 of 7 (block 3, iterations 1500-1999)": a chunk named for the user.
QString chunkName(int ordinal, int total, int block, qint64 firstIter, qint64 n);

// check-history: the chunks that fail their checksum or whose BLOB does not hold their n
// latencies (a problem each, at most 20); adds the measured samples of the sound ones to
// *samples and counts the chunks stored without a checksum in *unchecked.
QStringList damagedChunks(const QSqlDatabase& db, qint64* samples, qint64* unchecked);

}  // namespace pitlane::store::detail
