"""Merge several TT device images into one (PyBuda's multi-model tool), with the same flags.

    python -m pybuda.tools.tti_merge -mbl device_images/ -mdl bert resnet vit -a wormhole_b0 -mml merged.tti

Each input image is verified as on load (checksums, versions, safe names). Models keep their
generated code, weights and host library; in the merged image each is named after its TTI file
and runs on its own (`TTDevice.load_image(img, model="bert")`). Queues are re-allocated over the
board's DRAM and host channels for all models together (buda_runtime_sim/perf/memory.py) and the
footprint per channel is printed. Needs no TVM and runs nothing from the images.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from buda_runtime_sim.enums import BackendDevice
from buda_runtime_sim.perf.memory import allocate
from buda_runtime_sim.runtime.image_archive import CONFIG_JSON, ImageError, write_archive
from buda_runtime_sim.runtime.images import IMAGE_FORMAT, TTDeviceImage, tool_versions

_PATH_KEYS = ("host_library", "host_weights", "placement")
_SUBGRAPH_KEYS = ("source", "manifest", "params", "state")


def _stem_of(entry: dict) -> str:
    return Path(entry["host_library"]).stem       # host/<stem>.so names the model's folders


def _renamed(entry: dict, name: str) -> dict:
    """The entry with its name and every member path moved to the folders of `name`."""
    old, new = _stem_of(entry), "".join(c if c.isalnum() or c in "_.-" else "_" for c in name).lstrip(".") or "model"

    def move(path: str) -> str:
        top, _, rest = path.partition("/")
        if top in ("module_files", "tensors") and rest.startswith(old + "/"):
            return f"{top}/{new}/{rest[len(old) + 1:]}"
        if top in ("host", "placement") and Path(rest).stem == old:
            return f"{top}/{new}{Path(rest).suffix}"
        raise ImageError(f"member {path!r} of model {entry['name']!r} is outside the model's folders")

    out = {**entry, "name": name, **{k: move(entry[k]) for k in _PATH_KEYS},
           "members": [move(m) for m in entry["members"]]}
    out["subgraphs"] = [{**sg, **{k: move(sg[k]) for k in _SUBGRAPH_KEYS if k in sg}} for sg in entry["subgraphs"]]
    out["_moved_from"] = {move(m): m for m in entry["members"]}
    return out


def merge_models(model_bin_location, models, arch: str = "wormhole_b0", merged_model_location: str = "",
                 switch_chans_if_capacity_hit: bool = True, overlap_dynamic_queues: bool = True) -> Path:
    """Merge `<model_bin_location>/<model>.tti` for every name in `models` into one image; returns its path."""
    arch = BackendDevice.from_string(arch)
    models = [str(m) for m in models]
    if not models:
        raise ValueError("merge_models: no models given")
    if len(set(models)) != len(models):
        raise ValueError(f"merge_models: a model is named twice in {models}")
    images = []
    for name in models:
        path = Path(model_bin_location) / f"{name}.tti"
        image = TTDeviceImage.load_from_disk(path)
        if image.arch != arch:
            raise ImageError(f"{path} was compiled for {image.arch.value}, not {arch.value}; compile it for {arch.value}")
        images.append(image)
    first = images[0].device["device"]
    for name, image in zip(models, images):
        d = image.device["device"]
        if (d["device_config"], d["harvested_rows"]) != (first["device_config"], first["harvested_rows"]):
            raise ImageError(f"{name}.tti targets {d['device_config']} with harvested rows {d['harvested_rows']}, "
                             f"{models[0]}.tti targets {first['device_config']} with {first['harvested_rows']}: "
                             "merged models must be compiled for the same board")
    members, entries, config = {}, [], {"models": {}}
    for name, image in zip(models, images):
        for entry in image.models:
            merged_name = name if len(image.models) == 1 else entry["name"]
            if merged_name in config["models"]:
                raise ImageError(f"two merged models are named {merged_name!r}")
            moved = _renamed(entry, merged_name)
            for new_path, old_path in moved.pop("_moved_from").items():
                members[new_path] = image.member_data(old_path)
            config["models"][merged_name] = image.config["models"][entry["name"]]
            entries.append(moved)
    for member in images[0].device["members"]:
        if member.startswith("backend_build_binaries/"):
            members[member] = images[0].member_data(member)
    members[CONFIG_JSON] = json.dumps(config, indent=1, sort_keys=True).encode()
    footprint = allocate({e["name"]: e["queues"] for e in entries}, arch, first.get("num_chips", 1),
                         switch_chans_if_capacity_hit, overlap_dynamic_queues)
    print(footprint.summary())
    device = {"image_format": IMAGE_FORMAT, "versions": tool_versions(), "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
              "device": first, "device_descriptor": images[0].device.get("device_descriptor"), "training": False,
              "models": entries, "merged_from": models, "memory": footprint.to_dict(),
              "merge_options": {"switch_chans_if_capacity_hit": switch_chans_if_capacity_hit,
                                "overlap_dynamic_queues": overlap_dynamic_queues}}
    return write_archive(Path(merged_model_location or "merged_model.tti"), members, device)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="tti_merge", description="Merge several TT device images into one.")
    parser.add_argument("-mbl", "--model_binaries_location", required=True, help="folder holding the model TTIs")
    parser.add_argument("-mdl", "--models", nargs="+", required=True, help="models to merge (TTI file names)")
    parser.add_argument("-a", "--arch", default="wormhole_b0", help="target architecture (default wormhole_b0)")
    parser.add_argument("-mml", "--merged_model_location", default="merged_model.tti", help="merged image path")
    parser.add_argument("-scr", "--skip_channel_reallocation", action="store_true",
                        help="do not move queues to another channel when one is full")
    parser.add_argument("-dqo", "--dynamic_queue_overlap_off", action="store_true",
                        help="do not let dynamic queues of different models share memory")
    args = parser.parse_args(argv)
    try:
        path = merge_models(args.model_binaries_location, args.models, args.arch, args.merged_model_location,
                            not args.skip_channel_reallocation, not args.dynamic_queue_overlap_off)
    except (OSError, ValueError, MemoryError) as exc:
        print(f"tti_merge: error: {exc}", file=sys.stderr)
        return 1
    print(f"merged {len(args.models)} models into {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
