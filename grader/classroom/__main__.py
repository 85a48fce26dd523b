"""`python -m grader.classroom ...`, the same as `devcourse classroom ...`."""

import argparse
import sys

from grader.classroom.cli import add_parser


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m grader.classroom")
    sub = p.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = p.parse_args(["classroom", *(sys.argv[1:] if argv is None else argv)])
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
