#!/usr/bin/env python3
"""Drives pitlane-worker over its JSON-lines protocol through every CUDA knob and metric, and
checks each read-back (`applied`, `samples`, `metrics`) against what was asked.

Python 3 standard library only: no Qt, no torch. tools/gpu_check.sh builds the worker-only
target and exports the models first; this script can also be run on its own:

  gpu_check.py --worker BIN --models DIR [--save-transcript FILE]   live, on a CUDA machine
  gpu_check.py --transcript FILE                                    judge a saved transcript
  gpu_check.py --no-device "REASON"                                 every check SKIP, exit 0
  gpu_check.py --cpu-protocol --worker BIN --models DIR             the protocol on the CPU
  gpu_check.py --list                                               the checks, one per line

Output: one `PASS name: ...`, `FAIL name: ...` or `SKIP name: reason` line per check, then a
summary line. Exit 0 when nothing failed, 1 otherwise.

A transcript is JSON lines: `{"scenario": NAME, "model": ..., "knobs": {...}}` starts one worker
process's events (copied verbatim, one per line), `{"scenario_exit": NAME, "returncode": N}`
ends them; lines starting with '#' are comments.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

from gpu_check_driver import (ITERS, CheckFailed, Scenario, need, read_transcript,  # noqa: F401
                              run_scenario, save_transcript)
from gpu_check_programs import PROGRAM_CHECK_FUNCS, PROGRAM_CHECKS, PROGRAM_SCENARIOS

BUSY_MS = 1000      # the baseline's timed block, long enough for NVML to see the GPU busy
CUDA = {"device": "cuda:0"}

# One worker process per scenario: configure runs once per process (the worker's rule).
SCENARIOS = {
    "baseline": dict(CUDA),
    "device_missing": {"device": "cuda:99"},
    "cudnn_on": dict(CUDA, cudnn_enabled=True, cudnn_benchmark=True, cudnn_deterministic=False,
                     allow_tf32=True),
    "cudnn_off": dict(CUDA, cudnn_enabled=False, cudnn_benchmark=False, cudnn_deterministic=True,
                      allow_tf32=False),
    "autocast_fp16": dict(CUDA, precision="autocast_fp16"),
    "autocast_bf16": dict(CUDA, precision="autocast_bf16"),
    "half": dict(CUDA, precision="half"),
    "channels_last": dict(CUDA, memory_format="channels_last"),
    "cuda_graph": dict(CUDA, cuda_graph=True),
    "host_sync": dict(CUDA, host_sync_each_iter=True),
    "input_on_host": dict(CUDA, input_on_host=True),
    "profile": dict(CUDA),
    "attention": dict(CUDA, grad="inference_mode", mode="eval"),
}
# Scenarios on another model than conv_probe, and those profiled after their measured block.
SCENARIO_MODEL = {"attention": "attention_probe"}
PROFILE_ITERS = {"profile": 3}
EXPECTED_ERRORS = {"device_missing": "device_unavailable"}

CHECKS = [
    ("device_selection", "hello says CUDA is available; applied.device is cuda:0"),
    ("device_unavailable", "cuda:99 is refused with error device_unavailable naming the knob"),
    ("cudnn_enabled", "applied.cudnn.enabled follows the knob, true and false"),
    ("cudnn_benchmark", "applied.cudnn.benchmark follows the knob, true and false"),
    ("cudnn_deterministic", "applied.cudnn.deterministic follows the knob, true and false"),
    ("allow_tf32", "applied.cudnn.allow_tf32 and allow_tf32_cublas follow the knob"),
    ("precision_autocast_fp16", "CUDA autocast fp16 on, output float16"),
    ("precision_autocast_bf16", "CUDA autocast bf16 on, output bfloat16"),
    ("precision_half", "model in half, output float16"),
    ("memory_format_channels_last", "applied.memory_format channels_last (contiguous by default)"),
    ("device_time", "samples carry device_ns (CUDA events), one per iteration, within host time"),
    ("cuda_graph_capture", "applied.cuda_graph true after capture"),
    ("cuda_graph_replay", "a measured block of graph replays: every iteration timed, device_ns"),
    ("host_sync_each_iter", "applied.host_sync_each_iter true, false by default; blocks run"),
    ("input_on_host", "input on the host, pinned, copied each iteration; on the device by default"),
    ("cuda_allocator", "metrics cuda_allocator: allocated/reserved current and peak, no OOM"),
    ("nvml_utilization", "metrics gpu[].util_pct / mem_util_pct in 0..100, busy while measuring"),
    ("nvml_memory", "metrics gpu[].memory_used_bytes within memory_total_bytes"),
    ("nvml_clocks", "metrics gpu[].sm_clock_mhz above 0"),
    ("nvml_power", "metrics gpu[].power_w above 0, temperature_c plausible"),
    ("kineto_profile_cuda", "profile on cuda:0 through Kineto: CPU operators and CUDA kernels in "
                            "the trace, device time above 0"),
    ("sdpa_model_cuda", "attention_probe (scaled_dot_product_attention, saved by torch 2.x) runs on cuda:0"),
] + PROGRAM_CHECKS + [
    ("worker_protocol", "every worker: hello first, bye last, exit 0, samples = block_done iters"),
]
CPU_CHECKS = ["cpu_hello", "cpu_configure", "cpu_samples", "cpu_block_done", "cpu_bye"]


def ms(ns_values):
    return statistics.median(ns_values) / 1e6 if ns_values else float("nan")


# ---- the checks: each takes {name: Scenario}, returns a detail string or raises CheckFailed ----

def get(scen, name):
    need(name in scen, "scenario %s missing from the run" % name)
    return scen[name]


def c_device_selection(scen):
    s = get(scen, "baseline")
    hello = s.first("hello")
    need(hello is not None, "no hello")
    env = hello.get("environment", {})
    need(env.get("cuda_available") is True, "hello.environment.cuda_available is %r" % env.get("cuda_available"))
    need(isinstance(env.get("cuda_devices"), int) and env["cuda_devices"] >= 1,
         "hello.environment.cuda_devices is %r" % env.get("cuda_devices"))
    a = s.applied()
    need(a.get("device") == "cuda:0", "applied.device is %r, asked cuda:0" % a.get("device"))
    gpu = env.get("gpu", {})
    names = [d.get("name") for d in gpu.get("devices", [])] if isinstance(gpu, dict) else []
    return "cuda:0 of %d device(s), libtorch %s%s" % (
        env["cuda_devices"], env.get("libtorch"), ", " + names[0] if names else "")


def c_device_unavailable(scen):
    s = get(scen, "device_missing")
    errs = s.of("error")
    need(errs, "cuda:99 gave no error event (applied: %r)" % (s.first("applied") or {}).get("device"))
    e = errs[0]
    need(e.get("code") == "device_unavailable", "error code %r: %s" % (e.get("code"), e.get("message")))
    knob = (e.get("detail") or {}).get("knob")
    need(knob == "device", "the error's detail names knob %r, not device" % knob)
    return e.get("message", "")


def cudnn_flag(field, knob):
    def check(scen):
        seen = []
        for name in ("cudnn_on", "cudnn_off"):
            s = get(scen, name)
            want = SCENARIOS[name][knob]
            got = s.applied().get("cudnn", {}).get(field)
            need(got == want, "%s: %s asked %s, applied.cudnn.%s is %r" % (name, knob, want, field, got))
            if field == "allow_tf32":
                cublas = s.applied().get("cudnn", {}).get("allow_tf32_cublas")
                need(cublas == want, "%s: allow_tf32 asked %s, applied.cudnn.allow_tf32_cublas is %r" % (
                    name, want, cublas))
            s.ran()
            seen.append(str(got).lower())
        return "read back %s with the knob %s; both measured %d iterations" % (
            " then ".join(seen), "true then false" if SCENARIOS["cudnn_on"][knob] else "false then true", ITERS)
    return check


def precision(name, want_dtype, autocast_dtype):
    def check(scen):
        s = get(scen, name)
        a = s.applied()
        state = a.get("precision_state", {})
        need(a.get("precision") == SCENARIOS[name]["precision"],
             "applied.precision is %r (output %r)" % (a.get("precision"), state.get("output_dtype")))
        need(state.get("output_dtype") == want_dtype, "output dtype %r" % state.get("output_dtype"))
        if autocast_dtype:
            ac = state.get("autocast", {})
            need(ac.get("cuda_enabled") is True, "precision_state.autocast.cuda_enabled is %r" % ac.get("cuda_enabled"))
            need(ac.get("cuda_dtype") == autocast_dtype, "autocast.cuda_dtype is %r" % ac.get("cuda_dtype"))
        s.ran()
        return "output %s, median %.3f ms over %d iterations" % (want_dtype, ms(s.samples()[0]), ITERS)
    return check


def c_channels_last(scen):
    base, s = get(scen, "baseline").applied(), get(scen, "channels_last")
    need(base.get("memory_format") == "contiguous", "baseline memory_format is %r" % base.get("memory_format"))
    need(s.applied().get("memory_format") == "channels_last",
         "applied.memory_format is %r" % s.applied().get("memory_format"))
    s.ran()
    return "median %.3f ms vs contiguous %.3f ms" % (ms(s.samples()[0]), ms(get(scen, "baseline").samples()[0]))


def c_device_time(scen):
    s = get(scen, "baseline")
    s.ran()
    lat, dev = s.samples()
    need(dev is not None, "a measured samples event lacks device_ns")
    need(len(dev) == len(lat), "%d device_ns for %d latency_ns" % (len(dev), len(lat)))
    need(all(d > 0 for d in dev), "a device_ns is 0 or negative")
    # The end event is synchronized before the host clock stops: device time fits inside host time.
    over = [i for i, (h, d) in enumerate(zip(lat, dev)) if d > h * 1.01 + 10000]
    need(not over, "device_ns above latency_ns at iteration(s) %s" % over[:5])
    return "median device %.3f ms vs host %.3f ms over %d iterations" % (ms(dev), ms(lat), len(lat))


def c_graph_capture(scen):
    s, base = get(scen, "cuda_graph"), get(scen, "baseline")
    need(s.applied().get("cuda_graph") is True, "applied.cuda_graph is %r (%s)" % (
        s.applied().get("cuda_graph"), s.error_text()))
    need(base.applied().get("cuda_graph") is False, "baseline applied.cuda_graph is %r" % base.applied().get("cuda_graph"))
    return "captured; first forward %.1f ms" % (s.first("loaded") or {}).get("first_forward_ms", float("nan"))


def c_graph_replay(scen):
    s = get(scen, "cuda_graph")
    s.applied()
    s.ran()
    lat, dev = s.samples()
    need(len(lat) == ITERS, "%d samples for %d iterations" % (len(lat), ITERS))
    need(dev is not None and len(dev) == len(lat) and all(d > 0 for d in dev), "replays lack device_ns")
    return "median %.3f ms (device %.3f ms) vs eager %.3f ms" % (
        ms(lat), ms(dev), ms(get(scen, "baseline").samples()[0]))


def c_host_sync(scen):
    s, base = get(scen, "host_sync"), get(scen, "baseline")
    need(s.applied().get("host_sync_each_iter") is True,
         "applied.host_sync_each_iter is %r" % s.applied().get("host_sync_each_iter"))
    need(base.applied().get("host_sync_each_iter") is False, "baseline reads back host_sync_each_iter true")
    s.ran()
    return "median %.3f ms vs %.3f ms without (applied echoes the knob; the copy is not observed)" % (
        ms(s.samples()[0]), ms(base.samples()[0]))


def c_input_on_host(scen):
    s, base = get(scen, "input_on_host"), get(scen, "baseline")
    a, b = s.applied(), base.applied()
    need(a.get("input_on_host") is True, "applied.input_on_host is %r" % a.get("input_on_host"))
    need(a.get("input_device") == "cpu", "applied.input_device is %r, expected cpu" % a.get("input_device"))
    need(a.get("input_pinned") is True, "applied.input_pinned is %r: the host input is not pinned" % a.get("input_pinned"))
    need(b.get("input_on_host") is False and b.get("input_device") == "cuda:0" and b.get("input_pinned") is False,
         "baseline input: on_host %r, device %r, pinned %r" % (
             b.get("input_on_host"), b.get("input_device"), b.get("input_pinned")))
    s.ran()
    return "pinned host input: median %.3f ms vs %.3f ms on the device" % (ms(s.samples()[0]), ms(base.samples()[0]))


def c_cuda_allocator(scen):
    s = get(scen, "baseline")
    s.ran()
    ticks = s.metrics_with("cuda_allocator")
    need(ticks, "no metrics event carries cuda_allocator")
    for t in ticks:
        c = t["cuda_allocator"]
        for k in ("allocated_bytes", "allocated_peak_bytes", "reserved_bytes", "reserved_peak_bytes", "num_ooms"):
            need(isinstance(c.get(k), int) and c[k] >= 0, "cuda_allocator.%s is %r" % (k, c.get(k)))
        need(c["allocated_bytes"] <= c["allocated_peak_bytes"], "allocated above its peak: %r" % c)
        need(c["reserved_bytes"] <= c["reserved_peak_bytes"], "reserved above its peak: %r" % c)
        need(c["allocated_bytes"] <= c["reserved_bytes"], "allocated above reserved: %r" % c)
        need(c["num_ooms"] == 0, "num_ooms %d" % c["num_ooms"])
    last = ticks[-1]["cuda_allocator"]
    need(last["allocated_peak_bytes"] > 0, "allocated_peak_bytes is 0 after a measured block")
    return "%d ticks; allocated peak %d B, reserved peak %d B" % (
        len(ticks), last["allocated_peak_bytes"], last["reserved_peak_bytes"])


def gpu_readings(scen):
    s = get(scen, "baseline")
    s.ran()
    ticks = s.metrics_with("gpu")
    if not ticks:
        statuses = {m.get("gpu_status") for m in s.metrics_with("gpu_status")}
        raise CheckFailed("no metrics event carries gpu[] (gpu_status: %s)" % ", ".join(map(str, statuses)))
    readings = [g for t in ticks for g in t["gpu"] if g.get("index") == 0]
    need(readings, "no gpu[] reading for device 0")
    return readings


def c_nvml_util(scen):
    r = gpu_readings(scen)
    for g in r:
        for k in ("util_pct", "mem_util_pct"):
            need(isinstance(g.get(k), (int, float)) and 0 <= g[k] <= 100, "gpu[0].%s is %r" % (k, g.get(k)))
    need(max(g["util_pct"] for g in r) > 0, "util_pct stayed 0 in %d readings while measuring" % len(r))
    return "%d readings, util_pct max %d, mem_util_pct max %d" % (
        len(r), max(g["util_pct"] for g in r), max(g["mem_util_pct"] for g in r))


def c_nvml_memory(scen):
    r = gpu_readings(scen)
    for g in r:
        used, total = g.get("memory_used_bytes"), g.get("memory_total_bytes")
        need(isinstance(total, int) and total > 0, "memory_total_bytes is %r" % total)
        need(isinstance(used, int) and 0 < used <= total, "memory_used_bytes %r of %r" % (used, total))
    return "used up to %.0f MiB of %.0f MiB" % (max(g["memory_used_bytes"] for g in r) / 2**20,
                                               r[0]["memory_total_bytes"] / 2**20)


def c_nvml_clocks(scen):
    r = gpu_readings(scen)
    need(all(isinstance(g.get("sm_clock_mhz"), int) and g["sm_clock_mhz"] > 0 for g in r),
         "sm_clock_mhz: %r" % [g.get("sm_clock_mhz") for g in r][:5])
    return "SM clock %d..%d MHz" % (min(g["sm_clock_mhz"] for g in r), max(g["sm_clock_mhz"] for g in r))


def c_nvml_power(scen):
    r = gpu_readings(scen)
    need(all(isinstance(g.get("power_w"), (int, float)) and g["power_w"] > 0 for g in r),
         "power_w: %r" % [g.get("power_w") for g in r][:5])
    need(all(isinstance(g.get("temperature_c"), int) and 0 < g["temperature_c"] < 120 for g in r),
         "temperature_c: %r" % [g.get("temperature_c") for g in r][:5])
    return "power %.1f..%.1f W, %d..%d C" % (min(g["power_w"] for g in r), max(g["power_w"] for g in r),
                                             min(g["temperature_c"] for g in r), max(g["temperature_c"] for g in r))


def c_kineto_profile(scen):
    s = get(scen, "profile")
    s.ran()
    p = s.first("profile")
    need(p is not None, "no profile event (%s)" % s.error_text())
    need("kineto" in p.get("profiler", "") and "CUDA" in p.get("profiler", ""),
         "profiler is %r, not Kineto with CUDA" % p.get("profiler"))
    iters = PROFILE_ITERS["profile"]
    conv = [o for o in p.get("ops", []) if o.get("name") == "aten::conv2d"]
    need(conv and conv[0].get("calls") == 2 * iters,
         "aten::conv2d calls %r, expected %d (two convolutions per iteration)" % (
             conv[0].get("calls") if conv else None, 2 * iters))
    need(isinstance(p.get("device_us"), (int, float)) and p["device_us"] > 0,
         "device_us is %r" % p.get("device_us"))
    events = (p.get("trace") or {}).get("traceEvents", [])
    kernels = [e for e in events if isinstance(e, dict) and e.get("cat") == "kernel"]
    runtime = [e for e in events if isinstance(e, dict) and e.get("cat") == "cuda_runtime"]
    need(kernels, "the trace has no kernel events (categories: %s)" % sorted(
        {e.get("cat") for e in events if isinstance(e, dict)} - {None}))
    need(runtime, "the trace has no cuda_runtime events")
    return "%d kernels, %d CUDA runtime calls in the trace; device time %.1f us over %d iterations" % (
        len(kernels), len(runtime), p["device_us"], iters)


def c_sdpa_model(scen):
    s = get(scen, "attention")
    a = s.applied()
    need(a.get("device") == "cuda:0", "applied.device is %r" % a.get("device"))
    s.ran()
    return "median %.3f ms over %d iterations" % (ms(s.samples()[0]), ITERS)


def protocol_problems(s):
    """What is wrong with one worker's conversation ([] when nothing)."""
    bad = []
    if not s.events or s.events[0].get("type") != "hello":
        bad.append("first event is not hello")
    if not s.events or s.events[-1].get("type") != "bye":
        bad.append("last event is not bye")
    if s.returncode != 0:
        bad.append("exit code %r" % s.returncode)
    if any(e.get("v") != 1 for e in s.events):
        bad.append("an event without v 1")
    expected = EXPECTED_ERRORS.get(s.name)
    errors = [e for e in s.of("error") if e.get("code") != expected]
    if errors:
        bad.append("error " + "; ".join("%s: %s" % (e.get("code"), e.get("message")) for e in errors))
    for b in s.of("block_done"):
        n = sum(len(x.get("latency_ns", [])) for x in s.of("samples")
                if x.get("block") == b.get("block") and x.get("phase") == b.get("phase"))
        if n != b.get("iters"):
            bad.append("block %s: %d samples, block_done says %s" % (b.get("block"), n, b.get("iters")))
    return bad


