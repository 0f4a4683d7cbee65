#!/usr/bin/env python3
"""pitlane-worker over its JSON-lines protocol, for tools/gpu_check.py (standard library only):
start a worker, hello, configure, blocks, quit, bye (run_scenario); a worker's events
(Scenario); transcripts of them (save_transcript / read_transcript)."""
import json
import os
import queue
import subprocess
import threading

ITERS = 30          # measured iterations per scenario
WARMUP = 5
MODEL = "conv_probe"  # NCHW, convolutions: cuDNN and channels_last matter (export_models.py)


class CheckFailed(Exception):
    pass


def need(cond, why):
    if not cond:
        raise CheckFailed(why)


class Scenario:
    """One worker process's events (live or from a transcript)."""

    def __init__(self, name, header, events, returncode):
        self.name, self.header, self.events, self.returncode = name, header, events, returncode

    def of(self, type_):
        return [e for e in self.events if isinstance(e, dict) and e.get("type") == type_]

    def first(self, type_):
        found = self.of(type_)
        return found[0] if found else None

    def applied(self):
        a = self.first("applied")
        if a is None:
            err = self.first("error")
            raise CheckFailed("scenario %s: no applied event (%s)" % (
                self.name, "error %s: %s" % (err.get("code"), err.get("message")) if err else
                "no error event either; exit %s" % self.returncode))
        return a

    def samples(self, phase="measure", block=0):
        """Latencies and device times of one block (device times None when any batch lacks them)."""
        lat, dev, has_dev = [], [], True
        for s in self.of("samples"):
            if s.get("phase") != phase or (block is not None and s.get("block") != block):
                continue
            lat += s.get("latency_ns", [])
            if "device_ns" in s:
                dev += s["device_ns"]
            else:
                has_dev = False
        return lat, (dev if has_dev else None)

    def blocks(self, phase="measure"):
        return [b for b in self.of("block_done") if b.get("phase") == phase]

    def ran(self):
        """The measured block ran: its block_done came, with the iterations asked for."""
        blocks = self.blocks()
        need(blocks, "scenario %s: no measured block_done (%s)" % (self.name, self.error_text()))
        need(blocks[0].get("iters") == ITERS, "scenario %s: block 0 ran %s iterations, asked %d" % (
            self.name, blocks[0].get("iters"), ITERS))

    def error_text(self):
        errs = self.of("error")
        return "; ".join("%s: %s" % (e.get("code"), e.get("message")) for e in errs) or "no error"

    def metrics_with(self, key):
        return [m for m in self.of("metrics") if key in m]


def read_transcript(path):
    scen, cur, malformed = {}, None, 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                malformed += 1
                continue
            if not isinstance(obj, dict):
                malformed += 1
            elif "scenario" in obj:
                cur = Scenario(obj["scenario"], obj, [], None)
                scen[cur.name] = cur
            elif "scenario_exit" in obj:
                if obj["scenario_exit"] in scen:
                    scen[obj["scenario_exit"]].returncode = obj.get("returncode")
                cur = None
            elif cur is not None:
                cur.events.append(obj)
            else:
                malformed += 1
    return scen, malformed


class Worker:
    def __init__(self, binary, scratch, log, readable=()):
        # As the runner starts a CUDA arm: sandboxed, reading only its models (--read) and the
        # system's libraries.
        args = [binary, "--sandbox", "on", "--scratch", scratch, "--memory-limit-mb", "none"]
        for path in readable:
            args += ["--read", path]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1)
        self.events, self.malformed, self.q = [], 0, queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.q.put(json.loads(line))
            except ValueError:
                self.malformed += 1
        self.q.put(None)

    def send(self, cmd, **fields):
        try:
            self.proc.stdin.write(json.dumps(dict({"v": 1, "cmd": cmd}, **fields)) + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass  # the worker is gone; waiting says so

    def wait_for(self, types, timeout):
        """Events until one of `types` (returned) or end of output / timeout (None)."""
        while True:
            try:
                e = self.q.get(timeout=timeout)
            except queue.Empty:
                return None
            if e is None:
                return None
            self.events.append(e)
            if isinstance(e, dict) and e.get("type") in types:
                return e

    def finish(self, timeout=60):
        self.send("quit")
        self.wait_for({"bye"}, timeout)
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def run_scenario(binary, models, name, knobs, scratch, log, busy_ms=0, iters=ITERS, model=MODEL,
                 profile_iters=0, model_file=None, inputs=None):
    """One worker through hello, configure, warmup, a measured block (and a timed one), and a
    profile of `profile_iters` iterations when asked: Scenario. `model_file` (in `models`) and
    `inputs` replace MODEL.pt and its sidecar's input."""
    if inputs is None:
        with open(os.path.join(models, model + ".json"), encoding="utf-8") as f:
            inputs = json.load(f)["input"]
    w = Worker(binary, scratch, log, readable=[models])
    if w.wait_for({"hello"}, 120):
        w.send("configure", arm={"name": name, "model_path": os.path.join(models, model_file or model + ".pt"),
                                 "input": inputs, "knobs": knobs, "seed": 1})
        if w.wait_for({"applied", "error"}, 300) and w.events[-1].get("type") == "applied":
            blocks = [(-1, "warmup", {"iters": WARMUP}), (0, "measure", {"iters": iters})]
            if busy_ms:
                blocks.append((1, "measure", {"time_ms": busy_ms}))
            for block, phase, amount in blocks:
                w.send("run", block=block, phase=phase, **amount)
                if not w.wait_for({"block_done"}, 300) or w.events[-1].get("type") != "block_done":
                    break
            else:
                if profile_iters:
                    w.send("profile", iters=profile_iters)
                    w.wait_for({"profile", "error"}, 300)
    rc = w.finish()
    header = {"scenario": name, "model": model, "knobs": knobs}
    return Scenario(name, header, w.events, rc)


def save_transcript(path, scen, comment):
    with open(path, "w", encoding="utf-8") as f:
        f.write("# %s\n" % comment)
        for s in scen.values():
            f.write(json.dumps(s.header) + "\n")
            for e in s.events:
                f.write(json.dumps(e) + "\n")
            f.write(json.dumps({"scenario_exit": s.name, "returncode": s.returncode}) + "\n")
