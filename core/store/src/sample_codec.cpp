#include "sample_codec.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

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

// Schema v10: every sample chunk's BLOB holds exactly its n latencies (sample_codec.h).
QStringList damagedChunks(const QSqlDatabase& db, qint64* samples) {
    QSqlQuery q(db);
    q.setForwardOnly(true);
    if (!q.exec(QStringLiteral("SELECT c.rowid, e.id, a.name, c.block, c.n, c.latency_ns FROM "
                               "sample_chunks c JOIN arms a ON c.arm = a.id JOIN experiments e "
                               "ON a.experiment = e.id")))
        return {QStringLiteral("cannot read the sample chunks: %1").arg(q.lastError().text())};
    QStringList problems;
    std::vector<std::int64_t> ns;
    while (q.next()) {
        const qint64 n = q.value(4).toLongLong();
        ns.clear();
        if (n >= 0 && detail::decodeLatencies(q.value(5).toByteArray(), std::size_t(n), ns)) {
            if (q.value(3).toInt() >= 0) *samples += n;
            continue;
        }
        if (problems.size() < 20)
            problems << QStringLiteral("run %1 arm %2: sample chunk %3 does not hold the %4 "
                                       "latencies it says")
                            .arg(q.value(1).toLongLong())
                            .arg(q.value(2).toString())
                            .arg(q.value(0).toLongLong())
                            .arg(n);
    }
    return problems;
}

}  // namespace pitlane::store::detail
