"""The `devcourse doctor` command: its arguments, and what it prints (grader.cli adds it)."""

from __future__ import annotations

import argparse
import json
import os

from rich.console import Console
from rich.text import Text

from grader.doctor import DEFAULT_STEPS, DEFAULT_TIMEOUT, diagnose, render

HELP = "run your own training script, each loop cut short, and report its device problems, line by line"


def available_devices() -> str:
    return "sim:0, sim:1 (the simulated accelerator), cuda:N where there is a GPU, cpu"


def add_parser(sub, func=None) -> None:
    d = sub.add_parser("doctor", help=HELP, description=(
        "Run SCRIPT (with ARGS, as `python SCRIPT ARGS` would) on the simulated accelerator (or --device cuda:0), "
        "each of its loops that works on the device cut after a few iterations so that every phase runs "
        "(training, evaluation, saving, loading, serving), and report each device problem at the line to fix "
        "with the book's section that explains it. The script runs isolated, reading your files and writing into a temporary copy of this folder."))
    d.add_argument("--device", default="sim:1", help="where to run it: sim:1 (default, so that a lost device "
                   "index shows), sim:0, cuda:0 where there is a GPU, or cpu")
    d.add_argument("--steps", type=int, default=DEFAULT_STEPS,
                   help=f"cut each loop that works on the device after N iterations (default {DEFAULT_STEPS})")
    d.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                   help=f"seconds of CPU time it may take (default {DEFAULT_TIMEOUT:g})")
    d.add_argument("--profile", choices=("cuda", "mps"), default="cuda",
                   help="what the simulated accelerator can hold: mps refuses float64, as Apple's GPUs do")
    out = d.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the result as JSON")
    out.add_argument("--sarif", metavar="FILE",
                     help="write SARIF 2.1.0 (for editors and code scanning) to FILE (-: print it)")
    d.add_argument("script", help="the Python script to run")
    d.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    d.set_defaults(func=func or run)


class UsageError(Exception):
    pass


def check_device(device: str) -> str:
    import re

    if not re.fullmatch(r"(sim(:[01])?|cuda(:\d+)?|cpu|mps)", device):
        raise UsageError(f"--device {device}: choose one of {available_devices()}.")
    if device == "sim":
        device = "sim:1"
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UsageError(f"--device {device}: this machine has no CUDA GPU. Leave --device out to run on the "
                             "simulated accelerator (sim:1).")
    return device


def run(args, console: Console | None = None) -> int:
    from grader.learner.targets import UsageError as CliUsageError

    console = console or Console(highlight=False)
    if args.steps < 1:
        raise CliUsageError("--steps must be 1 or more.")
    try:
        device = check_device(args.device)
    except UsageError as exc:
        raise CliUsageError(str(exc)) from None
    if not os.path.isfile(args.script):
        raise CliUsageError(f"{args.script}: no such file. Give the path of your Python script.")
    if not (args.json or args.sarif):
        console.print(Text(f"Running {args.script} on {device}, each loop cut after {args.steps} iterations ...",
                           style="dim"))
    result = diagnose(args.script, args.args, device=device, steps=args.steps, timeout=args.timeout,
                      profile=args.profile)
    if args.json:
        print(json.dumps(result, indent=1))
    elif args.sarif:
        text = json.dumps(render.sarif(result), indent=1)
        if args.sarif == "-":
            print(text)
        else:
            with open(args.sarif, "w", encoding="utf-8") as f:
                f.write(text + "\n")
            console.print(Text(f"SARIF written to {args.sarif}: {len(result['findings'])} findings.", style="dim"))
    else:
        render.print_report(console, result)
    return render.exit_status(result)
