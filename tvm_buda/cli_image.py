"""`tvm-buda image save | info | run`: TT device images from the command line."""

from __future__ import annotations

import time
from pathlib import Path

def _save(args) -> int:
    from buda_runtime_sim.enums import BackendType
    from buda_runtime_sim.options import set_configuration_options
    from buda_runtime_sim.perf.boards import get_board
    from buda_runtime_sim.runtime.images import TTDeviceImage, target_for

    from .cli_compile import COMPILE_STAGES, compile_file
    from .images import build_image

    device_config = args.device_config or {"grayskull": "gs_e150", "wormhole_b0": "wh_n150"}.get(args.arch)
    set_configuration_options(device_config=device_config, harvested_rows=args.harvested_rows,
                              backend_device_descriptor_path=args.device_descriptor)
    board = get_board(device_config, args.harvested_rows)
    target = target_for("tt0", board.arch, BackendType.Silicon)
    compiled, _, inputs = compile_file(args, COMPILE_STAGES)
    path = build_image(compiled, args.output or f"device_images/{compiled.name}.tti", target, tuple(inputs))
    TTDeviceImage.load_from_disk(path).info()
    print(f"\nwritten: {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


def _info(args) -> int:
    from buda_runtime_sim.runtime.images import TTDeviceImage

    img = TTDeviceImage.load_from_disk(args.image)
    img.info()
    print(f"\nModels ({len(img.models)}), {len(img.device['members'])} members, all checksums match:")
    for entry in img.models:
        inputs = ", ".join(f"{i['name']} {tuple(i['shape'])} {i['dtype']}" for i in entry["inputs"])
        outputs = ", ".join(f"{tuple(o['shape'])} {o['dtype']}" for o in entry["outputs"])
        print(f"- {entry['name']} ({entry['framework']}, parameters {entry['tensor_layout']}): "
              f"inputs {inputs}; outputs {outputs}; {len(entry['subgraphs'])} device subgraph(s)")
    from buda_runtime_sim.perf.memory import MemoryFootprint, allocate

    memory = img.device.get("memory")   # merged images store the allocation the merge made
    footprint = MemoryFootprint(memory["dram_bytes"], memory["host_bytes"]) if memory else \
        allocate({e["name"]: e["queues"] for e in img.models}, img.arch, img.device["device"].get("num_chips", 1))
    print(footprint.summary())
    return 0


def _run(args) -> int:
    import numpy as np

    from buda_runtime_sim.runtime.images import TTDeviceImage   # (importing tvm_buda installed its image hooks)

    start = time.perf_counter()
    img = TTDeviceImage.load_from_disk(args.image)
    entry = img.model(args.model)
    model = img.load_model(entry["name"])
    rng = np.random.default_rng(args.seed)
    limits = entry.get("index_limits", {})
    inputs = [rng.integers(0, limits.get(i["name"], 100), size=i["shape"]).astype(i["dtype"])
              if np.dtype(i["dtype"]).kind in "iu" else rng.standard_normal(i["shape"]).astype(i["dtype"])
              for i in entry["inputs"]]
    outputs = model.run(*inputs)
    elapsed = time.perf_counter() - start
    outputs = list(outputs.values()) if isinstance(outputs, dict) else \
        list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
    shapes = ", ".join(f"{i['name']}{tuple(i['shape'])}" for i in entry["inputs"])
    print(f"{entry['name']} from {args.image}: inputs {shapes} (random, seed {args.seed})")
    for k, out in enumerate(outputs):
        array = np.asarray(out)
        print(f"  output {k} {tuple(array.shape)} {array.dtype}: mean {array.mean():.6g}, std {array.std():.6g}")
    print(f"time to first output: {elapsed:.2f} s (load, verify, run; no compile)")
    return 0


def add_image_commands(sub, add_model_arguments) -> None:
    image = sub.add_parser("image", help="save, inspect and run TT device images (.tti)")
    image_sub = image.add_subparsers(dest="image_command", required=True)
    save = image_sub.add_parser("save", help="compile a model file for a board and save it as a TTI")
    add_model_arguments(save)
    save.add_argument("-o", "--output", help="image path (default device_images/<name>.tti)")
    save.add_argument("--harvested-rows", type=int, nargs="+", metavar="ROW", help="harvested NoC rows (1-5, 7-11)")
    save.add_argument("--device-descriptor", help="a backend device descriptor file to embed")
    save.set_defaults(func=_save)
    info = image_sub.add_parser("info", help="verify an image and print its device, versions and models")
    info.add_argument("image", type=Path)
    info.set_defaults(func=_info)
    run = image_sub.add_parser("run", help="load an image (no compile) and run it on random inputs")
    run.add_argument("image", type=Path)
    run.add_argument("--model", help="model to run (images merged with tti_merge hold several)")
    run.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    run.set_defaults(func=_run)
