"""TT device images (TTI): a compiled model in one file that loads and runs without compiling.

    device.json                        device, versions, models (inputs/outputs, subgraphs), member checksums
    compile_and_runtime_config.json    compiler options and the resolved numerics of every model
    module_files/<model>/              generated PyBuda modules (.py) and their manifests (.json)
    tensors/<model>/                   their parameters (safetensors; tiles in device layout on request),
                                       the host part's weights, and each module's device state (what a
                                       first run computes from the weights: image_state.py)
    host/<model>.so                    the host part: the Relax VM executable exported by TVM
    backend_build_binaries/            the target device's descriptor (and the user's, if given)
    placement/<model>.json             the perf model's per-epoch placement and DRAM queues

This module reads and checks images and never imports TVM: loading a model's host part and
generated modules is done by a loader that tvm_buda installs (`set_image_hooks`).

Loading executes code from the image: each generated module is Python that is imported, and
the host part is a shared library that is loaded. Only load images you trust; an image whose
members do not match the checksums in device.json is refused before anything is executed.
"""

from __future__ import annotations

import functools
import json
import platform
import shutil
import sys
import weakref
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ..config import _get_global_compiler_config
from ..enums import BackendDevice, BackendType
from ..module import Module
from ..perf.boards import board_for_arch, get_board
from .io_values import host_values, split_inputs
from .image_archive import CONFIG_JSON, MAX_MEMBER_BYTES, MAX_TOTAL_BYTES, ImageError, extract_archive
from .image_tensors import parse_safetensors
from .registry import registered_devices

IMAGE_FORMAT = 2                # 2: BLAKE3 checksums, tensor members aligned for mapping
_VERSIONED = ("tvm-buda", "apache-tvm", "apache-tvm-ffi")
_hooks: dict = {"load_model": None, "build": None}


def set_image_hooks(load_model=None, build=None) -> None:
    """Installed by tvm_buda: `load_model(image, model_entry)` -> a runnable CompiledModel;
    `build(compiled, img_path, target, sample_inputs)` writes the image of a compiled model."""
    if load_model is not None:
        _hooks["load_model"] = load_model
    if build is not None:
        _hooks["build"] = build


def _hook(name: str):
    if _hooks[name] is None:
        raise RuntimeError("TT device images need tvm_buda to build or load models: import pybuda or tvm_buda first")
    return _hooks[name]


def tool_versions() -> dict[str, str]:
    """Versions an image must match to load: its host library links against TVM, its modules against tvm-buda."""
    return dict(_installed_versions())


@functools.cache
def _installed_versions() -> dict[str, str]:   # package metadata is parsed once per process
    out = {}
    for dist in _VERSIONED:
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    out["platform"] = f"{sys.platform}-{platform.machine()}"
    return out


def harvesting_mask(rows) -> int:
    """PyBuda's harvested-rows mask: bit r set for every harvested NoC row r (rows 1 and 11: 2050)."""
    return sum(1 << int(r) for r in rows)


def check_compatible(device: dict) -> None:
    """Format and tool versions of an image's device.json (before anything is extracted)."""
    fmt = device.get("image_format")
    if fmt != IMAGE_FORMAT:
        raise ImageError(f"image format {fmt!r} is not {IMAGE_FORMAT}: written by another version of tvm-buda; "
                         "compile the model again with this one")
    ours, theirs = tool_versions(), device.get("versions", {})
    diff = {k: (theirs.get(k), v) for k, v in ours.items() if theirs.get(k) != v}
    if diff:
        detail = ", ".join(f"{k} {a} (this machine: {b})" for k, (a, b) in sorted(diff.items()))
        raise ImageError(f"image was written by other tool versions: {detail}; compile it again here "
                         "(its host library and generated code are tied to those versions)")


