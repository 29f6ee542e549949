"""Circles in the import graph: strongly connected components, per package, at three levels.

    python benchmarks/import_circles.py [--level modules|subpackages|packages] [--package NAME ...]

The graph is grimp's (the one import-linter checks): every import statement, those inside function
bodies included, between the repository's packages. A circle is a set of nodes each reachable from
every other; a circle of files is one file in disguise. Levels: `modules` takes every module as a
node (a package's own __init__ is a node like any other); `subpackages` first collapses every
subpackage (e.g. tvm_buda.cache, buda_runtime_sim.runtime) into one node, so a circle like
compiled_model -> cache -> training -> compiled_model shows even when no two files import each
other; `packages` collapses each top-level package (pybuda <-> tvm_buda). Without --level, all three.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import grimp

PACKAGES = ("pybuda", "tvm_buda", "codegen", "relay_passes", "buda_runtime_sim", "tt_smi", "tt_lib", "libs")


LEVELS = ("modules", "subpackages", "packages")


def _graph(packages, level: str):
    graph = grimp.build_graph(*packages, cache_dir=None)
    if level == "packages":
        for package in packages:
            graph.squash_module(package)
    elif level == "subpackages":
        # Deepest first, so each subpackage is squashed after its own subpackages.
        subpackages = sorted((m for m in graph.modules if graph.find_children(m) and "." in m),
                             key=lambda m: -m.count("."))
        for module in subpackages:
            if module in graph.modules and not graph.is_module_squashed(module):
                graph.squash_module(module)
    return graph


def circles(packages=PACKAGES, level: str = "modules") -> list[list[str]]:
    """Each strongly connected component of more than one node, sorted (Tarjan, iterative)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    graph = _graph(packages, level)
    nodes = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in nodes}
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root), on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child), on_stack.add(child)
                    work.append((child, iter(edges[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return sorted(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", choices=LEVELS, help="one level (default: all three)")
    parser.add_argument("--package", nargs="*", default=list(PACKAGES))
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    for level in [args.level] if args.level else LEVELS:
        found = circles(args.package, level)
        print(f"== {level}: {len(found)} circle(s)")
        for component in found:
            tops = " + ".join(sorted({m.split(".")[0] for m in component}))
            print(f"  {tops}: {len(component)} nodes: {', '.join(component)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
