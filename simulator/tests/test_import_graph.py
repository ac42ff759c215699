"""The package's modules import each other one way only: no import cycle, at module or function level.

Every module under ``src/lustre_sim`` is parsed with ``ast`` (nothing is imported), each ``import`` and
``from ... import`` anywhere in it (inside functions too) that names a module of the package becomes an edge,
and a cycle fails the test with its modules in order.  Run alone it also prints the graph:

    python simulator/tests/test_import_graph.py
"""

import ast
import os
import sys

PACKAGE = "lustre_sim"
SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

# Modules that import nothing of the package but ``errors``: what every other layer may import.
LEAVES = ("common", "curve", "errors", "lctl_base", "lctl_stats", "lnet_model", "mdtest_engine", "processes",
          "statefile")


def modules_under(source, package=PACKAGE):
    """``{dotted name: (path, is_package)}`` of every ``.py`` file of ``package`` under ``source``."""
    found = {}
    for directory, subdirs, files in os.walk(os.path.join(source, package)):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        relative = os.path.relpath(directory, source).split(os.sep)
        for filename in sorted(files):
            if not filename.endswith(".py"):
                continue
            if filename == "__init__.py":
                found[".".join(relative)] = (os.path.join(directory, filename), True)
            else:
                found[".".join(relative + [filename[:-3]])] = (os.path.join(directory, filename), False)
    return found


def _with_parents(name, modules):
    """``a.b.c`` and the packages Python imports before it (``a``, ``a.b``), those that are in ``modules``."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1) if ".".join(parts[:end]) in modules]


def imports_of(name, path, is_package, modules):
    """``{imported module: first line}`` of the package's modules that module ``name`` imports anywhere."""
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    package = name if is_package else name.rpartition(".")[0]
    edges = {}

    def add(target, line):
        for module in _with_parents(target, modules):
            if module != name:
                edges.setdefault(module, line)

    for statement in ast.walk(tree):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                add(alias.name, statement.lineno)
        elif isinstance(statement, ast.ImportFrom):
            if statement.level:
                base = package.split(".")
                base = base[:len(base) - (statement.level - 1)]
                origin = ".".join(base + ([statement.module] if statement.module else []))
            else:
                origin = statement.module
            add(origin, statement.lineno)
            for alias in statement.names:  # "from package import module"
                if origin + "." + alias.name in modules:
                    add(origin + "." + alias.name, statement.lineno)
    return edges


def import_graph(source=SOURCE, package=PACKAGE):
    modules = modules_under(source, package)
    return {name: imports_of(name, path, is_package, modules) for name, (path, is_package) in modules.items()}


def find_cycle(graph):
    """One import cycle as a list of modules (the first repeated at the end), or None."""
    state = {}  # absent: not seen, 1: on the current path, 2: done
    path = []

    def visit(module):
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, {})):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def describe(cycle, graph):
    return " -> ".join("%s (line %d)" % (module, graph[module][following])
                       for module, following in zip(cycle, cycle[1:])) + " -> " + cycle[-1]


def test_no_import_cycle():
    graph = import_graph()
    assert "%s.node" % PACKAGE in graph and "%s.lifecycle" % PACKAGE in graph  # the right tree was read
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + describe(cycle, graph)


def test_leaf_modules_import_only_errors():
    graph = import_graph()
    allowed = {PACKAGE, PACKAGE + ".errors"}
    for leaf in LEAVES:
        name = "%s.%s" % (PACKAGE, leaf)
        assert set(graph[name]) <= allowed, "%s imports %s" % (name, ", ".join(sorted(set(graph[name]) - allowed)))


def test_a_cycle_is_found_also_through_a_function_level_import(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "a.py").write_text("from .sub import b\n")
    (package / "sub" / "b.py").write_text("import os\n\n\ndef later():\n    from ..a import thing\n")
    (package / "c.py").write_text("from pkg import a\n")
    graph = import_graph(str(tmp_path), "pkg")
    assert graph["pkg.c"] == {"pkg": 1, "pkg.a": 1}
    cycle = find_cycle(graph)
    assert cycle is not None and set(cycle) == {"pkg.a", "pkg.sub.b"}
    assert "line 5" in describe(cycle, graph)
    (package / "sub" / "b.py").write_text("import os\n")
    assert find_cycle(import_graph(str(tmp_path), "pkg")) is None


def main():
    graph = import_graph()
    for module in sorted(graph):
        targets = sorted(target for target in graph[module] if target != PACKAGE)  # the package is always first
        print("%s -> %s" % (module, ", ".join(targets) or "-"))
    cycle = find_cycle(graph)
    if cycle:
        print("import cycle: " + describe(cycle, graph))
        return 1
    print("no import cycle among %d modules" % len(graph))
    return 0


if __name__ == "__main__":
    sys.exit(main())
