"""The `tvm-buda` command line."""

from __future__ import annotations

import argparse
import sys
import warnings


def _demo(args) -> int:
    from .demo import run_demo

    print("tvm-buda demo: built-in models compiled for the simulated buda device\n")
    ok = run_demo(only=args.model)
    print("\nall outputs pass PyBuda's rule (allclose atol=0.1*max|golden| or PCC>=0.99)" if ok
          else "\nSOME OUTPUTS FAILED PyBuda's accuracy rule")
    return 0 if ok else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tvm-buda", description="Compile and run models on a simulated Tenstorrent device.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compile built-in models, run them on the simulator, print accuracy")
    demo.add_argument("--model", help="run only this demo model")
    demo.set_defaults(func=_demo)
    return parser


def main(argv=None) -> int:
    warnings.filterwarnings("ignore", message=r".*LeafSpec.*", category=FutureWarning)  # torch.export noise
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - one clear line, non-zero exit
        print(f"tvm-buda {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
