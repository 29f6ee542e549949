"""Circles in the import graph: strongly connected components of modules, per package.

    python benchmarks/import_circles.py [--squash] [--package NAME ...]

The graph is grimp's (the one import-linter checks): every import statement, those inside function
bodies included, between the repository's packages. A circle is a set of modules each reachable from
every other; a circle of files is one file in disguise. --squash first collapses every subpackage
(e.g. tvm_buda.cache, buda_runtime_sim.runtime) into one node, the view import-linter's layers take,
so a circle like compiled_model -> cache -> training -> compiled_model shows even when no single pair
of files imports each other. A package's own __init__ is a node like any other.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import grimp

PACKAGES = ("pybuda", "tvm_buda", "codegen", "relay_passes", "buda_runtime_sim", "tt_smi", "tt_lib", "libs")


def _graph(packages, squash: bool):
    graph = grimp.build_graph(*packages, cache_dir=None)
    if squash:
        # Deepest first, so each subpackage is squashed after its own subpackages.
        subpackages = sorted((m for m in graph.modules if graph.find_children(m) and "." in m),
                             key=lambda m: -m.count("."))
        for module in subpackages:
            if module in graph.modules and not graph.is_module_squashed(module):
                graph.squash_module(module)
    return graph


def circles(packages=PACKAGES, squash: bool = False) -> list[list[str]]:
    """Each strongly connected component of more than one module, sorted (Tarjan, iterative)."""
    graph = _graph(packages, squash)
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
    parser.add_argument("--squash", action="store_true", help="collapse subpackages into one node each")
    parser.add_argument("--package", nargs="*", default=list(PACKAGES))
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    found = circles(args.package, args.squash)
    by_package: dict[str, list] = {}
    for component in found:
        tops = sorted({m.split(".")[0] for m in component})
        by_package.setdefault(" + ".join(tops), []).append(component)
    for package in args.package:
        by_package.setdefault(package, [])
    for package, components in sorted(by_package.items()):
        print(f"{package}: {len(components)} circle(s)")
        for component in components:
            print(f"  {len(component)} modules: {', '.join(component)}")
    print(f"total: {len(found)} circle(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
