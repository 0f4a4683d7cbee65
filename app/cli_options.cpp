// pitlane-cli's options after the command's arguments: output files, --db, and the options only
// `run` takes (parseOutputs, cli_common.h).
#include "cli_common.h"

#include <QDir>
#include <QFileInfo>

namespace pitlane::cli {

namespace {
// Every output's folder exists and is writable, and no output is a folder: said before the run
// starts, not after it measured for an hour.
bool checkOutputFolders(const Outputs& out, std::string& err) {
    const auto& formats = report::exportFormats();
    for (std::size_t i = 0; i < out.files.size(); ++i) {
        if (out.files[i].isEmpty()) continue;
        const QFileInfo file(out.files[i]);
        const QFileInfo folder(file.absolutePath());
        const std::string what = formats[i].cliFlags.front().toStdString() + " " +
                                 out.files[i].toStdString() + ": ";
        if (file.isDir()) err = what + "is a folder; name a file";
        else if (!folder.isDir()) err = what + "the folder " + folder.filePath().toStdString() +
                                        " does not exist";
        else if (!folder.isWritable())
            err = what + "the folder " + folder.filePath().toStdString() + " is not writable";
        if (!err.empty()) return false;
    }
    return true;
}

// "30s", "2m", "1500ms", "1.5min", "45" (seconds) as ms; -1 when it is none of them (or above a
// day, or not positive).
int durationMs(const QString& text) {
    const QString t = text.trimmed().toLower();
    int split = 0;
    while (split < t.size() && (t[split].isDigit() || t[split] == QLatin1Char('.'))) ++split;
    bool ok = false;
    const double v = t.left(split).toDouble(&ok);
    const QString unit = t.mid(split).trimmed();
    double scale = -1;
    if (unit.isEmpty() || unit == QLatin1String("s") || unit == QLatin1String("sec")) scale = 1000;
    else if (unit == QLatin1String("ms")) scale = 1;
    else if (unit == QLatin1String("m") || unit == QLatin1String("min")) scale = 60000;
    else if (unit == QLatin1String("h")) scale = 3600000;
    if (!ok || scale < 0 || !(v > 0)) return -1;
    const double ms = v * scale;
    return ms > 86400000.0 ? -1 : int(ms + 0.5);
}

// The options only `run` takes (--profile, --trace, --input, --arm, --baseline, --against, --max-slowdown,
// --save-preset, --json -): 1 when args[i] was one (i moved past its value), 0 when it was one
// but wrong (err says why), -1 when it is none of them.
int parseRunOption(const QStringList& args, int& i, Outputs& out, bool allowed, std::string& err) {
    const QString a = args[i];
    const bool hasValue = i + 1 < args.size() && !args[i + 1].startsWith("--");
    const auto refuse = [&](const std::string& why) { return err = why, 0; };
    const auto onlyRun = [&](const std::string& what) { return refuse(what + " applies to `run` only"); };
    if (a == "--json" && i + 1 < args.size() && args[i + 1] == QLatin1String("-")) {
        if (!allowed) return onlyRun("--json - (to stdout)");
        out.jsonToStdout = true;
    } else if (a == "--profile") {
        if (!allowed) return refuse("--profile applies to `run` only (it profiles a run's arms)");
        out.profileIters = 10;
        bool ok = false;
        const int n = hasValue ? args[i + 1].toInt(&ok) : 0;
        if (!ok) return 1;
        if (n < 1 || n > 1000) return refuse("--profile takes 1..1000 iterations");
        out.profileIters = n;
    } else if (a == "--trace") {
        if (!allowed) return refuse("--trace applies to `run` only (it profiles a run's arms)");
        if (!hasValue) return refuse("--trace needs a folder");
        out.traceDir = args[i + 1];
    } else if (a == "--input") {
        if (!allowed) return refuse("--input applies to `run MODEL.pt` only");
        if (i + 1 >= args.size()) return refuse("--input needs an input spec, e.g. 3x224x224");
        out.input = args[i + 1];
        out.inputGiven = true;
    } else if (a == "--arm") {
        if (!allowed) return refuse("--arm applies to `run MODEL.pt` only");
        if (!hasValue)
            return refuse("--arm needs NAME:knob=value,knob=value, e.g. --arm "
                          "fast:grad=inference_mode,intra_op_threads=1");
        out.arms << args[i + 1];
    } else if (a == "--baseline") {
        if (!allowed) return onlyRun("--baseline");
        if (!hasValue) return refuse("--baseline needs a run id, latest or baseline");
        out.baseline = args[i + 1];
    } else if (a == "--against") {
        if (!allowed) return onlyRun("--against");
        if (!hasValue) return refuse("--against needs a baseline preset or a model file (.pt / .pt2)");
        out.against = args[i + 1];
    } else if (a == "--max-slowdown") {
        if (!allowed) return refuse("--max-slowdown applies to `run --baseline` and `run --against` only");
        bool ok = false;
        const double v = i + 1 < args.size() ? args[i + 1].toDouble(&ok) : 0;
        if (!ok || !(v > 0) || v > 1000)
            return refuse("--max-slowdown needs a percentage above 0 (at most 1000), e.g. --max-slowdown 5");
        out.maxSlowdownPct = v;
    } else if (a == "--max-energy-increase") {  // issue 46: the gate on energy per inference
        if (!allowed)
            return refuse("--max-energy-increase applies to `run --baseline` and `run --against` only");
        bool ok = false;
        const double v = i + 1 < args.size() ? args[i + 1].toDouble(&ok) : 0;
        if (!ok || !(v > 0) || v > 1000)
            return refuse("--max-energy-increase needs a percentage above 0 (at most 1000), e.g. "
                          "--max-energy-increase 5");
        out.maxEnergyIncreasePct = v;
    } else if (a == "--time") {
        if (!allowed) return onlyRun("--time");
        const int ms = hasValue ? durationMs(args[i + 1]) : -1;
        if (ms < 0)
            return refuse("--time needs a duration, e.g. --time 30s, --time 2m or --time 1500ms (a bare "
                          "number is seconds)");
        out.budgetMs = ms;
    } else if (a == "--iters") {
        if (!allowed) return onlyRun("--iters");
        bool ok = false;
        const int n = hasValue ? args[i + 1].toInt(&ok) : 0;
        if (!ok || n < 1 || n > 100000000)
            return refuse("--iters needs the measured iterations per arm, 1 to 100000000, e.g. --iters 200");
        out.iters = n;
    } else if (a == "--save-preset") {
        if (!allowed) return refuse("--save-preset applies to `run MODEL.pt` only");
        if (!hasValue) return refuse("--save-preset needs a file name");
        out.savePreset = args[i + 1];
    } else {
        return -1;
    }
    ++i;  // past the value (every run option but a bare --profile has one)
    return 1;
}

// After every option: the --advice-preset file's folder exists, the --trace folder is made.
bool checkAdviceAndTrace(Outputs& out, std::string& err) {
    if (!out.advicePreset.isEmpty()) {
        const QFileInfo file(out.advicePreset);
        if (file.isDir()) return err = "--advice-preset " + out.advicePreset.toStdString() + ": is a folder; name a file", false;
        if (!QFileInfo(file.absolutePath()).isDir())
            return err = "--advice-preset " + out.advicePreset.toStdString() + ": the folder " +
                         file.absolutePath().toStdString() + " does not exist", false;
    }
    if (!out.traceDir.isEmpty()) {
        if (out.profileIters == 0) out.profileIters = 10;
        const QFileInfo dir(out.traceDir);
        const std::string what = "--trace " + out.traceDir.toStdString() + ": ";
        if (dir.exists() && !dir.isDir()) return err = what + "is not a folder", false;
        if (!dir.exists() && !QDir().mkpath(out.traceDir))
            return err = what + "cannot create the folder", false;
        if (!QFileInfo(out.traceDir).isWritable())
            return err = what + "the folder is not writable", false;
    }
    return true;
}

}  // namespace

bool parseOutputs(const QStringList& args, int from, Outputs& out, bool& quiet, std::string& err,
                  bool allowProfile, bool allowAdvise) {
    for (int i = from; i < args.size(); ++i) {
        const QString a = args[i];
        auto value = [&](QString& dst) {
            if (i + 1 >= args.size() || args[i + 1].startsWith("--")) {
                err = a.toStdString() + " needs a file name";
                return false;
            }
            dst = args[++i];
            return true;
        };
        if (const int run = parseRunOption(args, i, out, allowProfile, err); run >= 0) {
            if (run == 0) return false;
        } else if (const auto* format = report::exportFormatForFlag(a)) {
            if (!value(out.files[std::size_t(format - report::exportFormats().data())])) return false;
        } else if (a == "--quiet" || a == "-q") {
            quiet = true;
        } else if (a == "--advise" || a == "--advice-preset") {
            if (!allowAdvise)
                return err = a.toStdString() + " applies to `run` and `report` only (it reads a run's measurements)", false;
            out.advise = true;
            if (a == "--advice-preset" && !value(out.advicePreset)) return false;
        } else if (a == "--db") {
            if (!value(out.db)) return false;
        } else {
            err = "unknown option " + a.toStdString();
            return false;
        }
    }
    if (out.budgetMs > 0 && out.iters > 0)
        return err = "--time and --iters are two plans: --time plans the iterations and processes to "
                     "fit a duration, --iters measures exactly N per arm; give one of them", false;
    if (!out.baseline.isEmpty() && !out.against.isEmpty())
        return err = "--baseline and --against are two gates: --baseline compares with a stored run, "
                     "--against measures the baseline in this run; give one of them", false;
    return checkAdviceAndTrace(out, err) && checkOutputFolders(out, err);
}

}  // namespace pitlane::cli
