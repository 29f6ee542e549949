"""The `tvm-buda` command line."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

from .cli_compile import COMPILE_STAGES, compile_file, model_config_inputs


def _demo(args) -> int:
    from .demo import run_demo

    print("tvm-buda demo: built-in models compiled for the simulated buda device\n")
    ok = run_demo(only=args.model)
    print("\nall outputs pass PyBuda's rule (allclose atol=0.1*max|golden| or PCC>=0.99)" if ok
          else "\nSOME OUTPUTS FAILED PyBuda's accuracy rule")
    return 0 if ok else 1


def _explain(args, run: bool) -> int:
    """--explain: the per-op report (stage reached, each op's placement, shapes and formats; after a
    run, each device op against float32 and the outputs against the framework); 1 if anything failed."""
    from .explain_model import explain

    path, config, _, inputs = model_config_inputs(args)
    report = explain(str(path), tuple(inputs), config=config, name=args.name, run=run)
    print(report.format())
    return 1 if report.failed else 0


def _compile(args) -> int:
    if args.explain:
        return _explain(args, run=False)
    compiled, _, _ = compile_file(args, COMPILE_STAGES)
    print(f"compiled {compiled.name} ({compiled.framework}) for the buda device")
    print(compiled.partition_summary())
    print("generated modules:")
    for path in compiled.generated_files:
        if path.suffix == ".py":
            print(f"  {path}")
    if args.graph:
        print(f"partition graph: {compiled.partition_summary().write_graph(args.graph)}")
    return 0


def _run(args) -> int:
    import numpy as np

    from buda_runtime_sim.verify import compare

    from .model_files import reference_outputs

    if args.explain:
        return _explain(args, run=True)
    compiled, names, inputs = compile_file(args, COMPILE_STAGES)
    outputs = compiled.run(*inputs)
    outputs = list(outputs.values()) if isinstance(outputs, dict) else list(outputs) \
        if isinstance(outputs, (tuple, list)) else [outputs]
    golden = reference_outputs(Path(args.model), inputs)
    ok = True
    print(f"{compiled.name}: inputs {', '.join(f'{n}{tuple(a.shape)}' for n, a in zip(names, inputs))}")
    for i, (out, ref) in enumerate(zip(outputs, golden)):
        result = compare(np.asarray(out), ref)
        ok &= result.passed
        print(f"  output {i} {tuple(np.shape(ref))}: {result}")
    return 0 if ok else 1


def _report(args) -> int:
    board = args.device_config or {"grayskull": "gs_e150", "wormhole_b0": "wh_n150"}.get(args.arch)
    if args.num_chips:   # a chip count the board cannot give fails before compiling
        from buda_runtime_sim.perf import PlacementConfig

        PlacementConfig(board or "wh_n150", num_chips=args.num_chips).board()
    compiled, _, _ = compile_file(args, COMPILE_STAGES)
    report = compiled.perf_report(board, args.microbatch, num_chips=args.num_chips or None)
    print(report)
    out = Path(args.out)
    files = report.save(out)
    print("\nwritten: " + ", ".join(str(f) for f in files))
    if args.html:
        from .reports import report_dir

        print(f"web report: {report_dir() / 'index.html'} (serve it with `tvm-buda reportify`)")
    return 0


def _reportify(args) -> int:
    from .reports import report_dir
    from .reports.server import make_server

    server = make_server(Path(args.dir) if args.dir else report_dir(), args.port)
    print(f"Reportify at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


def _add_model_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="model file: .onnx, .tflite, .pt2 (torch.export.save) or a SavedModel directory")
    p.add_argument("--framework", choices=["onnx", "tflite", "pytorch", "tensorflow"],
                   help="framework of MODEL (default: from the file type)")
    p.add_argument("--input-shape", action="append", metavar="[NAME=]DIMS",
                   help="input shape like 1x3x224x224 (repeat per input; needed for unknown dims)")
    p.add_argument("--arch", choices=["grayskull", "wormhole_b0"], help="device architecture (sets the default board)")
    p.add_argument("--device-config", choices=["gs_e75", "gs_e150", "wh_n150", "wh_n300"],
                   help="board for the perf estimate")
    p.add_argument("--df", help="default data format, e.g. Float16_b, Bfp8_b")
    p.add_argument("--fidelity", help="math fidelity: LoFi, HiFi2, HiFi3, HiFi4")
    p.add_argument("--name", help="model name (names the generated modules; default: the file name)")
    p.add_argument("--no-fallback", action="store_true", help="fail instead of running unsupported ops on the host")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


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
    from .cache import InvalidEntry, open_entry

    try:
        image = open_entry(_cache_dir(args), args.key)
    except FileNotFoundError:
        raise RuntimeError(f"no cache entry {args.key} in {_cache_dir(args)} (see `tvm-buda cache list`)") from None
    except InvalidEntry as exc:
        print(f"entry {args.key}: INVALID ({exc})")
        return 1
    model, device = image.model(), image.device
    print(f"entry {args.key}: valid\n  path: {image.path}\n  model: {model['name']} ({model['framework']})")
    inputs = ", ".join(f"{i['name']} {tuple(i['shape'])} {i['dtype']}" for i in model["inputs"])
    print(f"  inputs: {inputs}")
    print(f"  versions: {device['versions']}\n  created: {device['created']}")
    print(f"  device subgraphs: {', '.join(sg['module_name'] for sg in model['subgraphs']) or 'none'}")
    print(f"  a TT device image: {len(device['members'])} members (all checksums match); "
          f"`tvm-buda image info {image.path}` shows the rest")
    return 0


def _cache_clear(args) -> int:
    from .cache import entry_keys, remove_entry

    directory = _cache_dir(args)
    keys = [args.key] if args.key else entry_keys(directory)
    if args.key and not remove_entry(directory, args.key):
        raise RuntimeError(f"no cache entry {args.key} in {directory} (see `tvm-buda cache list`)")
    for key in keys:
        remove_entry(directory, key)
    print(f"removed {len(keys)} cache entr{'y' if len(keys) == 1 else 'ies'} from {directory}")
    return 0


def _perf_analyzer(args) -> int:
    from perf_analyzer import main as analyzer

    argv = [args.report] if args.report else []
    argv += ["-n", args.netlist] if args.netlist else []
    argv += ["--load", args.load] if args.load else []
    return analyzer(argv)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tvm-buda", description="Compile and run models on a simulated Tenstorrent device.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compile built-in models, run them on the simulator, print accuracy")
    demo.add_argument("--model", help="run only this demo model")
    demo.set_defaults(func=_demo)

    compile_p = sub.add_parser("compile", help="compile a model file and print the partition")
    _add_model_arguments(compile_p)
    compile_p.add_argument("--graph", metavar="PATH", help="also write the partition graph (PATH.dot, .png with graphviz)")
    compile_p.add_argument("--explain", action="store_true",
                           help="per-op report: the stage that fails and the op it names, or every op with its "
                                "placement (device/host), shapes and formats")
    compile_p.set_defaults(func=_compile)
    run_p = sub.add_parser("run", help="compile a model file, run it on random inputs, compare with its framework")
    _add_model_arguments(run_p)
    run_p.add_argument("--explain", action="store_true",
                       help="per-op report: every op's placement, shapes and formats, each device op's output against "
                            "float32 and the first that departs, the outputs against the framework")
    run_p.set_defaults(func=_run)
    report_p = sub.add_parser("report", help="compile a model file and print/write its performance estimate")
    _add_model_arguments(report_p)
    report_p.add_argument("--microbatch", type=int, help="samples per microbatch (default: the compiled batch)")
    report_p.add_argument("--num-chips", type=int, default=0,
                          help="chips of the board to split the model over (default 0: all; wh_n300 has 2)")
    report_p.add_argument("--out", default="perf_report", help="directory for report.json and placement PNGs")
    report_p.add_argument("--html", action="store_true", help="also write the Reportify web report (PYBUDA_REPORTIFY_DIR)")
    report_p.set_defaults(func=_report)

    reportify = sub.add_parser("reportify", help="serve the Reportify web report on 127.0.0.1")
    reportify.add_argument("dir", nargs="?", help="report folder (default: reportify/ or PYBUDA_REPORTIFY_DIR)")
    reportify.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    reportify.set_defaults(func=_reportify)

    analyzer = sub.add_parser("perf-analyzer", help="browse a perf report in the terminal (epochs, slowest ops)")
    analyzer.add_argument("report", nargs="?", help="a <model>_perf.json written by `tvm-buda report` or PerfReport.save")
    analyzer.add_argument("-n", "--netlist", help="model name: finds <name>_perf.json in ., perf/, reportify/")
    analyzer.add_argument("--load", help="data saved with `python -m pybuda.tools.perf_analysis --save`")
    analyzer.set_defaults(func=_perf_analyzer)

    from .cli_image import add_image_commands

    add_image_commands(sub, _add_model_arguments)

    from .cli_sweep import add_sweep_command

    add_sweep_command(sub)

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
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TensorFlow's C++ logging, if a model needs it
    # On CPUs with AVX-512 TensorFlow switches on its oneDNN kernels and says so on stderr before its
    # logging is set up (TF_CPP_MIN_LOG_LEVEL cannot hide it); the CLI uses TF only to convert models
    # and as the reference, for which its default kernels do.
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
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
