// The compile step, the runner's part (issue 40): in start(), after the model files are checked
// and before any worker starts, every arm whose exported program is to be compiled (knob compile
// "aoti") gets its AOTInductor package (session/compile_step.h: one compiler at a time, cached;
// arms with the same program, options and device share one compile). next() waits for it; Stop
// kills the compiler; a compile that fails fails its arms alone (compile_failed). The arm's
// workers then load the package, with the program's archive for its example inputs. The compiler
// runs confined by the arm's worker binary (pitlane-worker --sandbox-exec, compile_step.h).
#include "pitlane/session/experiment_runner.h"

#include "pitlane/session/compile_step.h"
#include "pitlane/spec/model_file.h"

#include <QCoreApplication>
#include <QFileInfo>

namespace pitlane::session {

namespace R = results;

bool ExperimentRunner::compileArms() {
    const auto& preset = result_.preset;
    compiler_.reset();  // the previous run's
    compiling_ = false;
    compiledPackage_.assign(preset.arms.size(), QString());
    std::vector<std::string> sha(preset.arms.size());
    std::vector<bool> pending(preset.arms.size(), false);
    for (std::size_t i = 0; i < preset.arms.size(); ++i) {
        const auto& a = result_.arms[i];
        if (a.status != R::kPending || preset.arms[i].knobs.compile != spec::Compile::Aoti) continue;
        if (a.model_format != spec::kFormatExported) {
            failArm(int(i), R::kFailed, kCompileFailed,
                    "knob compile \"aoti\": " + a.model + " is not an exported program (" + a.model_format + ")");
            continue;
        }
        if (!preset.arms[i].host.empty()) {
            failArm(int(i), R::kFailed, kCompileFailed,
                    "knob compile \"aoti\" on host " + preset.arms[i].host +
                        ": Pitlane compiles on this machine only; compile the package there and measure it");
            continue;
        }
        sha[i] = a.model_sha256;
        pending[i] = true;
    }
    std::vector<CompileJob> jobs = compileJobs(preset, sha, pending);
    if (jobs.empty()) return false;
    CompileStep::Options compileOptions = CompileStep::fromEnvironment(QCoreApplication::applicationDirPath());
    compileOptions.launcher = options_.workerPath;  // confines the compiler (--sandbox-exec)
    compiler_ = std::make_unique<CompileStep>(std::move(compileOptions));
    connect(compiler_.get(), &CompileStep::jobStarted, this, [this](int job) {
        for (int arm : compiler_->jobs()[std::size_t(job)].arms) setPhase(arm, ArmPhase::Compiling);
        const auto& j = compiler_->jobs()[std::size_t(job)];
        emit logMessage(j.arms.front(), QStringLiteral("info"),
                        QStringLiteral("compiling %1 with AOTInductor (%2)")
                            .arg(QFileInfo(j.program).fileName(), canonicalOptionsJson(j.options)));
    });
    connect(compiler_.get(), &CompileStep::jobNote, this, [this](int job, const QString& level, const QString& text) {
        for (int arm : compiler_->jobs()[std::size_t(job)].arms)
            emit logMessage(arm, level, QString::fromStdString(result_.arms[std::size_t(arm)].name + ": ") + text);
    });
    connect(compiler_.get(), &CompileStep::jobDone, this, [this](int job, const R::CompileInfo& info) {
        for (int arm : compiler_->jobs()[std::size_t(job)].arms) {
            result_.arms[std::size_t(arm)].compile = info;
            compiledPackage_[std::size_t(arm)] = QString::fromStdString(info.package);
            setPhase(arm, ArmPhase::Pending);
            emit logMessage(arm, QStringLiteral("info"),
                            QString::fromStdString(result_.arms[std::size_t(arm)].name + ": " + R::compileLine(info)));
        }
    });
    connect(compiler_.get(), &CompileStep::jobFailed, this, [this](int job, const QString& reason) {
        for (int arm : compiler_->jobs()[std::size_t(job)].arms)
            failArm(arm, R::kFailed, kCompileFailed, reason.toStdString());
    });
    connect(compiler_.get(), &CompileStep::finished, this, [this] {
        compiling_ = false;
        if (stopping_) return finishIfDone();
        next();
    });
    compiling_ = true;
    compiler_->start(std::move(jobs));  // its signals come later, from the event loop
    return true;
}

// Stop while compiling: the compiler is killed, its arms are cancelled by stop().
void ExperimentRunner::cancelCompile() {
    if (compiler_) compiler_->cancel();
    compiling_ = false;
}

QString ExperimentRunner::phaseLabel(int arm) const {
    const ArmPhase p = phase(arm);
    if (p != ArmPhase::Compiling || !compiler_) return phaseName(p);
    return QStringLiteral("compiling %1 s").arg(int(compiler_->elapsedS()));
}

double ExperimentRunner::compileElapsedS() const { return compiler_ ? compiler_->elapsedS() : 0.0; }

// The configure command of a compiled arm: the package, with compile and inductor at their
// defaults (a package takes neither), and the program's archive for its example inputs.
void ExperimentRunner::configureCompiled(int arm, nlohmann::json& armJson) const {
    if (std::size_t(arm) >= compiledPackage_.size() || compiledPackage_[std::size_t(arm)].isEmpty()) return;
    spec::Knobs knobs = result_.preset.arms[std::size_t(arm)].knobs;
    knobs.compile = spec::Compile::None;
    knobs.inductor = spec::InductorOptions{};
    armJson["knobs"] = spec::knobsToJson(knobs);
    armJson["example_inputs"] = armJson["model_path"];
    armJson["model_path"] = compiledPackage_[std::size_t(arm)].toStdString();
}

// What a local worker of the arm reads: its model, and for a compiled arm the package too.
QStringList ExperimentRunner::readableFor(int arm) const {
    const auto& spec = result_.preset.arms[std::size_t(arm)];
    QStringList paths{QString::fromStdString(spec.model_path.empty() ? result_.preset.model_path : spec.model_path)};
    if (std::size_t(arm) < compiledPackage_.size() && !compiledPackage_[std::size_t(arm)].isEmpty())
        paths << compiledPackage_[std::size_t(arm)];
    return paths;
}

}  // namespace pitlane::session
