"""Reportify: a web report of what the compiler did (passes, generated modules, placement, perf).

`PYBUDA_REPORTIFY=1` (or `CompilerConfig.enable_reportify`, or `tvm-buda report --html`) writes a
report folder on every compile; `tvm-buda reportify [DIR]` serves it on 127.0.0.1.
"""

from .recorder import PassRecorder
from .writer import report_dir, write_report

__all__ = ["PassRecorder", "report_dir", "write_report"]
