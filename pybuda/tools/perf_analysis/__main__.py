import sys

from perf_analyzer import main

sys.exit(main())