def c_worker_protocol(scen):
    bad = ["%s: %s" % (name, ", ".join(p)) for name, s in scen.items() for p in [protocol_problems(s)] if p]
    need(not bad, "; ".join(bad))
    missing = [n for n in list(SCENARIOS) + list(PROGRAM_SCENARIOS) if n not in scen]
    need(not missing, "scenarios missing: %s" % ", ".join(missing))
    return "%d workers, each hello ... bye, exit 0" % len(scen)


CHECK_FUNCS = {
    "device_selection": c_device_selection,
    "device_unavailable": c_device_unavailable,
    "cudnn_enabled": cudnn_flag("enabled", "cudnn_enabled"),
    "cudnn_benchmark": cudnn_flag("benchmark", "cudnn_benchmark"),
    "cudnn_deterministic": cudnn_flag("deterministic", "cudnn_deterministic"),
    "allow_tf32": cudnn_flag("allow_tf32", "allow_tf32"),
    "precision_autocast_fp16": precision("autocast_fp16", "float16", "float16"),
    "precision_autocast_bf16": precision("autocast_bf16", "bfloat16", "bfloat16"),
    "precision_half": precision("half", "float16", None),
    "memory_format_channels_last": c_channels_last,
    "device_time": c_device_time,
    "cuda_graph_capture": c_graph_capture,
    "cuda_graph_replay": c_graph_replay,
    "host_sync_each_iter": c_host_sync,
    "input_on_host": c_input_on_host,
    "cuda_allocator": c_cuda_allocator,
    "nvml_utilization": c_nvml_util,
    "nvml_memory": c_nvml_memory,
    "nvml_clocks": c_nvml_clocks,
    "nvml_power": c_nvml_power,
    "kineto_profile_cuda": c_kineto_profile,
    "sdpa_model_cuda": c_sdpa_model,
    **PROGRAM_CHECK_FUNCS,
    "worker_protocol": c_worker_protocol,
}
assert [c for c, _ in CHECKS] == list(CHECK_FUNCS)


