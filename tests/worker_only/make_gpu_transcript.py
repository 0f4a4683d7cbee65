#!/usr/bin/env python3
"""Constructs tests/worker_only/gpu_transcript_ok.jsonl: the transcript a CUDA worker would give
tools/gpu_check.py, for the checker's tests (gpu_check_transcript). No GPU was used.

How: each scenario of gpu_check.SCENARIOS is run for real on a CPU worker of this build (device
cpu; the knobs a CPU refuses dropped), then the events are rewritten the way the engine code writes
them on a CUDA device:
  hello      environment.cuda_available / cuda_devices (Engine::torchManifest), gpu.driver /
             devices (Nvml::manifest)
  applied    device "cuda:0" (c10::Device::str), precision + precision_state.autocast with
             cuda_enabled / cuda_dtype (readBackPrecision, autocastState), cuda_graph,
             input_on_host / input_device / input_pinned (emitApplied)
  samples    device_ns beside latency_ns (SampleBuffer::flush, CUDA events inside host time)
  metrics    gpu[] instead of gpu_status (Nvml::sample), cuda_allocator after configure
             (installCudaMetricsHook, cuda::allocatorStats)
  error      device_unavailable for cuda:99 as selectDevice words it on a one-GPU machine
Figures (driver, H100 name and memory, clocks, power, allocator bytes, device/host ratio) are
made up but plausible. Usage: make_gpu_transcript.py WORKER MODELS_DIR OUT.jsonl
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import gpu_check as g  # noqa: E402

CPU_REFUSES = {"cuda_graph", "input_on_host"}  # validation / a no-op on the CPU
GPU = {"driver": "550.54.15", "devices": [
    {"index": 0, "name": "NVIDIA H100 80GB HBM3", "memory_total_bytes": 85520809984}]}
HEADER = """# Constructed from the code, NOT recorded on a GPU (no GPU machine was lent, 2026-11-24).
# tests/worker_only/make_gpu_transcript.py ran each gpu_check.py scenario on a CPU worker of this
# build and rewrote its events into the shapes the CUDA paths of core/engine emit (see that
# script's docstring for which code writes which field); device_ns, gpu[], cuda_allocator and
# the GPU's name, driver and figures are made up. Replace with a real recording
# (gpu_check.sh saves one) once a GPU run exists.
"""


def cpu_knobs(knobs):
    k = {key: v for key, v in knobs.items() if key not in CPU_REFUSES}
    k["device"] = "cpu"
    k["intra_op_threads"] = 1
    if k.get("precision") in ("autocast_fp16", "half"):
        del k["precision"]  # refused on the CPU (validation, no Half conv kernels in 1.13)
    return k


def rewrite(name, knobs, events):
    out, configured, tick = [], False, 0
    for e in events:
        t = e.get("type")
        if t == "hello":
            env = e["environment"]
            env["build_config"] = env["build_config"].split("\n")[0] + " (trimmed)"
            env.update(cuda_available=True, cuda_devices=1, gpu=GPU)
        elif t == "error" and e.get("code") == "device_unavailable":
            e["message"] = 'device "cuda:99" does not exist: 1 CUDA device(s)'
        elif t == "applied":
            configured = True
            e["device"] = "cuda:0"
            e.pop("sandbox", None)  # long and host specific; the checks do not read it
            prec = knobs.get("precision", "fp32")
            out_dtype = {"autocast_fp16": "float16", "half": "float16",
                         "autocast_bf16": "bfloat16"}.get(prec, "float32")
            ac_dtype = {"autocast_fp16": "float16", "autocast_bf16": "bfloat16"}.get(prec)
            e["precision"] = prec
            e["precision_state"] = {"output_dtype": out_dtype, "autocast": {
                "cpu_enabled": False, "cpu_dtype": "bfloat16", "cuda_enabled": ac_dtype is not None,
                "cuda_dtype": ac_dtype or "float16"}}
            e["cuda_graph"] = bool(knobs.get("cuda_graph"))
            on_host = bool(knobs.get("input_on_host"))
            e.update(input_on_host=on_host, input_device="cpu" if on_host else "cuda:0", input_pinned=on_host)
        elif t == "loaded":
            e["model_path"] = "models/conv_probe.pt"
        elif t == "samples":  # GPU-like magnitudes: ~0.1 ms per iteration, device 82 % of it
            e["latency_ns"] = [90000 + x // 20 for x in e["latency_ns"]]
            e["device_ns"] = [int(x * 0.82) for x in e["latency_ns"]]
        elif t == "metrics":
            e.pop("gpu_status", None)
            busy = configured and tick > 0
            e["gpu"] = [{"index": 0, "util_pct": 37 if busy else 0, "mem_util_pct": 9 if busy else 0,
                         "memory_used_bytes": 1092616192 + (503316480 if configured else 0),
                         "memory_total_bytes": 85520809984, "sm_clock_mhz": 1980 if busy else 345,
                         "power_w": 151.2 if busy else 71.9, "temperature_c": 41}]
            if configured:
                tick += 1
                e["cuda_allocator"] = {"allocated_bytes": 2304000, "allocated_peak_bytes": 9437184,
                                       "reserved_bytes": 23068672, "reserved_peak_bytes": 23068672,
                                       "num_ooms": 0}
        out.append(e)
    return out


def main():
    worker, models, out_path = sys.argv[1:4]
    scen = {}
    with tempfile.TemporaryDirectory() as scratch, open(os.devnull, "w") as log:
        for name, knobs in g.SCENARIOS.items():
            k = {"device": "cuda:99"} if name == "device_missing" else cpu_knobs(knobs)
            if name == "device_missing":  # a CPU worker refuses any cuda:N with the same code
                s = g.run_scenario(worker, models, name, k, scratch, log)
            else:
                s = g.run_scenario(worker, models, name, k, scratch, log,
                                   busy_ms=300 if name == "baseline" else 0)
            s.header["knobs"] = knobs
            s.events = rewrite(name, knobs, s.events)
            scen[name] = s
    g.save_transcript(out_path, scen, "gpu_check transcript fixture")
    with open(out_path, encoding="utf-8") as f:
        body = f.read().split("\n", 1)[1]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(HEADER + body)


if __name__ == "__main__":
    main()
