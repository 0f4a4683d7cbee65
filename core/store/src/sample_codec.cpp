#include "sample_codec.h"

#include <QHash>
#include <QSqlError>
#include <QSqlRecord>
#include <QSqlQuery>
#include <QVariant>

#include <zlib.h>

#include <algorithm>

namespace pitlane::store::detail {

namespace {
inline std::uint64_t zigzag(std::int64_t v) {
    return (std::uint64_t(v) << 1) ^ std::uint64_t(v >> 63);
}
inline std::int64_t unzigzag(std::uint64_t u) { return std::int64_t(u >> 1) ^ -std::int64_t(u & 1); }
}  // namespace

QByteArray encodeLatencies(const std::int64_t* ns, std::size_t count) {
    QByteArray out;
    out.reserve(qsizetype(count * 2 + 16));
    std::int64_t prev = 0;
    char buf[10];
    for (std::size_t i = 0; i < count; ++i) {
        // The difference in unsigned arithmetic: no overflow for any pair of int64 values.
        std::uint64_t u = zigzag(std::int64_t(std::uint64_t(ns[i]) - std::uint64_t(prev)));
        prev = ns[i];
        int n = 0;
        while (u >= 0x80) {
            buf[n++] = char((u & 0x7f) | 0x80);
            u >>= 7;
        }
        buf[n++] = char(u);
        out.append(buf, n);
    }
    return out;
}

bool decodeLatencies(const QByteArray& blob, std::size_t count, std::vector<std::int64_t>& out) {
    const auto* p = reinterpret_cast<const unsigned char*>(blob.constData());
    const auto* end = p + blob.size();
    const std::size_t before = out.size();
    out.reserve(before + count);
    std::int64_t prev = 0;
    for (std::size_t i = 0; i < count; ++i) {
        std::uint64_t u = 0;
        int shift = 0;
        for (;;) {
            if (p == end || shift > 63) {
                out.resize(before);
                return false;
            }
            const unsigned char b = *p++;
            u |= std::uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) break;
            shift += 7;
        }
        prev = std::int64_t(std::uint64_t(prev) + std::uint64_t(unzigzag(u)));
        out.push_back(prev);
    }
    if (p != end) {
        out.resize(before);
        return false;
    }
    return true;
}

quint32 chunkChecksum(const ChunkRow& c) {
    // The row's fields as little-endian 64-bit integers, then the BLOB: a field changed by hand
    // (n, the block) fails the check as a changed byte of the BLOB does.
    unsigned char head[7 * 8];
    const std::int64_t fields[7] = {c.arm, c.block, c.firstIter, c.n, c.batchSize, c.worker, c.process};
    for (int f = 0; f < 7; ++f)
        for (int b = 0; b < 8; ++b) head[f * 8 + b] = static_cast<unsigned char>(std::uint64_t(fields[f]) >> (8 * b));
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, head, sizeof head);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(c.blob.constData()), uInt(c.blob.size()));
    return quint32(crc);
}

namespace {
QString hex32(quint32 v) {
    return QStringLiteral("0x%1").arg(v, 8, 16, QLatin1Char('0'));
}
}  // namespace

ChunkState chunkState(const ChunkRow& c, std::vector<std::int64_t>& out, QString* why) {
    QString checksum;  // "" when the checksum holds or there is none
    if (!c.crc.isNull()) {
        const quint32 stored = quint32(c.crc.toLongLong());
        const quint32 computed = chunkChecksum(c);
        if (stored != computed)
            checksum = QStringLiteral("fails its checksum (stored CRC-32 %1, computed %2)")
                           .arg(hex32(stored), hex32(computed));
    }
    const std::size_t before = out.size();
    if (c.n < 0 || !decodeLatencies(c.blob, std::size_t(c.n), out)) {
        *why = QStringLiteral("does not hold the %1 latencies it says").arg(c.n);
        if (!checksum.isEmpty()) *why += QStringLiteral(" and ") + checksum;
        return ChunkState::Damaged;
    }
    if (!checksum.isEmpty()) {  // decodes, to the wrong latencies
        out.resize(before);
        *why = checksum;
        return ChunkState::Damaged;
    }
    return c.crc.isNull() ? ChunkState::Unchecked : ChunkState::Sound;
}

QString chunkName(int ordinal, int total, int block, qint64 firstIter, qint64 n) {
    const QString where = block < 0 ? QStringLiteral("warmup")
                                    : QStringLiteral("block %1").arg(block);
    return QStringLiteral("chunk %1 of %2 (%3, iterations %4-%5)")
        .arg(ordinal)
        .arg(total)
        .arg(where)
        .arg(firstIter)
        .arg(firstIter + std::max<qint64>(n, 1) - 1);
}

// Schema v10: every sample chunk's BLOB holds exactly its n latencies (sample_codec.h); v12: and
// matches its CRC-32.
QStringList damagedChunks(const QSqlDatabase& db, qint64* samples, qint64* unchecked) {
    QSqlQuery q(db);
    q.setForwardOnly(true);
    const bool hasCrc = db.record(QStringLiteral("sample_chunks")).contains(QStringLiteral("crc32"));
    if (!q.exec(QStringLiteral("SELECT e.id, a.name, c.arm, c.block, c.first_iter, c.n, "
                               "c.batch_size, c.worker, c.process, c.latency_ns, %1 FROM "
                               "sample_chunks c JOIN arms a ON c.arm = a.id JOIN experiments e "
                               "ON a.experiment = e.id ORDER BY c.arm, c.rowid")
                    .arg(hasCrc ? QStringLiteral("c.crc32") : QStringLiteral("NULL"))))
        return {QStringLiteral("cannot read the sample chunks: %1").arg(q.lastError().text())};
    // Each arm's chunk count, for "chunk 4 of 7" (the chunks are read in arm, rowid order).
    QHash<qint64, qint64> perArm;
    {
        QSqlQuery counts(db);
        if (counts.exec(QStringLiteral("SELECT arm, count(*) FROM sample_chunks GROUP BY arm")))
            while (counts.next()) perArm.insert(counts.value(0).toLongLong(), counts.value(1).toLongLong());
    }
    QStringList problems;
    qint64 damaged = 0, arm = -1;
    int ordinal = 0;
    std::vector<std::int64_t> ns;
    while (q.next()) {
        ChunkRow c;
        c.arm = q.value(2).toLongLong();
        c.block = q.value(3).toInt();
        c.firstIter = q.value(4).toLongLong();
        c.n = q.value(5).toLongLong();
        c.batchSize = q.value(6).toInt();
        c.worker = q.value(7).toInt();
        c.process = q.value(8).toInt();
        c.blob = q.value(9).toByteArray();
        c.crc = q.value(10);
        ordinal = c.arm == arm ? ordinal + 1 : 1;
        arm = c.arm;
        ns.clear();
        QString why;
        const ChunkState state = chunkState(c, ns, &why);
        if (state != ChunkState::Damaged) {
            if (c.block >= 0) *samples += c.n;
            if (state == ChunkState::Unchecked) ++*unchecked;
            continue;
        }
        if (++damaged <= 20)
            problems << QStringLiteral("run %1 arm %2: sample %3 %4")
                            .arg(q.value(0).toLongLong())
                            .arg(q.value(1).toString())
                            .arg(chunkName(ordinal, int(perArm.value(c.arm)), c.block,
                                           c.firstIter, c.n))
                            .arg(why);
    }
    if (damaged > 20) problems << QStringLiteral("%1 more damaged sample chunks").arg(damaged - 20);
    return problems;
}

}  // namespace pitlane::store::detail
