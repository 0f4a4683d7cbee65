"""The exported-program and AOTInductor-package checks of tools/gpu_check.py (issue 40, 46):
conv_probe exported on cuda run through NativeRT with its own example inputs, and the package
compiled for cuda from the same program, each measured in a sandboxed worker on cuda:0 beside
the TorchScript baseline. Standard library only; the models come from tools/gpu_export_programs.py."""
from gpu_check_driver import ITERS, need

CUDA = {"device": "cuda:0"}
# scenario -> (model file in the models folder, input list, knobs)
PROGRAM_SCENARIOS = {
    "exported_cuda": ("conv_probe.cuda.exported.pt2",
                      [{"shape": [3, 64, 64], "dtype": "float32", "example": True}], dict(CUDA)),
    "aoti_package_cuda": ("conv_probe.cuda.pt2",
                          [{"shape": [3, 64, 64], "dtype": "float32"}], dict(CUDA)),
}

PROGRAM_CHECKS = [
    ("exported_program_cuda", "a torch.export archive exported on cuda runs through NativeRT on cuda:0 "
                              "with its own example inputs (applied.model_format exported)"),
    ("aoti_package_cuda", "an AOTInductor package compiled for cuda runs on cuda:0 (applied.model_format aoti, "
                          "AOTI_DEVICE_KEY cuda)"),
]


def _median_ms(values):
    v = sorted(values)
    return (v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2) / 1e6 if v else float("nan")


def _baseline(scen):
    base = scen.get("baseline")
    return _median_ms(base.samples()[0]) if base else float("nan")


def c_exported(scen):
    s = scen.get("exported_cuda")
    need(s is not None, "scenario exported_cuda missing")
    a = s.applied()
    need(a.get("model_format") == "exported", "applied.model_format is %r" % a.get("model_format"))
    need(a.get("device") == "cuda:0", "applied.device is %r" % a.get("device"))
    need(a.get("grad") == "inference_mode", "applied.grad is %r" % a.get("grad"))
    loaded = s.first("loaded") or {}
    need(loaded.get("example_inputs"), "loaded.example_inputs is missing: the example values were not fed")
    s.ran()
    return "NativeRT on cuda:0, example inputs, median %.3f ms over %d iterations (TorchScript baseline %.3f ms)" % (
        _median_ms(s.samples()[0]), ITERS, _baseline(scen))


def c_aoti(scen):
    s = scen.get("aoti_package_cuda")
    need(s is not None, "scenario aoti_package_cuda missing")
    a = s.applied()
    need(a.get("model_format") == "aoti", "applied.model_format is %r" % a.get("model_format"))
    need(a.get("device") == "cuda:0", "applied.device is %r" % a.get("device"))
    key = ((a.get("package") or {}).get("metadata") or {}).get("AOTI_DEVICE_KEY", "")
    need(key.startswith("cuda"), "package metadata AOTI_DEVICE_KEY is %r" % key)
    s.ran()
    return "package for %s on cuda:0, median %.3f ms over %d iterations (TorchScript baseline %.3f ms)" % (
        key, _median_ms(s.samples()[0]), ITERS, _baseline(scen))


PROGRAM_CHECK_FUNCS = {"exported_program_cuda": c_exported, "aoti_package_cuda": c_aoti}
