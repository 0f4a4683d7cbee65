#!/usr/bin/env python3
"""Tests of tools/gpu_check.py's judging, against transcripts, so a GPU run is not its first run.

  test_gpu_check.py              the transcript tests (ctest gpu_check_transcript)
  test_gpu_check.py --no-device  tools/gpu_check.sh on a machine without a CUDA device
                                 (ctest gpu_check_no_device; exit 77 = skipped where one exists)
"""
import copy
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", ".."))
CHECKER = os.path.join(SRC, "tools", "gpu_check.py")
OK = os.path.join(HERE, "gpu_transcript_h100.jsonl")  # recorded on a GPU (docs/GPU.md)
TF32_WRONG = os.path.join(HERE, "gpu_transcript_tf32_wrong.jsonl")
sys.path.insert(0, os.path.join(SRC, "tools"))
import gpu_check as g  # noqa: E402

NAMES = [name for name, _ in g.CHECKS]


def run(*args):
    p = subprocess.run([sys.executable, CHECKER] + list(args), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout.splitlines()


def statuses(lines):
    """{check: status} from the output lines, asserting one line per check."""
    out = {}
    for line in lines[:-1]:
        status, rest = line.split(" ", 1)
        name = rest.split(":", 1)[0]
        assert name not in out, "two lines for " + name
        out[name] = status
    return out


class Transcripts(unittest.TestCase):
    def test_list_names_every_check(self):
        rc, lines = run("--list")
        self.assertEqual(rc, 0)
        self.assertEqual([l.split("\t")[0] for l in lines], NAMES)
        self.assertGreaterEqual(len(NAMES), 21)

    def test_recorded_h100_transcript_passes_every_check(self):
        rc, lines = run("--transcript", OK)
        self.assertEqual(rc, 0, "\n".join(lines))
        self.assertEqual(statuses(lines), {n: "PASS" for n in NAMES}, "\n".join(lines))
        self.assertTrue(lines[-1].startswith("gpu_check: %d passed, 0 failed, 0 skipped" % len(NAMES)), lines[-1])
        text = "\n".join(lines)
        # The details are the transcript's figures, not fixed words.
        self.assertIn("PASS device_selection: cuda:0 of 1 device(s)", text)
        self.assertIn("PASS cuda_allocator: ", text)
        self.assertIn("allocated peak 35465216 B, reserved peak 35651584 B", text)
        self.assertIn("PASS nvml_clocks: SM clock 1980..1980 MHz", text)
        self.assertIn("PASS kineto_profile_cuda: 27 kernels, 42 CUDA runtime calls in the trace", text)

    def test_tf32_asked_but_not_applied_fails_with_a_nonzero_exit(self):
        rc, lines = run("--transcript", TF32_WRONG)
        self.assertEqual(rc, 1, "\n".join(lines))
        st = statuses(lines)
        self.assertEqual(st.pop("allow_tf32"), "FAIL")
        self.assertEqual(st, {n: "PASS" for n in NAMES if n != "allow_tf32"})
        self.assertIn("FAIL allow_tf32: cudnn_on: allow_tf32 asked True, applied.cudnn.allow_tf32 is False", lines)
        self.assertIn("gpu_check: %d passed, 1 failed, 0 skipped" % (len(NAMES) - 1), lines[-1])

    def test_no_device_mode_skips_every_check_and_exits_0(self):
        rc, lines = run("--no-device", "no CUDA device")
        self.assertEqual(rc, 0)
        self.assertEqual(lines[:-1], ["SKIP %s: no CUDA device" % n for n in NAMES])


class Mutations(unittest.TestCase):
    """Each wrong read-back in an otherwise good transcript fails exactly the checks it should."""

    @classmethod
    def setUpClass(cls):
        cls.good, malformed = g.read_transcript(OK)
        assert malformed == 0

    def judge(self, mutate):
        scen = copy.deepcopy(self.good)
        mutate(scen)
        return {name: status for name, status, _ in g.evaluate(scen)}

    def failed(self, mutate):
        return sorted(n for n, s in self.judge(mutate).items() if s == "FAIL")

    def applied(self, scen, name):
        return scen[name].first("applied")

    def test_unmutated_passes(self):
        self.assertEqual(self.failed(lambda s: None), [])

    def test_missing_device_ns(self):
        def m(s):
            for e in s["baseline"].of("samples"):
                e.pop("device_ns", None)
        self.assertEqual(self.failed(m), ["device_time"])

    def test_device_time_above_host_time(self):
        def m(s):
            e = s["baseline"].of("samples")[1]  # the first measured batch
            e["device_ns"][3] = e["latency_ns"][3] * 2
        self.assertEqual(self.failed(m), ["device_time"])

    def test_bf16_autocast_that_read_back_fp32(self):
        def m(s):
            a = self.applied(s, "autocast_bf16")
            a["precision"] = "fp32"
            a["precision_state"]["output_dtype"] = "float32"
        self.assertEqual(self.failed(m), ["precision_autocast_bf16"])

    def test_fp16_autocast_on_the_cpu_side_only(self):
        def m(s):
            self.applied(s, "autocast_fp16")["precision_state"]["autocast"]["cuda_enabled"] = False
        self.assertEqual(self.failed(m), ["precision_autocast_fp16"])

    def test_cudnn_flag_stuck_at_its_default(self):
        def m(s):
            self.applied(s, "cudnn_off")["cudnn"]["deterministic"] = False
        self.assertEqual(self.failed(m), ["cudnn_deterministic"])

    def test_channels_last_not_applied(self):
        self.assertEqual(self.failed(lambda s: self.applied(s, "channels_last").update(memory_format="contiguous")),
                         ["memory_format_channels_last"])

    def test_graph_not_captured(self):
        self.assertEqual(self.failed(lambda s: self.applied(s, "cuda_graph").update(cuda_graph=False)),
                         ["cuda_graph_capture"])

    def test_graph_block_short_of_iterations(self):
        def m(s):
            for e in s["cuda_graph"].of("samples"):
                if e["block"] == 0:
                    del e["latency_ns"][-1], e["device_ns"][-1]
        self.assertEqual(self.failed(m), ["cuda_graph_replay", "worker_protocol"])

    def test_host_input_not_pinned(self):
        self.assertEqual(self.failed(lambda s: self.applied(s, "input_on_host").update(input_pinned=False)),
                         ["input_on_host"])

    def test_host_sync_not_read_back(self):
        self.assertEqual(self.failed(lambda s: self.applied(s, "host_sync").pop("host_sync_each_iter")),
                         ["host_sync_each_iter"])

    def test_no_cuda_allocator_stats(self):
        def m(s):
            for e in s["baseline"].of("metrics"):
                e.pop("cuda_allocator", None)
        self.assertEqual(self.failed(m), ["cuda_allocator"])

    def test_allocated_above_reserved(self):
        def m(s):
            s["baseline"].metrics_with("cuda_allocator")[-1]["cuda_allocator"]["allocated_bytes"] = 10**12
        self.assertEqual(self.failed(m), ["cuda_allocator"])

    def test_gpu_never_busy(self):
        def m(s):
            for e in s["baseline"].metrics_with("gpu"):
                e["gpu"][0]["util_pct"] = 0
        self.assertEqual(self.failed(m), ["nvml_utilization"])

    def test_no_nvml_fails_every_nvml_check(self):
        def m(s):
            for e in s["baseline"].metrics_with("gpu"):
                del e["gpu"]
                e["gpu_status"] = "no NVML (libnvidia-ml.so.1 not found)"
        self.assertEqual(self.failed(m), ["nvml_clocks", "nvml_memory", "nvml_power", "nvml_utilization"])

    def test_power_and_clock_zero(self):
        def m(s):
            s["baseline"].metrics_with("gpu")[-1]["gpu"][0].update(power_w=0, sm_clock_mhz=0)
        self.assertEqual(self.failed(m), ["nvml_clocks", "nvml_power"])

    def test_profile_without_kernels(self):
        def m(s):
            p = s["profile"].first("profile")
            p["trace"]["traceEvents"] = [e for e in p["trace"]["traceEvents"] if e.get("cat") != "kernel"]
        self.assertEqual(self.failed(m), ["kineto_profile_cuda"])

    def test_profile_of_the_legacy_cpu_profiler(self):
        self.assertEqual(self.failed(lambda s: s["profile"].first("profile").update(
            profiler="legacy (autograd profiler, CPU)")), ["kineto_profile_cuda"])

    def test_attention_model_that_did_not_load(self):
        def m(s):
            sc = s["attention"]
            sc.events = [e for e in sc.events if e.get("type") not in ("applied", "samples", "block_done")]
            sc.events.insert(-1, {"v": 1, "type": "error", "code": "model_load_failed",
                                  "message": "Unknown builtin op: aten::scaled_dot_product_attention"})
        self.assertEqual(self.failed(m), ["sdpa_model_cuda", "worker_protocol"])

    def test_a_missing_scenario_fails_its_checks_and_the_protocol(self):
        self.assertEqual(self.failed(lambda s: s.pop("half")), ["precision_half", "worker_protocol"])

    def test_a_worker_that_did_not_exit_0(self):
        def m(s):
            s["input_on_host"].returncode = -11
        self.assertEqual(self.failed(m), ["worker_protocol"])

    def test_a_configure_error_fails_the_checks_of_that_worker(self):
        def m(s):
            sc = s["cuda_graph"]
            sc.events = [e for e in sc.events if e.get("type") not in ("applied", "samples", "block_done")]
            sc.events.insert(-1, {"v": 1, "type": "error", "code": "bad_knob",
                                  "message": "cuda_graph: capture failed: operation not permitted",
                                  "detail": {"knob": "cuda_graph"}})
        self.assertEqual(self.failed(m), ["cuda_graph_capture", "cuda_graph_replay", "worker_protocol"])

    def test_device_missing_accepted(self):
        def m(s):
            sc = s["device_missing"]
            sc.events = [e for e in sc.events if e.get("type") != "error"]
        self.assertEqual(self.failed(m), ["device_unavailable"])

    def test_malformed_lines_are_counted_not_fatal(self):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
            f.write(open(OK, encoding="utf-8").read().replace('{"scenario": "half"', 'not json\n[1]\n{"scenario": "half"', 1))
        try:
            scen, malformed = g.read_transcript(f.name)
            self.assertEqual(malformed, 2)
            self.assertEqual([s for _, s, _ in g.evaluate(scen)], ["PASS"] * len(NAMES))
        finally:
            os.unlink(f.name)


def no_device():
    """tools/gpu_check.sh where there is no CUDA device: every check SKIP, exit 0, nothing built."""
    if glob.glob("/dev/nvidia[0-9]*") or shutil.which("nvidia-smi"):
        print("this machine has an NVIDIA device or nvidia-smi: the no-device path is not what runs here")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        build = os.path.join(tmp, "build")
        env = dict(os.environ, PITLANE_GPU_CHECK_BUILD_DIR=build)
        p = subprocess.run([os.path.join(SRC, "tools", "gpu_check.sh")], capture_output=True, text=True,
                           timeout=60, env=env)
        print(p.stdout + p.stderr)
        problems = []
        if p.returncode != 0:
            problems.append("exit %d" % p.returncode)
        lines = p.stdout.splitlines()
        if not lines or "no CUDA device on this machine" not in lines[0]:
            problems.append("first line does not say there is no CUDA device")
        if lines[1:-1] != ["SKIP %s: no CUDA device" % n for n in NAMES]:
            problems.append("not one 'SKIP name: no CUDA device' line per check")
        if not lines or lines[-1] != "gpu_check: 0 passed, 0 failed, %d skipped (no CUDA device)" % len(NAMES):
            problems.append("summary line: %r" % (lines[-1] if lines else None))
        if os.path.exists(build):
            problems.append("it created the build folder %s: it must not build without a device" % build)
    print("\n".join("FAILED: " + x for x in problems) or "no-device path: every check SKIP, exit 0, nothing built")
    return 1 if problems else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--no-device"]:
        sys.exit(no_device())
    unittest.main(verbosity=2)