class TTDeviceImage:
    """A verified, unpacked TTI (`load_from_disk`); `TTDevice.load_image(img=...)` runs it."""

    def __init__(self, path: Path, root: Path, device: dict, buffers: dict | None = None):
        self.path = Path(path)
        self.root = root
        self.device = device
        self._buffers = buffers or {}     # tensor members, checked and held in memory
        self.config = json.loads((root / CONFIG_JSON).read_text()) if (root / CONFIG_JSON).is_file() else {}
        self._cleanup = weakref.finalize(self, shutil.rmtree, str(root), True)

    @staticmethod
    def load_from_disk(img_path, max_member_bytes: int = MAX_MEMBER_BYTES,
                       max_total_bytes: int = MAX_TOTAL_BYTES, map_file: bool = True) -> "TTDeviceImage":
        """Check and unpack an image into a fresh folder (removed when the image is collected);
        tensor members stay in memory instead (see `tensors`): views of the file mapped
        copy-on-write (`map_file`, the default: replace a loaded image by renaming a new file over
        it, never by rewriting it in place), or read into memory (`map_file=False`).
        Raises ImageError naming the problem: not a zip, unsafe or unlisted members, checksums,
        versions. Executes nothing."""
        root, device, buffers = extract_archive(img_path, check_compatible, max_member_bytes, max_total_bytes,
                                                map_file)
        return TTDeviceImage(Path(img_path), root, device, buffers)

    # ---- contents ---------------------------------------------------------------------------
    @property
    def models(self) -> list[dict]:
        return list(self.device["models"])

    @property
    def model_names(self) -> list[str]:
        return [m["name"] for m in self.models]

    def model(self, name: str | None = None) -> dict:
        """One model's entry; `name` may be omitted when the image holds one model."""
        if name is None:
            if len(self.models) != 1:
                raise ValueError(f"{self.path} holds {len(self.models)} models {self.model_names}; name one")
            return self.models[0]
        for entry in self.models:
            if entry["name"] == name:
                return entry
        raise KeyError(f"{self.path} has no model {name!r}; it holds {self.model_names}")

    def member(self, name: str) -> Path:
        """An extracted member by archive name; only members checked against device.json."""
        if name not in self.device["members"]:
            raise ImageError(f"{self.path}: device.json refers to {name!r}, which is not a checked member")
        if name in self._buffers:
            raise ImageError(f"{self.path}: {name!r} is a tensor member, held in memory: read it with tensors()")
        return self.root / name

    def member_data(self, name: str) -> Path | memoryview:
        """A member as its extracted file, or a view of its checked bytes for a tensor member (to
        copy it into another image: write_archive takes either)."""
        if name in self._buffers:
            return memoryview(self._buffers[name])
        return self.member(name)

    def holds_tensors(self, name: str) -> bool:
        return name in self._buffers

    def release_tensors(self, name: str) -> None:
        """Free a tensor member whose contents were copied elsewhere (device state once restored)."""
        self._buffers.pop(name, None)

    def tensors(self, name: str) -> dict:
        """The arrays of a tensor member (safetensors), as views of the checked bytes (no copy)."""
        if name not in self._buffers:
            raise ImageError(f"{self.path}: device.json refers to {name!r}, which is not a checked tensor member")
        try:
            return parse_safetensors(self._buffers[name])
        except ValueError as exc:
            raise ImageError(f"{self.path}: {name}: {exc}") from None

    def get_input_shapes(self, model: str | None = None) -> list[list[int]]:
        return [list(i["shape"]) for i in self.model(model)["inputs"]]

    def get_target_shapes(self, model: str | None = None) -> list[list[int]]:
        return [list(t["shape"]) for t in self.model(model).get("targets", [])]

    @property
    def device_name(self) -> str:
        return self.device["device"]["name"]

    @property
    def arch(self) -> BackendDevice:
        return BackendDevice.from_string(self.device["device"]["arch"])

    @property
    def devtype(self) -> BackendType:
        return BackendType(self.device["device"]["devtype"])

    @property
    def harvested_rows(self) -> list[int]:
        return list(self.device["device"]["harvested_rows"])

    def info(self, file=None) -> str:
        """The guide's summary: versions, device, compiled graph state. Printed and returned."""
        d, versions = self.device["device"], self.device["versions"]
        lines = ["Image Info...", "- Version Info:"]
        lines += [f"      - {k.replace('-', '_')}_version: {versions.get(k)}" for k in _VERSIONED]
        lines += [f"      - platform: {versions.get('platform')}", f"- Device Name: {d['name']}", "",
                  "Device Info...", f"- arch: {self.arch}", f"- chip_ids: {d['chip_ids']}",
                  f"- backend device type: {self.devtype}", f"- device config: {d['device_config']}",
                  f"- grid size: {d['grid_size']}", f"- harvested rows: {harvesting_mask(d['harvested_rows'])}", "",
                  "Compilation Graph State...", f"- training: {self.device['training']}"]
        for entry in self.models:
            prefix = f"- {entry['name']}: " if len(self.models) > 1 else "- "
            lines.append(f"{prefix}ordered input shapes: {[list(i['shape']) for i in entry['inputs']]}")
            lines.append(f"{prefix}ordered targets shapes: {[list(t['shape']) for t in entry.get('targets', [])]}")
        text = "\n".join(lines)
        print(text, file=file or sys.stdout)
        return text

    def load_model(self, name: str | None = None):
        """The model rebuilt from the image (imports its generated code, loads its host library)."""
        return _hook("load_model")(self, self.model(name))

    def close(self) -> None:
        """Remove the unpacked folder now (models already loaded keep running)."""
        self._cleanup()

    def __repr__(self) -> str:
        return f"TTDeviceImage({str(self.path)!r}, models={self.model_names}, arch={self.arch.value})"


