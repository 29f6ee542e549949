"""Reading and writing the parameters held by devices: checkpoints and updates."""

from __future__ import annotations

from . import registry, training


def get_parameter_checkpoint(device=None, _sequential: bool = False):
    """Current parameter values: a dict for `device`, else a list with one dict per device."""
    if device is not None:
        trained = training.device_parameters(device)
        return trained if trained is not None else device.get_parameters()
    return [get_parameter_checkpoint(d) for d in registry.registered_devices() if d.active]


def update_device_parameters(device=None, parameters=(), _sequential: bool = False) -> None:
    """Push new parameter values (dicts of name -> tensor) onto `device`, or onto every device."""
    targets = [device] if device is not None else [d for d in registry.registered_devices() if d.active]
    dicts = [parameters] if isinstance(parameters, dict) else list(parameters)
    if len(dicts) == 1:
        dicts = dicts * len(targets)
    if len(dicts) != len(targets):
        raise ValueError(f"update_device_parameters: {len(dicts)} parameter dicts for {len(targets)} devices")
    for target, values in zip(targets, dicts):
        if not training.update_parameters(target, values):
            target.update_parameters(values)