def report(results, what):
    """Prints one line per (name, status, detail) and the summary; returns the exit code."""
    for name, status, detail in results:
        print("%s %s: %s" % (status, name, detail))
    count = {k: sum(1 for r in results if r[1] == k) for k in ("PASS", "FAIL", "SKIP")}
    print("gpu_check: %d passed, %d failed, %d skipped (%s)" % (count["PASS"], count["FAIL"], count["SKIP"], what))
    sys.stdout.flush()
    return 1 if count["FAIL"] else 0


def evaluate(scen):
    results = []
    for name, _ in CHECKS:
        try:
            results.append((name, "PASS", CHECK_FUNCS[name](scen)))
        except CheckFailed as e:
            results.append((name, "FAIL", str(e)))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            results.append((name, "FAIL", "malformed events: %s: %s" % (type(e).__name__, e)))
    return results


def live(args):
    scen = {}
    with tempfile.TemporaryDirectory(prefix="pitlane-gpu-check-") as scratch:
        log_path = args.worker_log or os.path.join(scratch, "worker-stderr.log")
        with open(log_path, "a", encoding="utf-8") as log:
            for name, knobs in SCENARIOS.items():
                print("running scenario %s: %s" % (name, json.dumps(knobs)), file=sys.stderr, flush=True)
                scen[name] = run_scenario(args.worker, args.models, name, knobs, scratch, log,
                                          busy_ms=BUSY_MS if name == "baseline" else 0,
                                          model=SCENARIO_MODEL.get(name, "conv_probe"),
                                          profile_iters=PROFILE_ITERS.get(name, 0))
            for name, (model_file, inputs, knobs) in PROGRAM_SCENARIOS.items():
                print("running scenario %s: %s %s" % (name, model_file, json.dumps(knobs)), file=sys.stderr, flush=True)
                scen[name] = run_scenario(args.worker, args.models, name, knobs, scratch, log,
                                          model=model_file, model_file=model_file, inputs=inputs)
    if args.save_transcript:
        save_transcript(args.save_transcript, scen, "recorded live by tools/gpu_check.py from " + args.worker)
    return report(evaluate(scen), "live run of %s" % args.worker)