class ImageModule(Module):
    """A model from an image, placed on a TTDevice (already compiled: the device never compiles it)."""

    def __init__(self, name: str, image: TTDeviceImage):
        super().__init__(name)
        self.image = image  # keeps the unpacked folder alive while the module is placed

    def compile_for_device(self, sample_inputs, config):
        raise RuntimeError(f"module {self.name} comes from image {self.image.path}; load it with TTDevice.load_image")


def check_running_device(image: TTDeviceImage, config=None) -> None:
    """The device this process targets (set_configuration_options) must be the image's device."""
    config = config or _get_global_compiler_config()
    d = image.device["device"]
    if config.device_config is not None and config.device_config != d["device_config"]:
        raise ImageError(f"image {image.path} was compiled for {d['device_config']}, but this device is "
                         f"{config.device_config}; compile the model again for it")
    if config.harvested_rows is not None and sorted(config.harvested_rows) != sorted(d["harvested_rows"]):
        raise ImageError(
            f"image {image.path} was compiled for harvested rows {d['harvested_rows']} (mask "
            f"{harvesting_mask(d['harvested_rows'])}), but this device has rows {sorted(config.harvested_rows)} "
            f"(mask {harvesting_mask(config.harvested_rows)}) harvested; compile an image for this device")
    descriptor = getattr(config, "backend_device_descriptor_path", None)
    if descriptor:
        embedded = d.get("user_device_descriptor")
        same = embedded is not None and Path(descriptor).is_file() and \
            Path(descriptor).read_bytes() == image.member(embedded).read_bytes()
        if not same:
            raise ImageError(f"this device is described by {descriptor}, but image {image.path} was compiled "
                             f"{'for another descriptor (' + embedded + ')' if embedded else 'without one'}; "
                             "compile an image with this backend_device_descriptor_path")


