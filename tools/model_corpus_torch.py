#!/usr/bin/env python3
"""What libtorch alone does with each file of a corpus (tools/model_corpus.py): what a run would
have measured without Pitlane's model check. Each file is loaded by torch.jit.load (the same C++
reader and unpickler as the worker's libtorch) in a forked child with a time limit, then run on
a fixed input; its output is compared with the intact model's, bit for bit. With the checker's
verdicts from results.tsv (tools/model_corpus_run.sh), it tallies the refused files libtorch
would have loaded and run, and how many of those computed something else.

usage: .venv/bin/python tools/model_corpus_torch.py CORPUS_DIR [--timeout 30]   (the pinned torch)
"""
import argparse
import collections
import csv
import json
import os
import signal
import sys

import torch


def child(path, shape, reference, timeout):
    signal.alarm(timeout)
    try:
        m = torch.jit.load(path)
    except Exception:
        os._exit(10)  # load refused
    try:
        torch.manual_seed(0)
        out = m(torch.randn([1] + shape))
    except Exception:
        os._exit(11)  # forward refused
    same = isinstance(out, torch.Tensor) and out.shape == reference.shape and \
        torch.equal(out, reference)
    os._exit(0 if same else 12)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--timeout", type=int, default=30)
    a = ap.parse_args()
    torch.set_num_threads(1)  # no OpenMP pool in the parent: forked children would inherit it
    manifest = json.load(open(os.path.join(a.corpus, "corpus.json")))
    verdicts = {r["name"]: r for r in csv.DictReader(
        open(os.path.join(a.corpus, "results.tsv")), delimiter="\t")}
    shape = json.load(open(os.path.join(a.corpus, next(iter(manifest["files"])) + ".json")))
    shape = shape["input"][0]["shape"]
    torch.manual_seed(0)
    reference = torch.jit.load(manifest["model"])(torch.randn([1] + shape))
    names = {0: "ran, same output", 10: "load failed", 11: "forward failed",
             12: "ran, DIFFERENT output"}
    tally = collections.Counter()
    by_kind = collections.Counter()
    rows = open(os.path.join(a.corpus, "torch_alone.tsv"), "w")
    rows.write("name\tkind\tchecker\tlibtorch\n")
    for name in sorted(manifest["files"]):
        pid = os.fork()
        if pid == 0:
            child(os.path.join(a.corpus, name + ".pt"), shape, reference, a.timeout)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            what = "hang (killed after the time limit)" if sig == signal.SIGALRM \
                else f"crash (signal {sig})"
        else:
            what = names.get(os.WEXITSTATUS(status), f"exit {os.WEXITSTATUS(status)}")
        v = verdicts.get(name)
        checker = "accepted" if v and v["validate_rc"] == "0" else \
            f"refused {v['validate_code']}" if v else "not checked"
        tally[(checker, what)] += 1
        kind = manifest["files"][name]["kind"]
        by_kind[(kind, checker.split()[0], what)] += 1
        rows.write(f"{name}\t{kind}\t{checker}\t{what}\n")
    out = {f"{c} / libtorch: {w}": n for (c, w), n in sorted(tally.items())}
    out["by kind"] = {f"{k}: {c} / libtorch: {w}": n for (k, c, w), n in sorted(by_kind.items())}
    json.dump(out, open(os.path.join(a.corpus, "torch_alone.json"), "w"), indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    sys.exit(main())
