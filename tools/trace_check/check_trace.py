#!/usr/bin/env python3
"""Loads a PyTorch profiler (Kineto) Chrome trace with Holistic Trace Analysis (HTA, Meta's
reader of PyTorch profiler traces, pinned by tools/python-requirements.txt) and prints what it
made of it, as one JSON object on stdout:

  ok, parser, file, events {total, complete, metadata, other, trace_spans}, bounds_us,
  processes [{pid, name, threads [{tid, name, complete, modelled, roots, max_depth, dropped}]}],
  ops {name: complete CPU events (categories cpu_op and user_annotation) HTA parsed}, errors [...]

Exit 0 when the trace parsed and every complete ("X") event took its place in its thread's call
stack; 1 on any error (unreadable or truncated JSON, no events, HTA threw, HTA lost events of a
thread, an event that overlaps its parent instead of nesting in it); 2 on bad arguments.

  .venv/bin/python tools/trace_check/check_trace.py FILE.trace.json

How HTA 0.5.0 is used, and what is worked around (each said again where it is done):
- Parsing: hta.common.trace.Trace with trace_files={0: FILE} and parse_traces(). HTA looks for a
  rank ("distributedInfo": {"rank": N}) only when it is given a folder or a list of files; the
  rank -> file map given here names rank 0 itself, so the file is read as it is. A trace in the
  array form (a bare list of events), or one whose name ends in neither .json nor .gz (HTA refuses
  those), is first written to a temporary folder as {"traceEvents": [...]} under rank0.json.
  Trace.load_traces() is not used: its align_and_filter_trace() drops every CPU event after the
  last "ProfilerStep#" span, which is right for HTA's analyses and wrong for a checker.
- HTA 0.5.0 rounds a nanosecond-resolution trace to whole microseconds (start rounded up, end
  rounded down): every operator shorter than its rounding gets a negative duration (36 of 1400
  in a resnet18 trace), which HTA's own call-stack construction cannot place. The rounding is
  turned off (HTA_DISABLE_NS_ROUNDING=1, HTA's own switch) and the call stacks are built on
  whole nanoseconds (Kineto writes microseconds with three decimals), where nesting is exact.
- Call stacks: hta.common.trace_call_stack.CallStackGraph, HTA's per-thread call-stack builder
  (what hta.common.trace_call_graph.CallGraph runs for each CPU thread), one per thread, on HTA's
  parsed dataframe. It assumes events nest and, when one does not, silently files the events
  after it under the wrong parents. So the overlapping events are found first (a stack walk over
  HTA's dataframe, in order of start, the longer first: an event that starts inside the event
  below it on the stack and ends after it overlaps its parent), reported, counted as dropped and
  left out; HTA builds the stack of the rest, and every edge it makes is checked (the child lies
  inside its parent). Its root is keyed by -abs(tid), which needs a number and collides with
  event 0 for tid 0, so each thread gets a stand-in number (its ordinal + 1) for that.
- HTA 0.5.0 with pandas 3: DataFrame.replace no longer turns the call-stack builder's "kind"
  column ("ts"/"end" -> -1/1) into integers, so its events array has dtype object and its
  duplicate check np.unique(events, axis=0) throws ("The axis argument to unique is not
  supported for dtype object"). HTA fixed it upstream (facebookresearch/HolisticTraceAnalysis
  PR #328: the kind column made int), in a release PyPI does not have. The same fix is applied
  from outside: that module's np.unique gets an object array as numbers. Nothing changes with
  pandas 2, where the array is numeric already. HTA 0.5.0 has more pandas 3 breakage that this
  shim does not cover: with pandas 3 a trace with CUDA kernels (a "correlation" column) makes
  its parser throw in transform_correlation_to_index (an index written into an int8 column).
  HTA 0.5.0 is meant for pandas 2 (pandas 2.3.3 runs all of this without a shim).
- HTA keeps no metadata ("M") events: process and thread names are read from the file itself.
  It also leaves out Kineto's whole-trace span (category "Trace"), flow ("s"/"f", "ac2g"),
  instant and counter events (no duration): those are counted, never errors. Kineto's string
  pids and tids ("Spans", "Traces", "PyTorch Profiler") are kept as they are.
- HTA logs through the logging module to stdout; stdout is pointed at stderr while it runs (the
  report goes to the original stdout), so only the report is on stdout.
"""
import gzip
import json
import os
import sys
import tempfile
from collections import Counter, defaultdict

