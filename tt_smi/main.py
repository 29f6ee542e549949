"""`tt-smi`: the command line (flags as in the TT-SMI user guide; live display in tt_smi.app)."""

from __future__ import annotations

import argparse
import sys
import threading

from buda_runtime_sim.perf.boards import BOARDS
from buda_runtime_sim.runtime.telemetry import reset_states, state_dir, watching

from . import __version__
from .logs import dump, write_snapshot


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tt-smi", description="Monitor simulated Tenstorrent devices (modelled telemetry).")
    p.add_argument("-v", "--version", action="version", version=f"tt-smi {__version__} (tvm-buda simulator)")
    p.add_argument("-t", "--theme", choices=["default", "dark"], default="default",
                   help="live display colour theme (dark for light backgrounds)")
    p.add_argument("-nc", "--no-color", action="store_true", help="remove colour from the output")
    p.add_argument("-i", "--interval", type=float, nargs="?", const=0.5, default=0.5, metavar="SECONDS",
                   help="time between readings (default 0.5 s)")
    p.add_argument("-s", "--snapshot", action="store_true", help="save a snapshot of host and device information")
    p.add_argument("-f", "--filename", nargs="?", help="snapshot file (default tt-smi-logs/tt-smi-snapshot_<timestamp>.log)")
    p.add_argument("-d", "--dump", action="store_true", help="dump device telemetry to .csv (and .xlsx with openpyxl)")
    p.add_argument("-dir", "--dump_dir", nargs="?", help="dump directory (default tt-smi-logs/tt-smi-dump_<timestamp>/)")
    p.add_argument("-dur", "--duration", type=float, help="seconds to dump for (default: until Enter is pressed)")
    p.add_argument("-wr", "--warm_reset", action="store_true", help="warm reset: clear the simulated devices' state")
    p.add_argument("-mr", "--mobo_nb_reset", action="store_true", help="warm reset the motherboard (not simulated)")
    p.add_argument("--external", action="store_true", help="external version of TT-SMI (not available here)")
    p.add_argument("--device-config", choices=sorted(BOARDS),
                   help="board to show when no simulated device is running (default wh_n150)")
    return p


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.interval <= 0:
        print("tt-smi: error: --interval must be positive", file=sys.stderr)
        return 2
    if args.mobo_nb_reset or args.external:
        flag = "-mr" if args.mobo_nb_reset else "--external"
        print(f"tt-smi: error: {flag} needs real hardware; the devices here are simulated", file=sys.stderr)
        return 1
    if args.warm_reset:
        count = reset_states()
        print(f"Warm reset {count} simulated device(s) (state in {state_dir()}).")
        return 0
    if args.snapshot:
        print(f"Saved snapshot to {write_snapshot(args.filename, args.device_config)}")
        return 0
    if args.dump:
        stop = threading.Event()
        if args.duration is None:
            print("Dumping telemetry; press Enter to stop.")
            threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
        paths = dump(args.dump_dir, args.duration, args.interval, args.device_config, stop)
        print("Saved telemetry to " + ", ".join(str(p) for p in paths))
        return 0
    from .app import TTSmiApp

    with watching():
        TTSmiApp(interval=args.interval, theme_name=args.theme, no_color=args.no_color,
                 device_config=args.device_config).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
