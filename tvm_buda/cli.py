"""The `tvm-buda` command line."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path


def _demo(args) -> int:
    from .demo import run_demo

    print("tvm-buda demo: built-in models compiled for the simulated buda device\n")
    ok = run_demo(only=args.model)
    print("\nall outputs pass PyBuda's rule (allclose atol=0.1*max|golden| or PCC>=0.99)" if ok
          else "\nSOME OUTPUTS FAILED PyBuda's accuracy rule")
    return 0 if ok else 1


def _cache_dir(args) -> Path:
    from buda_runtime_sim.config import CompilerConfig

    from .cache import default_cache_dir

    return Path(args.dir) if args.dir else default_cache_dir(CompilerConfig())


def _cache_list(args) -> int:
    from .cache import list_entries

    entries = list_entries(_cache_dir(args))
    if not entries:
        print(f"no cache entries in {_cache_dir(args)}")
        return 0
    print(f"{'key':<26} {'model':<24} {'framework':<10} {'MB':>8}  {'created':<20} status")
    for e in entries:
        print(f"{e['key']:<26} {str(e.get('model', '?')):<24} {str(e.get('framework', '?')):<10} "
              f"{e['size_bytes'] / 1e6:>8.1f}  {str(e.get('created', '?')):<20} {e['status']}")
    return 0


def _cache_info(args) -> int:
    from .cache import InvalidEntry, read_entry

    try:
        entry = read_entry(_cache_dir(args), args.key)
        status = "valid"
    except FileNotFoundError:
        raise RuntimeError(f"no cache entry {args.key} in {_cache_dir(args)} (see `tvm-buda cache list`)") from None
    except InvalidEntry as exc:
        print(f"entry {args.key}: INVALID ({exc})")
        return 1
    m = entry.manifest
    print(f"entry {args.key}: {status}\n  path: {entry.root}\n  model: {m['model_name']} ({m['framework']})")
    print(f"  inputs: {', '.join(f'{n} {tuple(s)} {d}' for n, s, d in m['inputs'])}")
    print(f"  versions: {m['versions']}\n  created: {m['created']}")
    print(f"  device subgraphs: {', '.join(sg['module_name'] for sg in m['subgraphs']) or 'none'}")
    print(f"  files: {len(m['checksums'])} (all checksums match)")
    return 0


def _cache_clear(args) -> int:
    from .cache import list_entries, remove_entry

    directory = _cache_dir(args)
    keys = [args.key] if args.key else [e["key"] for e in list_entries(directory)]
    if args.key and not (directory / args.key).is_dir():
        raise RuntimeError(f"no cache entry {args.key} in {directory} (see `tvm-buda cache list`)")
    for key in keys:
        remove_entry(directory, key)
    print(f"removed {len(keys)} cache entr{'y' if len(keys) == 1 else 'ies'} from {directory}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tvm-buda", description="Compile and run models on a simulated Tenstorrent device.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compile built-in models, run them on the simulator, print accuracy")
    demo.add_argument("--model", help="run only this demo model")
    demo.set_defaults(func=_demo)

    cache = sub.add_parser("cache", help="inspect and clear the TVM cache (PYBUDA_ENABLE_TVM_CACHE)")
    cache_sub = cache.add_subparsers(dest="cache_command", required=True)
    for name, func, helptext in (("list", _cache_list, "list cache entries"),
                                 ("info", _cache_info, "show one entry and verify its files"),
                                 ("clear", _cache_clear, "remove one entry, or all of them")):
        p = cache_sub.add_parser(name, help=helptext)
        if name == "info":
            p.add_argument("key", help="entry key (from `tvm-buda cache list`)")
        if name == "clear":
            p.add_argument("key", nargs="?", help="entry key; omit to clear every entry")
        p.add_argument("--dir", help="cache directory (default: generated_modules/tvm_cache)")
        p.set_defaults(func=func)
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