# HTA's own switch, read when it parses (hta.configs.env_options): see the module comment.
os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"

CPU_OP_CATEGORIES = ("cpu_op", "user_annotation")
MAX_NAMED = 5  # overlapping events named per thread in an error


def json_value(v):
    """A pid / tid / number from pandas or numpy as a plain JSON value."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def ns(us):
    """Microseconds (Kineto writes them with three decimals) as whole nanoseconds."""
    return int(round(float(us) * 1000.0))


def us(n):
    return n / 1000.0


def patch_hta_for_pandas3():
    """HTA PR #328's fix, from outside (see the module comment): only hta.common.trace_call_stack
    sees the shim, and only an object array is converted."""
    import numpy
    import hta.common.trace_call_stack as call_stack

    class NumpyWithNumericUnique:
        def __getattr__(self, name):
            return getattr(numpy, name)

        @staticmethod
        def unique(ar, *args, **kwargs):
            if isinstance(ar, numpy.ndarray) and ar.dtype == object:
                try:
                    ar = ar.astype(numpy.int64)
                except (TypeError, ValueError):
                    ar = ar.astype(numpy.float64)
            return numpy.unique(ar, *args, **kwargs)

    if not isinstance(call_stack.np, NumpyWithNumericUnique):
        call_stack.np = NumpyWithNumericUnique()


class Checker:
    def __init__(self, path, out):
        self.path = path
        self.out = out
        self.report = {
            "ok": False,
            "parser": {"name": "HolisticTraceAnalysis", "version": None,
                       "what": "Holistic Trace Analysis: its trace parser (hta.common.trace.Trace) "
                               "and its per-thread call stacks (hta.common.trace_call_stack)",
                       "python": sys.version.split()[0]},
            "file": path,
            "events": {"total": 0, "complete": 0, "metadata": 0, "other": 0, "trace_spans": 0},
            "bounds_us": None,
            "processes": [],
            "ops": {},
            "errors": [],
        }
        self.errors = self.report["errors"]

    def finish(self):
        self.report["ok"] = not self.errors
        os.write(self.out, (json.dumps(self.report, indent=1) + "\n").encode())
        return 0 if self.report["ok"] else 1

    # --- the file itself: counts, names, what HTA should parse -----------------------------------

    def read_raw(self):
        opener = gzip.open if self.path.endswith(".gz") else open
        try:
            with opener(self.path, "rb") as f:
                doc = json.loads(f.read())
        except (OSError, ValueError, EOFError) as e:  # JSONDecodeError and UnicodeError are ValueErrors
            self.errors.append(f"cannot read the trace: {e}")
            return None
        events = doc if isinstance(doc, list) else doc.get("traceEvents") if isinstance(doc, dict) else None
        if not isinstance(events, list):
            self.errors.append("not a trace: neither an array of events nor an object with a "
                               "traceEvents array")
            return None
        return doc, events

    def count(self, events):
        ev = self.report["events"]
        ev["total"] = len(events)
        self.process_names, self.thread_names = {}, {}
        self.given = Counter()  # (pid, tid) -> complete events HTA should parse
        for e in events:
            if not isinstance(e, dict):
                ev["other"] += 1
                continue
            ph = e.get("ph")
            if ph == "X":
                ev["complete"] += 1
                if e.get("cat") == "Trace":
                    ev["trace_spans"] += 1  # Kineto's span of the whole trace; HTA drops it by design
                elif not isinstance(e.get("ts"), (int, float)) or not isinstance(e.get("dur"), (int, float)):
                    self.errors.append(f"complete event {e.get('name')!r} at {e.get('pid')}/{e.get('tid')} "
                                       f"has no numeric ts and dur: {json.dumps(e)[:200]}")
                elif e["dur"] < 0:
                    self.errors.append(f"complete event {e.get('name')!r} at {e.get('pid')}/{e.get('tid')} "
                                       f"has a negative duration: ts {e['ts']} us, dur {e['dur']} us")
                elif not e.get("cat"):
                    self.errors.append(f"complete event {e.get('name')!r} at {e.get('pid')}/{e.get('tid')} "
                                       f"has no category (HTA drops such events)")
                else:
                    self.given[(e.get("pid"), e.get("tid"))] += 1
            elif ph == "M":
                ev["metadata"] += 1
                name = (e.get("args") or {}).get("name")
                if e.get("name") == "process_name":
                    self.process_names[e.get("pid")] = name
                elif e.get("name") == "thread_name":
                    self.thread_names[(e.get("pid"), e.get("tid"))] = name
            else:
                ev["other"] += 1
        if not events:
            self.errors.append("no events")
        elif not ev["complete"]:
            self.errors.append('no complete ("X") events')

    # --- HTA ---------------------------------------------------------------------------------------

    def hta_path(self, doc, events, tmp):
        """A file HTA reads: the trace itself, or a copy in the form HTA needs (see the module comment)."""
        if isinstance(doc, dict) and (self.path.endswith(".json") or self.path.endswith(".gz")):
            return os.path.abspath(self.path)
        copy = os.path.join(tmp, "rank0.json")
        body = dict(doc) if isinstance(doc, dict) else {}
        body["traceEvents"] = events
        with open(copy, "w") as f:
            json.dump(body, f)
        return copy

    def parse(self, doc, events):
        from importlib.metadata import version
        self.report["parser"]["version"] = version("HolisticTraceAnalysis")
        from hta.common.trace import Trace
        with tempfile.TemporaryDirectory(prefix="check_trace.") as tmp:
            path = self.hta_path(doc, events, tmp)
            # Rank 0 named here, so HTA never looks for a "distributedInfo" rank in the file.
            trace = Trace(trace_files={0: path}, trace_dir=os.path.dirname(path))
            trace.parse_traces(use_multiprocessing=False)
        if 0 not in trace.traces:
            raise RuntimeError("HTA parsed no trace for rank 0")
        return trace

    def check(self):
        loaded = self.read_raw()
        if loaded is None:
            return self.finish()
        doc, events = loaded
        self.count(events)
        if not events:
            return self.finish()
        try:
            import hta.common.trace  # noqa: F401
        except Exception as e:  # a missing or broken install is no finding about the trace
            self.errors.append(f"cannot load HTA: {type(e).__name__}: {e}")
            return self.finish()
        try:
            trace = self.parse(doc, events)
            self.model(trace)
        except Exception as e:  # whatever HTA throws is the finding, with where in HTA it threw
            import traceback
            inside = os.sep + "hta" + os.sep
            frames = [f for f in traceback.extract_tb(e.__traceback__) if inside in f.filename]
            at = ""
            if frames:
                f = frames[-1]
                at = f" (in HTA at {f.filename.split(inside)[-1]}:{f.lineno}, {f.name})"
            self.errors.append(f"HTA rejected the trace: {type(e).__name__}: {e}{at}")
        return self.finish()

    def model(self, trace):
        from hta.common.trace import get_cpu_gpu_correlation

        df = trace.get_trace(0)
        names = trace.symbol_table.get_sym_table()
        if df.empty:
            self.errors.append("HTA parsed no events with a duration")
            return
        # Whole nanoseconds for everything below (see the module comment).
        df = df.copy()
        df["ts"] = [ns(v) for v in df["ts"]]
        df["dur"] = [ns(v) for v in df["dur"]]
        df["end"] = df["ts"] + df["dur"]
        lo, hi = int(df["ts"].min()), int(df["end"].max())
        self.report["bounds_us"] = {"min": us(lo), "max": us(hi), "range": us(hi - lo)}

        name_of = {int(i): names[int(n)] for i, n in zip(df["index"], df["name"])}
        cats = df["cat"].map(lambda c: names[int(c)])
        ops = Counter(df.loc[cats.isin(CPU_OP_CATEGORIES), "name"].map(lambda c: names[int(c)]))
        self.report["ops"] = dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0])))

        correlation = get_cpu_gpu_correlation(df)
        by_pid = defaultdict(list)
        seen = set()
        # sort=False: Kineto mixes string and integer pids / tids, which pandas cannot sort.
        for ordinal, ((pid, tid), df_thread) in enumerate(df.groupby(["pid", "tid"], sort=False)):
            pid, tid = json_value(pid), json_value(tid)
            seen.add((pid, tid))
            by_pid[pid].append(self.thread(ordinal, pid, tid, df_thread, df, correlation, trace, name_of))
        for (pid, tid), n in self.given.items():
            if (pid, tid) not in seen:
                self.errors.append(f"thread {pid}/{tid}: {n} complete events given, HTA parsed none")
                by_pid[pid].append({"tid": tid, "name": self.thread_names.get((pid, tid)), "complete": n,
                                    "modelled": 0, "roots": 0, "max_depth": 0, "dropped": n})
        for pid, threads in by_pid.items():
            self.report["processes"].append(
                {"pid": pid, "name": self.process_names.get(pid), "threads": threads})

    def thread(self, ordinal, pid, tid, df_thread, df, correlation, trace, name_of):
        from hta.common.trace_call_stack import CallStackGraph, CallStackIdentity
        patch_hta_for_pandas3()

        t = {"tid": tid, "name": self.thread_names.get((pid, tid)), "complete": self.given.get((pid, tid), 0),
             "modelled": 0, "roots": 0, "max_depth": 0, "dropped": 0}
        where = f"thread {pid}/{tid}"
        if t["complete"] != len(df_thread):
            self.errors.append(f"{where}: {t['complete']} complete events given, HTA parsed {len(df_thread)}")
        cpu = df_thread[df_thread["stream"].eq(-1)]
        gpu = df_thread[df_thread["stream"].ne(-1)]
        if len(gpu):
            # A GPU stream: HTA builds no call stack for one (its kernels are a flat list).
            t["modelled"] += len(gpu)
            t["roots"] += len(gpu)
            t["max_depth"] = max(t["max_depth"], 1)
        if cpu.empty:
            return t

        span = {int(i): (int(s), int(e)) for i, s, e in zip(cpu["index"], cpu["ts"], cpu["end"])}

        def show(i):
            s, e = span[i]
            return f"{name_of[i]} (ts {us(s)} us, dur {us(e - s)} us)"

        # The events that overlap their parent: a stack walk in order of start, the longer first,
        # the earlier in the file first at equal spans. A zero-length event at its parent's end is
        # inside it (as HTA orders them).
        order = sorted(span, key=lambda i: (span[i][0], -(span[i][1] - span[i][0]), i))
        stack, overlapping = [], []
        for i in order:
            s, e = span[i]
            while stack and (span[stack[-1]][1] < s or (span[stack[-1]][1] == s and e > s)):
                stack.pop()
            if stack and e > span[stack[-1]][1]:
                overlapping.append((i, stack[-1]))
                continue
            stack.append(i)
        for i, parent in overlapping[:MAX_NAMED]:
            self.errors.append(f"{where}: {show(i)} overlaps its parent {show(parent)}: it starts inside "
                               f"it and ends {us(span[i][1] - span[parent][1])} us after it, instead of "
                               f"nesting inside it")
        if len(overlapping) > MAX_NAMED:
            self.errors.append(f"{where}: and {len(overlapping) - MAX_NAMED} more events that overlap "
                               f"their parent")
        dropped = {i for i, _ in overlapping}

        # HTA's call stack of the rest; the identity's tid is a stand-in number (module comment).
        kept = cpu[~cpu["index"].isin(dropped)]
        csg = CallStackGraph(kept, CallStackIdentity(0, ordinal + 1, ordinal + 1), correlation, df,
                             trace.symbol_table, nodes={}, use_existing_stack_columns=False,
                             save_call_stack_to_df=False)
        nodes, root = csg.get_nodes(), csg.root_index
        misplaced = []
        for i in kept["index"]:
            i = int(i)
            node = nodes.get(i)
            if node is None:
                misplaced.append(f"{show(i)} is not in HTA's call stack")
                continue
            if node.parent != root:
                p = int(node.parent)
                if p not in span or not (span[p][0] <= span[i][0] and span[i][1] <= span[p][1]):
                    misplaced.append(f"HTA put {show(i)} under "
                                     f"{show(p) if p in span else f'event {p}'}, which does not hold it")
                    continue
            t["modelled"] += 1
            t["max_depth"] = max(t["max_depth"], node.depth + 1)  # HTA: depth 0 = a root; here roots are 1
        t["roots"] += sum(1 for c in nodes[root].children if int(c) in span)
        for m in misplaced[:MAX_NAMED]:
            self.errors.append(f"{where}: {m}")
        if len(misplaced) > MAX_NAMED:
            self.errors.append(f"{where}: and {len(misplaced) - MAX_NAMED} more events misplaced in "
                               f"HTA's call stack")
        t["dropped"] = len(dropped) + len(misplaced)
        return t


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        sys.stderr.write("usage: check_trace.py FILE.trace.json\n")
        return 2
    # The report is the only thing on stdout: HTA logs to sys.stdout (its logging.config), so fd 1
    # points at stderr from here on and the report is written to a copy of the original.
    sys.stdout.flush()
    out = os.dup(1)
    os.dup2(2, 1)
    return Checker(argv[1], out).check()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
