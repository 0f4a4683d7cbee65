#!/usr/bin/env python3
"""Compile a torch.export program into an AOTInductor package for Pitlane (issue 40, knob
`compile: "aoti"`). Run by pitlane-cli / the window (session/compile_step.h) with the project's
Python; usable by hand:

  compile_exported.py --program IN.pt2 --out OUT.pt2 \
      --options '{"freezing": false, "max_autotune": false, "dynamic_threads": true}' \
      [--device cpu] [--metadata '{"batch": "dynamic 1-1024", "input": "[...]"}']
  compile_exported.py --torch-version

Progress goes to stdout as JSON lines, one object each: {"stage": "loading"},
{"stage": "compiling"}, {"stage": "done", "seconds": S, "package": OUT, "torch": VERSION}.
On failure the exit status is 1 and the last line is {"error": REASON}: the exception's type
and the first meaningful line(s) of its message, never a traceback (that goes to stderr).
Whatever torch, Inductor or the C++ compiler print goes to stderr: stdout carries the protocol
alone. --torch-version prints {"torch": VERSION} without importing torch (fast: the caller
needs it for its cache key before deciding to compile).

The options are torch._inductor.config's `freezing`, `max_autotune` and `cpp.dynamic_threads`.
The package's metadata (aot_inductor.metadata) records torch_version, pitlane_compile (the
options as JSON) and, when given, batch and input, as tools/export_packages.py's packages do.
The package is written to a temporary file beside OUT, then renamed: an interrupted compile never
leaves a half package under OUT's name. Set TORCHINDUCTOR_CACHE_DIR and TMPDIR to keep Inductor's
files where the caller wants them.

A program is untrusted data: torch.export.load unpickles pickled weights and constants with
weights_only=False, and retries example inputs that way when the safe load fails, so a program's
pickle could run any code. This script sets TORCH_FORCE_WEIGHTS_ONLY_LOAD before torch is
imported: every torch.load unpickles tensors and plain containers only, and a pickle that names
anything else (os.system) is refused with its name. Pitlane also runs the script confined
(pitlane-worker --sandbox-exec: session/compile_step.h).
"""
import argparse
import json
import logging
import os
import sys
import time

OPTION_CONFIG = {  # Pitlane's option name -> torch._inductor.config key
    "freezing": "freezing",
    "max_autotune": "max_autotune",
    "dynamic_threads": "cpp.dynamic_threads",
}
MAX_LINE = 300  # characters of one reason line


def protocol_stream():
    """The real stdout for our JSON lines; fd 1 then points at stderr, so nothing that torch,
    Inductor or a compiler prints can corrupt the protocol."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def emit(out, obj):
    out.write(json.dumps(obj) + "\n")
    out.flush()


class LoggedErrors(logging.Handler):
    """Exceptions torch logs instead of raising: torch.export.load logs why it could not
    deserialize a program ("Ran into the following error ...") and raises a RuntimeError that only
    says "check the warnings above"."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.exceptions = []

    def emit(self, record):
        if record.exc_info and record.exc_info[1] is not None:
            self.exceptions.append(record.exc_info[1])


def root_cause(exc):
    """The innermost exception of a chain (raise ... from ...)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        nxt = exc.__cause__ or exc.__context__
        if nxt is None:
            return exc
        exc = nxt
    return exc


def reason(exc):
    """The exception's type and the first meaningful line(s) of its message (at most two)."""
    lines = []
    for line in str(exc).splitlines():
        line = line.strip()
        if not line or line.startswith(("Traceback", "File \"", "Set TORCH_LOGS", "While executing",
                                         "Original traceback", "You can suppress", "Explanation:")):
            continue
        lines.append(line[:MAX_LINE])
        if len(lines) == 2:
            break
    text = type(exc).__name__
    return text + (": " + " / ".join(lines) if lines else "")


def refused_pickle(exc):
    """The reason for a pickle the weights-only unpickler refused: the global it named."""
    for line in str(exc).splitlines():
        if "GLOBAL" in line:
            return (f"the program holds a pickle that would call code ({line.strip()[:MAX_LINE]}): refused, "
                    f"never run (compile_exported.py unpickles tensors only)")
    return None


def torch_version():
    """torch.__version__ without importing torch (torch/version.py; "2.11.0+cu130")."""
    import importlib.util
    import re
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("No module named 'torch'", name="torch")
    path = os.path.join(list(spec.submodule_search_locations)[0], "version.py")
    with open(path, encoding="utf-8") as f:
        found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", f.read(), re.M)
    if not found:
        raise ValueError(f"{path} does not say torch's __version__")
    return found.group(1)