def device_from_image(device_cls, img: TTDeviceImage, model: str | None = None, name: str | None = None):
    """TTDevice.load_image: a new device configured from the image, its model placed and loaded."""
    if not isinstance(img, TTDeviceImage):
        raise TypeError(f"TTDevice.load_image expects a TTDeviceImage (TTDeviceImage.load_from_disk(path)), "
                        f"got {type(img).__name__}")
    check_running_device(img)
    entry = img.model(model)
    device_name = name or img.device["device"]["name"]
    if any(d.name == device_name and d.active for d in registered_devices()):
        raise RuntimeError(f"a device named {device_name} is already in the pipeline (the one the image was compiled "
                           "on?); call pybuda.shutdown() first, or pass name= to TTDevice.load_image")
    compiled = img.load_model(entry["name"])
    d = img.device["device"]
    device = device_cls(device_name, arch=img.arch, devtype=img.devtype, chip_ids=list(d["chip_ids"]))
    module = ImageModule(entry["name"], img)
    device.place_module(module)
    device.compiled[id(module)] = compiled
    return device


def target_of(device) -> dict:
    """The board a TTDevice compiles for (see target_for)."""
    return target_for(device.name, device.arch, device.devtype, list(device.chip_ids), device.num_chips)


def target_for(name: str, arch: BackendDevice, devtype: BackendType, chip_ids=(0,), num_chips: int = 1,
               config=None) -> dict:
    """The target of an image: set_configuration_options(device_config=, harvested_rows=,
    backend_device_descriptor_path=) (or those of `config`) and the device's arch, devtype and chip
    ids (checked against each other)."""
    config = config or _get_global_compiler_config()
    board = get_board(config.device_config or board_for_arch(arch), config.harvested_rows)
    if board.arch != arch:
        raise ValueError(f"device_config {board.name} is a {board.arch.value} board but TTDevice {name} has "
                         f"arch {arch.value}; pass arch={board.arch} to TTDevice (or another device_config)")
    descriptor = config.backend_device_descriptor_path or None
    if descriptor is not None and not Path(descriptor).is_file():
        raise FileNotFoundError(f"backend_device_descriptor_path {descriptor} does not exist")
    return {"name": name, "arch": arch.value, "devtype": devtype.value, "chip_ids": list(chip_ids),
            "num_chips": num_chips, "device_config": board.name, "harvested_rows": list(board.harvested_rows),
            "grid_size": list(board.grid_shape), "board": board.to_dict(), "user_device_descriptor": descriptor}


def compile_to_image(device, img_path=None, training: bool = False, sample_inputs=(), sample_targets=()):
    """TTDevice.compile_to_image: compile the device's module for `sample_inputs` and save a TTI."""
    if training:
        raise NotImplementedError(
            "compile_to_image(training=True): training images are not supported (an image holds a compiled "
            "inference model: no backward graph, loss or optimizer state). Train in a process that compiles the "
            "model (pybuda.initialize_pipeline(training=True) / run_training), then save the trained model with "
            "compile_to_image(training=False)")
    if len(device.modules) != 1:
        raise ValueError(f"{device.name}: compile_to_image needs exactly one module placed on the device "
                         f"(found {len(device.modules)}); merge several images with pybuda.tools.tti_merge")
    if sample_inputs is None or (isinstance(sample_inputs, (tuple, list)) and not sample_inputs):
        raise ValueError("compile_to_image: sample_inputs are needed to compile (tensors with the shapes and dtypes "
                         "the model will see)")
    module = device.modules[0]
    if not hasattr(module, "compile_for_device"):
        raise TypeError(f"{device.name}: compile_to_image needs a framework module (PyTorchModule, TFModule, "
                        f"OnnxModule, ...); {module.name} is a {type(module).__name__}")
    target = target_of(device)
    inputs = sample_inputs if isinstance(sample_inputs, (tuple, list, dict)) else (sample_inputs,)
    compiled = device.compiled.get(id(module))
    if compiled is None:  # compile only: running the sample is not needed to save the image
        args, kwargs = split_inputs(inputs)
        compiled = module.compile_for_device(kwargs or host_values(args), device.compile_config())
        device.compiled[id(module)] = compiled
    path = Path(img_path or f"device_images/{device.name}.tti")
    _hook("build")(compiled, path, target, inputs)
    return TTDeviceImage.load_from_disk(path)
