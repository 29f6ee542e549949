"""tt-smi for the simulated devices: live display, snapshots, telemetry dumps and warm reset.

Every figure is modelled (see tt_smi.model), from what running simulated devices publish.
"""

__version__ = "0.1.0"
