"""Print every import cycle between qatui's modules (strongly connected components of the import graph).

Imports made only for type checking (`if TYPE_CHECKING:`) count too: a cycle there is still two
modules that cannot be understood apart.
Exit status 1 when a cycle exists; tests/test_architecture.py asserts there is none.
"""

from __future__ import annotations

import sys

import grimp


def cycles(package: str = "qatui", *, type_checking: bool = True) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others (Tarjan's algorithm)."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=not type_checking)
    modules = sorted(graph.modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))

    for module in modules:
        if module not in index:
            visit(module)
    return found


if __name__ == "__main__":
    groups = cycles()
    for group in groups:
        print("cycle:", " <-> ".join(group))
    print(f"{len(groups)} import cycle(s) between qatui modules")
    sys.exit(1 if groups else 0)