def cpu_protocol(args):
    """The protocol on the CPU (any build): hello, configure mlp, warmup + measured block, bye."""
    with tempfile.TemporaryDirectory(prefix="pitlane-protocol-") as scratch, open(os.devnull, "w") as log:
        s = run_scenario(args.worker, args.models, "cpu", {"device": "cpu", "intra_op_threads": 1},
                         scratch, log, iters=20, model="mlp")
    results = []

    def check(name, fn):
        try:
            results.append((name, "PASS", fn()))
        except CheckFailed as e:
            results.append((name, "FAIL", str(e)))

    def hello():
        h = s.first("hello")
        need(h and s.events[0] is h, "hello is not the first event")
        need(h.get("protocol") == 1 and isinstance(h.get("pid"), int), "hello: protocol %r pid %r" % (
            h.get("protocol"), h.get("pid")))
        env = h.get("environment", {})
        need(isinstance(env.get("libtorch"), str) and isinstance(env.get("cuda_available"), bool),
             "environment lacks libtorch / cuda_available")
        return "pid %d, libtorch %s, cuda_available %s" % (h["pid"], env["libtorch"], env["cuda_available"])

    def configure():
        a = s.applied()
        need(a.get("device") == "cpu" and a.get("intra_op_threads") == 1,
             "applied device %r, intra_op_threads %r" % (a.get("device"), a.get("intra_op_threads")))
        need(s.first("loaded") is not None, "no loaded event")
        return "loaded mlp in %.1f ms; applied device cpu, 1 thread, blas %s" % (
            s.first("loaded").get("load_ms", float("nan")), a.get("blas"))

    def samples():
        lat, dev = s.samples()
        need(len(lat) == 20 and all(x > 0 for x in lat), "%d measured samples, asked 20" % len(lat))
        need(dev is None, "device_ns on the CPU")
        return "20 latencies, median %.3f ms, %d warmup apart" % (ms(lat), len(s.samples("warmup", -1)[0]))

    def block_done():
        b = s.blocks()
        need(len(b) == 1 and b[0].get("iters") == 20 and b[0].get("block") == 0, "block_done: %r" % b)
        return "block 0, 20 iterations, %.1f ms wall" % b[0].get("wall_ms", float("nan"))

    def bye():
        need(not protocol_problems(s), ", ".join(protocol_problems(s)))
        return "bye after %d events, exit 0" % len(s.events)

    for name, fn in zip(CPU_CHECKS, (hello, configure, samples, block_done, bye)):
        check(name, fn)
    return report(results, "CPU protocol of %s" % args.worker)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--worker", help="the pitlane-worker to drive")
    p.add_argument("--models", help="folder with conv_probe.pt/.json (and mlp for --cpu-protocol)")
    p.add_argument("--transcript", help="judge a saved transcript instead of running a worker")
    p.add_argument("--save-transcript", help="write the live run's events here")
    p.add_argument("--worker-log", help="append the workers' stderr here")
    p.add_argument("--no-device", metavar="REASON", help="print every check as SKIP with REASON, exit 0")
    p.add_argument("--cpu-protocol", action="store_true", help="check the protocol on the CPU only")
    p.add_argument("--list", action="store_true", help="list the checks")
    args = p.parse_args(argv)
    if args.list:
        for name, what in CHECKS:
            print("%s\t%s" % (name, what))
        return 0
    if args.no_device is not None:
        return report([(name, "SKIP", args.no_device) for name, _ in CHECKS], args.no_device)
    if args.transcript:
        scen, malformed = read_transcript(args.transcript)
        what = "transcript %s" % args.transcript + (", %d malformed lines ignored" % malformed if malformed else "")
        return report(evaluate(scen), what)
    if not args.worker or not args.models:
        p.error("--worker and --models are needed for a live run")
    return cpu_protocol(args) if args.cpu_protocol else live(args)


if __name__ == "__main__":
    sys.exit(main())