def parse_options(text):
    try:
        options = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"--options is not JSON: {e}") from None
    if not isinstance(options, dict):
        raise ValueError("--options must be a JSON object")
    unknown = sorted(set(options) - set(OPTION_CONFIG))
    if unknown:
        raise ValueError(f"--options: unknown option(s) {', '.join(unknown)} "
                         f"(known: {', '.join(OPTION_CONFIG)})")
    for k, v in options.items():
        if not isinstance(v, bool):
            raise ValueError(f"--options: {k} must be true or false, not {json.dumps(v)}")
    return options


def program_device(ep):
    """Where the program's weights live ("cpu" when it has none)."""
    for t in list(ep.state_dict.values()) + list(ep.constants.values()):
        if hasattr(t, "device"):
            return t.device.type
    return "cpu"


def compile_program(args, out):
    import torch  # noqa: F401 (imported here: a missing torch is a reason, not a traceback)
    import torch._inductor

    options = parse_options(args.options)
    metadata = json.loads(args.metadata) if args.metadata else {}
    if not isinstance(metadata, dict):
        raise ValueError("--metadata must be a JSON object")
    emit(out, {"stage": "loading"})
    ep = torch.export.load(args.program)
    device = program_device(ep)
    wanted = args.device.split(":")[0]
    if device != wanted:
        raise ValueError(f"the program's weights are on {device}, the arm's device is {args.device}: "
                         f"export the program on {wanted} to compile it for {wanted}")
    meta = {k: str(v) for k, v in metadata.items() if k in ("batch", "input")}
    meta["torch_version"] = torch.__version__
    meta["pitlane_compile"] = json.dumps(options, sort_keys=True)
    configs = {"aot_inductor.metadata": meta}
    if meta.get("batch", "").startswith("dynamic 1-"):
        # Inductor's 0/1 specialization makes the package demand a batch >= 2 although the
        # program takes 1 (tools/export_packages.py): check no lower bound, the upper one stays.
        configs["aot_inductor.check_lowerbound"] = False
    patch = {OPTION_CONFIG[k]: v for k, v in options.items()}
    emit(out, {"stage": "compiling"})
    t0 = time.monotonic()
    tmp = f"{args.out}.{os.getpid()}.partial.pt2"  # inductor insists on a .pt2 suffix
    try:
        # Under no_grad: Inductor applies freezing only when grad is off (compile_fx.py: "if
        # config.freezing and not torch.is_grad_enabled()"); with grad on, freezing=True compiled
        # the same package as freezing=False (resnet18: 20 plain convolutions either way).
        with torch.no_grad(), torch._inductor.config.patch(patch):
            torch._inductor.aoti_compile_and_package(ep, package_path=tmp, inductor_configs=configs)
        os.replace(tmp, args.out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    emit(out, {"stage": "done", "seconds": round(time.monotonic() - t0, 3), "package": args.out,
               "torch": torch.__version__})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--program")
    parser.add_argument("--out")
    parser.add_argument("--options", default="{}")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--metadata", default="")
    parser.add_argument("--torch-version", action="store_true")
    args = parser.parse_args()
    # Before torch is imported: no pickle in the program runs code (see above).
    os.environ["TORCH_FORCE_WEIGHTS_ONLY_LOAD"] = "1"
    os.environ.pop("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", None)
    out = protocol_stream()
    logged = LoggedErrors()
    for name in ("", "torch", "torch.export"):  # torch's loggers do not all propagate to the root
        logging.getLogger(name).addHandler(logged)
    try:
        if args.torch_version:
            emit(out, {"torch": torch_version()})
            return 0
        if not args.program or not args.out:
            raise ValueError("--program and --out are required")
        compile_program(args, out)
        return 0
    except BaseException as e:  # noqa: B902 (KeyboardInterrupt and SystemExit are reasons too)
        import traceback
        traceback.print_exc()
        if isinstance(e, ModuleNotFoundError) and e.name in ("torch", "torch._inductor"):
            emit(out, {"error": f"{sys.executable} has no torch ({reason(e)}): use the project's "
                                f"venv or set PITLANE_PYTHON to a Python with torch"})
        elif refused_pickle(e):
            emit(out, {"error": refused_pickle(e)})
        elif logged.exceptions and "warnings above" in str(e):
            emit(out, {"error": reason(root_cause(logged.exceptions[-1]))})
        else:
            emit(out, {"error": reason(e)})
        return 1


if __name__ == "__main__":
    sys.exit(main())
