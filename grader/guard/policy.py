"""The source policy: what a submission may be written with, decided on its syntax tree before it runs.

A device fix moves tensors, models and loaders, times and frees memory. It never needs the interpreter's
machinery: frames, tracebacks and code objects, the module table, trace and profile hooks, `gc`'s ways into
other objects, names built at run time, or code run from a string. The policy refuses those by construct, so
that spelling a name differently (`os.sys.modules`, `getattr(mod, "set" + "trace")`, `print.__self__`,
`vars()["__builtins__"]`) refuses the same line as the plain spelling. Each finding is one line,
'line N: what: why a device fix never needs it'.

What it refuses (each table below says why):

* dynamic attribute access: `getattr`/`setattr`/`delattr`/`hasattr` and `operator.attrgetter`/`methodcaller`
  whose name is not a string constant, or not a name the file binds only to such constants (`for attr in
  ("key", "idx")`) or to the names of a module's own registries (`for name, p in m.named_parameters()`: the
  exercise stale_optimizer does this); a constant name is checked like a written attribute. Used any other way
  (passed as a value, renamed) they are refused too;
* underscore attributes outside a short allow-list taken from the course's fixes (`super().__init__`,
  `sub._parameters`, the file's own `self._cache`), underscore modules but `torch.utils._pytree`'s `tree_*`,
  and special methods a fix never defines, in a class, a dictionary or a keyword (`__del__` runs during a
  collection, `__torch_function__` and `__eq__` make an object lie to the checks); metaclasses and classes
  built by calling one (`type(name, bases, ns)`); setting special names and relative imports (`__name__`
  decides what `from . import x` reaches);
* the builtins that reach every name or run strings: `vars()`, `globals`, `locals`, `__builtins__`,
  `__import__`, `exec`, `eval`, `compile`, `breakpoint`, `help`, also when a module hands them out under
  another name (`enum.bltns` is builtins). `vars(x)` and `x.__dict__` are allowed only read as a whole
  (`vars(sub).items()`, `for a in vars(sub)`), never indexed, and not of what the file imported:
  find_misplaced lists a module's plain tensor attributes that way;
* attributes of frames, tracebacks, code objects and generators (`f_back`, `tb_frame`, `gi_frame`, `co_code`...;
  the list RestrictedPython keeps as INSPECT_ATTRIBUTES, and more), and attribute names that reach the
  interpreter's machinery on whatever object they are read (`modules`, `settrace`, `callbacks`, `get_objects`...);
* imports outside an allow-list, and the simulated accelerator's name (`'sim'`, `'sim:1'`, `.sim`).

Imports: an allow-list, not a deny-list. A deny-list must name every module that can run a string, walk the
heap or load native code, and the standard library is full of them (`pickle`, `marshal`, `types`, `runpy`,
`code`, `string.Formatter`, `typing.get_type_hints`, `threading`, `weakref.finalize`, `atexit`...), as is any
package that happens to be installed; forgetting one reopens everything. The allow-list is what the course's
fixes, right or wrong, import (torch, numpy, math, time, timeit's clock, os, gc, copy, functools, itertools,
contextlib, collections) and a few modules of plain data and arithmetic a learner may reasonably reach for
(typing, dataclasses, random, statistics, json, io, pathlib, tempfile, warnings, enum, abc, operator, sys...),
and multiprocessing, which torch.multiprocessing wraps (its thread pools refused);
within torch and numpy a few public parts that only serve to change or escape the grader are refused
(`torch.overrides`, the dispatch modes, `torch.library`, backend registration, C++ extensions, `torch.hub`,
`numpy.ctypeslib`...). A test runs the policy over every solution, exercise and submission of the course.
Threads are refused too (`threading`, `concurrent.futures` are not on the list): no fix needs one, and work on
another thread hides from the checks that count waits.

Why a visitor of our own and not RestrictedPython: RestrictedPython (maintained, Zope/Plone) compiles the
source into code that calls guard functions (`_getattr_`, `_getiter_`, `_write_`, `_print_`) on every attribute
read, iteration and print. The course grades the learner's code unmodified, through torch: rewritten code
would be traced by `torch.compile` with guard calls in it, print through a collector, and report different
lines than the learner wrote. Its policy also refuses every name that starts with `_` (`super().__init__()`,
a helper `_canonical`, `sub._parameters`), which refuses the course's own solutions. Its visitor checks
names one node at a time, which is all this needs: a small visitor of our own (one flat pass over the tree)
with the course's own tables, some of them (the frame and generator attributes) taken from RestrictedPython's.

What stays open (see "The source policy" in INTEGRITY.md): `vars(x).items()` and `x.__dict__.items()` hand out
an object's attributes under names the code may compare with computed strings (refused only where `x` is visibly
a module); a registry list of a fake object names what it likes; `torch.load(weights_only=False)` (the bug of the
exercise load_checkpoint, so a learner's file must keep loading with it) and `numpy.load(allow_pickle=True)`
unpickle whatever a file names; `open()` writes anywhere the process may, `/proc/self/mem` included; a class
built by a metaclass reached some other way, its special methods under computed keys (the checks must read
results through torch's own accessors); library code that runs its own strings. The run-time layers (the
baseline, the judge, the isolation of the worker) are what make those worthless; the policy makes them visible
and costly.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import sys
import types
from dataclasses import dataclass

from grader.guard.policy_rules import (
    ALLOWED_MODULES,
    DENIED_MODULE_PATHS,
    ALLOWED_PRIVATE_MODULES,
    _PYTREE_PUBLIC,
    ONLY_NAMES,
    REFLECTION,
    DYNAMIC_ACCESS,
    NAMED_ACCESS,
    ALLOWED_DUNDER_NAMES,
    ALLOWED_DUNDER_ATTRIBUTES,
    ALLOWED_DUNDER_DEFS,
    ALLOWED_PRIVATE_ATTRIBUTES,
    REGISTRY_LISTS,
    INTERNALS,
    INTERNALS_WHY,
    MACHINERY,
    DENIED_MODULE_ATTRIBUTES,
    FORBIDDEN_SUBSTRINGS,
    SIMULATOR_WHY,
    _NEVER,
)


@dataclass(frozen=True, order=True)
class Finding:
    line: int
    text: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.text}"


def findings(source: str, filename: str = "<submission>") -> list[Finding]:
    """What in the source the policy refuses, in line order; [] for a syntax error (the loader reports those)."""
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError):
        return []
    policy = _Policy(tree)
    policy.check_all()
    return sorted(set(policy.found))


# ---------------------------------------------------------------------------------------------- the visitor
def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _dotted(node: ast.AST) -> list[str] | None:
    """['a', 'b', 'c'] for the expression a.b.c, None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _str_constants(node: ast.AST) -> list[str] | None:
    """The strings of a literal tuple, list or set of string constants; None if it is anything else."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [e.value for e in node.elts]
    return None


def _unwrap(node: ast.AST) -> ast.AST:
    """The iterable inside list(...), sorted(...), tuple(...), reversed(...)."""
    while (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1
           and node.func.id in ("list", "sorted", "tuple", "reversed")):
        node = node.args[0]
    return node


def _other_bindings(node: ast.AST) -> tuple:
    """Names a node binds other than as an ast.Name."""
    if isinstance(node, ast.arg):
        return (node.arg,)
    if isinstance(node, ast.alias):
        return ((node.asname or node.name).split(".")[0],)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler,
                         ast.MatchAs, ast.MatchStar)):
        return (node.name,)
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple(node.names)
    return ()


def _short(node: ast.AST, limit: int = 40) -> str:
    """The expression as written, cut to a length a finding can show."""
    text = ast.unparse(node)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _names_a_metaclass(func: ast.AST) -> bool:
    """type, type(x), abc.ABCMeta, EnumMeta...: called with three arguments, they build a class."""
    if isinstance(func, ast.Call):  # type(x)(name, bases, namespace): the class of a class is a metaclass
        return isinstance(func.func, ast.Name) and func.func.id == "type"
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name in ("type", "ABCMeta", "EnumMeta", "EnumType")


_UNKNOWN = object()


def _resolve(path: str, load: bool = True):
    """The object a dotted path names among the loaded modules (their roots imported if allowed and `load`),
    reading only namespaces (no __getattr__, no property runs); _UNKNOWN where it cannot be told."""
    parts = path.split(".")
    if load and parts[0] in ALLOWED_MODULES and parts[0] not in sys.modules:
        try:
            importlib.import_module(parts[0])
        except ImportError:
            return _UNKNOWN
    for i in range(len(parts), 0, -1):
        obj = sys.modules.get(".".join(parts[:i]))
        if obj is not None:
            break
    else:
        return _UNKNOWN
    for part in parts[i:]:
        try:
            namespace = vars(obj)
        except TypeError:
            return _UNKNOWN
        if part not in namespace:
            return _UNKNOWN
        obj = namespace[part]
    return obj


def _is_reflection_builtin(obj) -> bool:
    """Whether obj is builtins' exec, eval, getattr... (or the builtins module), under whatever name."""
    name = getattr(obj, "__name__", None) if isinstance(obj, types.BuiltinFunctionType) else None
    return (name in REFLECTION or name in DYNAMIC_ACCESS) and getattr(builtins, name, None) is obj


def _first_of(target: ast.AST, name: ast.Name) -> bool:
    """Whether a loop's target binds `name` to the first of each pair (or is `name`)."""
    return target is name or isinstance(target, ast.Tuple) and bool(target.elts) and target.elts[0] is name


def _registry_list(node: ast.AST) -> bool:
    """m.named_parameters(...) and the like: the names are those a module registered."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in REGISTRY_LISTS)


def _namespace_of(node: ast.AST, obj: ast.AST) -> bool:
    """vars(obj).items(), obj.__dict__.keys()...: the names are those `obj` already has."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args
            and node.func.attr in ("items", "keys")):
        node = node.func.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and node.args:
        node = node.args[0]
    elif isinstance(node, ast.Attribute) and node.attr == "__dict__":
        node = node.value
    else:
        return False
    return ast.dump(node) == ast.dump(obj)


#: Where the underscore names a file may not claim as its own come from: the interpreter's modules, torch's
#: core and the machinery of modes and hooks (a method reading self._C could be called with torch as self).
PRIVATE_NAME_SOURCES = ("sys", "os", "gc", "numpy", "torch", "torch._C", "torch._C.TensorBase", "torch.Tensor",
                        "torch.utils", "torch.overrides", "torch.utils._python_dispatch", "torch.nn.modules.module",
                        "torch.autograd", "torch.cuda")


def _interpreters_private_names() -> frozenset[str]:
    """Underscore names of PRIVATE_NAME_SOURCES, those loaded (all are, in a grading worker)."""
    loaded = tuple(path for path in PRIVATE_NAME_SOURCES if _resolve(path, load=False) is not _UNKNOWN)
    return _private_names_of(loaded)


@functools.lru_cache(maxsize=4)
def _private_names_of(loaded: tuple[str, ...]) -> frozenset[str]:
    return frozenset(n for path in loaded for n in dir(_resolve(path, load=False))
                     if n.startswith("_") and not _is_dunder(n))


class _Policy:
    def __init__(self, tree: ast.Module):
        self.found: list[Finding] = []
        self.parent: dict[ast.AST, ast.AST] = {}
        self.aliases: dict[str, str] = {}  # local name -> the module path (or module.name) it was imported as
        self.own_private: set[str] = set()  # single-underscore attributes the file itself assigns
        self.nodes = list(ast.walk(tree))
        for node in self.nodes:
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and node.attr.startswith("_") and not _is_dunder(node.attr)):
                self.own_private.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                for stmt in node.body:  # class-level private names: _cache = {}, def _helper(self)
                    names = ([stmt.name] if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else
                             [t.id for t in getattr(stmt, "targets", [getattr(stmt, "target", None)])
                              if isinstance(t, ast.Name)])
                    self.own_private.update(n for n in names if n.startswith("_") and not _is_dunder(n))
        if self.own_private:
            self.own_private -= _interpreters_private_names()

    def check_all(self) -> None:
        """Check every node once (one flat pass: faster than ast.NodeVisitor's recursion, and no rule needs
        the order)."""
        for node in self.nodes:
            method = getattr(self, "visit_" + type(node).__name__, None)
            if method is not None:
                method(node)

    def add(self, node: ast.AST, what: str, why: str = _NEVER) -> None:
        self.found.append(Finding(getattr(node, "lineno", 0), f"{what}: {why}"))

    # ------------------------------------------------------------------ modules
    def module_path(self, path: str, node: ast.AST, how: str) -> bool:
        """Check a dotted module path (or module.attribute) that the file imports or reads."""
        parts = path.split(".")
        if parts[0] not in ALLOWED_MODULES:
            self.add(node, f"{how} {path}", f"{parts[0]} is not among the modules a device fix uses "
                     "(torch, numpy and a few of the standard library's: see grader/guard/policy.py)")
            return False
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in DENIED_MODULE_PATHS:
                self.add(node, f"{how} {path}", DENIED_MODULE_PATHS[prefix] + "; " + _NEVER)
                return False
            if (i > 1 and parts[i - 1].startswith("_") and not _is_dunder(parts[i - 1])
                    and parts[i - 1] not in ALLOWED_PRIVATE_ATTRIBUTES):
                if prefix not in ALLOWED_PRIVATE_MODULES:
                    self.add(node, f"{how} {path}", "an underscore name is the library's internals, which may "
                             "reach into the grader; " + _NEVER)
                    return False
                rest = parts[i:]
                if rest and not (rest[0].startswith("tree_") or rest[0] in _PYTREE_PUBLIC):
                    self.add(node, f"{how} {path}", f"only the tree_* functions of {prefix} are allowed")
                    return False
        if parts[0] in ONLY_NAMES and len(parts) > 1 and parts[1] not in ONLY_NAMES[parts[0]]:
            self.add(node, f"{how} {path}", f"of {parts[0]}, only {', '.join(sorted(ONLY_NAMES[parts[0]]))} "
                     "is allowed (the others run code given as a string)")
            return False
        return self.what_it_reaches(path, node, how)

    def what_it_reaches(self, path: str, node: ast.AST, how: str) -> bool:
        """Modules hand out other modules and builtins under names of their own (enum.bltns is builtins,
        torch.builtins too): what the path is in the loaded modules is checked as well."""
        obj = _resolve(path)
        if isinstance(obj, types.ModuleType) and obj.__name__ != path:
            real = obj.__name__
            if real.split(".")[0] not in ALLOWED_MODULES or any(
                    real == p or real.startswith(p + ".") for p in DENIED_MODULE_PATHS) or any(
                    part.startswith("_") and not _is_dunder(part) for part in real.split(".")[1:]
                    if not real.startswith(tuple(ALLOWED_PRIVATE_MODULES))):
                self.add(node, f"{how} {path}, which is the module {real}", "modules that are not allowed are "
                         "refused however they are reached; " + _NEVER)
                return False
        elif _is_reflection_builtin(obj):
            self.add(node, f"{how} {path}, which is the builtin {obj.__name__}",
                     REFLECTION.get(obj.__name__, "it reads or writes attributes by names the file does not "
                                    "show") + "; " + _NEVER)
            return False
        return True

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.module_path(a.name, node, "imports")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.add(node, f"imports {'.' * node.level}{node.module or ''}, a relative import", "a submission is "
                     "in no package: a relative import resolves against the names the file itself sets "
                     "(__name__), the grader's package included; " + _NEVER)
            return
        if not self.module_path(node.module, node, "imports from"):
            return
        for a in node.names:
            if a.name == "*":
                self.add(node, f"imports * from {node.module}", "the names it brings cannot be read in the file")
            elif self.attribute_name(a.name, node, called=False, shown=f"imports {node.module}.{a.name}"):
                self.module_path(f"{node.module}.{a.name}", node, "imports")

    # ------------------------------------------------------------------ attributes
    def attribute_name(self, attr: str, node: ast.AST, called: bool, store: bool = False,
                       shown: str | None = None) -> bool:
        """Check an attribute name read (or written) on any object; False if refused. `shown` is how the
        finding names it ('uses sys._getframe', 'imports sys.modules')."""
        shown = shown or f"{'writes' if store else 'uses'} {attr}"
        if _is_dunder(attr):
            if attr not in ALLOWED_DUNDER_ATTRIBUTES or store:
                self.add(node, f"{shown}, a special attribute", "special attributes lead to the interpreter's "
                         "machinery (classes, modules, functions' globals); " + _NEVER)
                return False
        elif attr.startswith("_") and attr != "_":
            if attr not in ALLOWED_PRIVATE_ATTRIBUTES and attr not in self.own_private:
                self.add(node, f"{shown}, a private attribute", "an underscore attribute is another library's "
                         "internals (only nn.Module's _parameters, _buffers, _modules, namedtuple's _fields, "
                         "_asdict, _replace, _make, os._exit and the file's own attributes are allowed); " + _NEVER)
                return False
        elif attr in INTERNALS or attr.startswith("co_"):
            self.add(node, f"{shown}, an attribute of {INTERNALS.get(attr, 'a code object')}",
                     INTERNALS_WHY + "; " + _NEVER)
            return False
        elif attr in MACHINERY and not (attr == "modules" and called):  # nn.Module.modules() is fine
            self.add(node, shown, MACHINERY[attr] + "; " + _NEVER)
            return False
        elif attr.startswith(("register_module_", "register_optimizer_step_")):
            self.add(node, shown, "a global hook runs on every model or optimizer, the checks' own reference ones "
                     "included; " + _NEVER)
            return False
        elif attr in DENIED_MODULE_ATTRIBUTES:
            self.add(node, f"{shown}, a module outside the allowed ones", "modules that are not allowed are "
                     "refused however they are reached; " + _NEVER)
            return False
        elif attr in ("sim", "simulated") or "privateuse1" in attr.lower():
            self.add(node, f"names the simulated accelerator ({shown.split(' ', 1)[1]})", SIMULATOR_WHY)
            return False
        return True

    def visit_Attribute(self, node: ast.Attribute) -> None:
        parent = self.parent.get(node)
        called = isinstance(parent, ast.Call) and parent.func is node
        if node.attr == "__dict__" and isinstance(node.ctx, ast.Load):
            if not self.read_whole(node):
                self.add(node, "uses an object's __dict__ other than to list it", "only .items(), .keys(), "
                         ".values() or a loop over it are allowed: indexed, it reads or writes any attribute by "
                         "a computed name")
            else:
                self.not_a_module(node.value, node)
        elif self.allowed_private_module(node) or self.attribute_name(
                node.attr, node, called, store=not isinstance(node.ctx, ast.Load),
                shown=f"{'uses' if isinstance(node.ctx, ast.Load) else 'writes'} {_short(node)}"):
            if self.is_named_access(node) and not called:
                self.add(node, f"uses {ast.unparse(node)} other than by calling it",
                         "passed around, it reads attributes by names the file does not show")
            parts = _dotted(node)
            outermost = not (isinstance(parent, ast.Attribute) and parent.value is node)
            if parts and parts[0] in self.aliases and outermost:  # a.b.c is checked once, whole
                self.module_path(".".join([self.aliases[parts[0]], *parts[1:]]), node, "uses")

    def allowed_private_module(self, node: ast.Attribute) -> bool:
        """Whether `node` is, through the file's imports, a module of ALLOWED_PRIVATE_MODULES read as a whole path
        (torch.utils._pytree in torch.utils._pytree.tree_map): the path is then checked as a module path."""
        parts = _dotted(node)
        return (isinstance(node.ctx, ast.Load) and bool(parts) and parts[0] in self.aliases
                and ".".join([self.aliases[parts[0]], *parts[1:]]) in ALLOWED_PRIVATE_MODULES)

    def read_whole(self, node: ast.AST) -> bool:
        """Whether a namespace (vars(x), x.__dict__) is only listed: .items()/.keys()/.values(), a loop, `in`."""
        parent = self.parent.get(node)
        if isinstance(parent, ast.Attribute) and parent.attr in ("items", "keys", "values"):
            call = self.parent.get(parent)
            return isinstance(call, ast.Call) and call.func is parent and not call.args
        if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
            return True
        return isinstance(parent, ast.Compare) and node in parent.comparators and all(
            isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops)

    # ------------------------------------------------------------------ names and calls
    def visit_Name(self, node: ast.Name) -> None:
        parent = self.parent.get(node)
        called = isinstance(parent, ast.Call) and parent.func is node
        name = node.id
        if name in DYNAMIC_ACCESS or name in NAMED_ACCESS and self.aliases.get(name, "").startswith("operator."):
            if not called:
                self.add(node, f"uses {name} other than by calling it",
                         "passed around, it reads or writes attributes by names the file does not show")
        elif name == "vars" and called:
            pass  # visit_Call decides
        elif name in REFLECTION:
            self.add(node, f"uses {name}", REFLECTION[name] + "; " + _NEVER)
        elif _is_dunder(name) and (name not in ALLOWED_DUNDER_NAMES
                                   or not isinstance(node.ctx, ast.Load) and name not in ("__all__", "__slots__")):
            self.add(node, f"{'uses' if isinstance(node.ctx, ast.Load) else 'sets'} the name {name}",
                     "special names belong to the interpreter (__name__ decides what relative imports reach); "
                     + _NEVER)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        if name in DYNAMIC_ACCESS:
            self.dynamic_access(node, name)
        elif name == "vars":
            if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
                self.add(node, "calls vars() without exactly one object", REFLECTION["vars"] + "; " + _NEVER)
            elif not self.read_whole(node):
                self.add(node, "uses vars(...) other than to list it", "only .items(), .keys(), .values() or a "
                         "loop over it are allowed: indexed, it reads or writes any attribute by a computed name")
            else:
                self.not_a_module(node.args[0], node)
        elif len(node.args) == 3 and _names_a_metaclass(func):
            self.add(node, f"builds a class with {_short(func)}(name, bases, namespace)", "a class built from a "
                     "dictionary escapes the checks on what classes define; " + _NEVER)
        elif self.is_named_access(func):
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    for attr in arg.value.split("."):
                        self.attribute_name(attr, arg, called=False, shown=f"uses {_short(node)}")
                else:
                    self.add(node, f"calls {ast.unparse(func)} with a computed name",
                             "it reads attributes by names the file does not show; " + _NEVER)

    def visit_Dict(self, node: ast.Dict) -> None:
        for key in node.keys:  # a namespace for a class built by a metaclass call
            if (isinstance(key, ast.Constant) and isinstance(key.value, str) and _is_dunder(key.value)
                    and key.value not in ALLOWED_DUNDER_DEFS):
                self.add(key, f"puts the special method {key.value} in a dictionary", "a class built from it "
                         "answers the grader in the object's place; " + _NEVER)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg and _is_dunder(node.arg) and node.arg not in ALLOWED_DUNDER_DEFS:
            self.add(node, f"passes the special name {node.arg} as a keyword", "dict(__eq__=...) is the namespace "
                     "of a class built in the object's place; " + _NEVER)

    def is_named_access(self, func: ast.AST) -> bool:
        parts = _dotted(func)
        if not parts:
            return False
        path = ".".join([self.aliases.get(parts[0], parts[0]), *parts[1:]])
        return path in ("operator.attrgetter", "operator.methodcaller")

    def not_a_module(self, arg: ast.AST, node: ast.AST) -> None:
        """vars(x) and x.__dict__ are for the file's own objects, not for what it imported."""
        parts = _dotted(arg)
        if parts and parts[0] in self.aliases:
            obj = _resolve(".".join([self.aliases[parts[0]], *parts[1:]]))
            kind = "the class" if isinstance(obj, type) else "the module" if isinstance(obj, types.ModuleType) \
                else "what the file imported as"
            self.add(node, f"lists the namespace of {kind} {'.'.join(parts)}", "a module's or a class's namespace "
                     "holds other modules, the builtins, special methods; " + _NEVER)

    def dynamic_access(self, node: ast.Call, name: str) -> None:
        store = name in ("setattr", "delattr")
        if len(node.args) < 2 or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            self.add(node, f"calls {name} without a plain object and name", "it reads or writes attributes by "
                     "names the file does not show; " + _NEVER)
            return
        attr = node.args[1]
        if isinstance(attr, ast.Constant) and isinstance(attr.value, str):
            self.attribute_name(attr.value, node, called=False, store=store, shown=f"uses {_short(node)}")
            return
        names = self.constant_binding(attr, node.args[0])
        if names is None:
            self.add(node, f"calls {name} with a computed attribute name", "the attribute it reaches cannot be "
                     "read in the file (write obj.name; a name from a literal list or from named_parameters() "
                     "is fine; a device's module is torch.get_device_module(device)); " + _NEVER)
        else:
            for attr_name in names:
                self.attribute_name(attr_name, node, called=False, store=store,
                                    shown=f"uses {name}(..., {attr_name!r})")

    def constant_binding(self, node: ast.AST, obj: ast.AST) -> list[str] | None:
        """The names a variable can hold, if every binding of it in its function is a loop over a literal list
        of strings ([those strings]), over a module's registry (named_parameters(): [], the names are the
        module's own) or over the listed namespace of `obj` itself (vars(obj).items(): [], names it already
        has); None if it can hold anything else."""
        if not isinstance(node, ast.Name):
            return None
        scope = self.parent.get(node)
        while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                           ast.Module)):
            scope = self.parent.get(scope)
        names: list[str] = []
        bound = False
        for other in ast.walk(scope) if scope is not None else ():
            if isinstance(other, ast.Name) and other.id == node.id and not isinstance(other.ctx, ast.Load):
                bound = True
                loop, target = self.loop_of(other)
                if loop is None:
                    return None
                iterable = _unwrap(loop.iter)
                constants = _str_constants(iterable)
                if constants is not None and target is other:
                    names += constants
                elif not (_first_of(target, other) and (_registry_list(iterable) or _namespace_of(iterable, obj))):
                    return None
            elif node.id in _other_bindings(other):
                return None  # a parameter (its caller decides), an import, a def, an `except ... as`
        return names if bound else None

    def loop_of(self, name: ast.Name) -> tuple[ast.AST | None, ast.AST | None]:
        """The for-loop (or comprehension) whose target binds `name`, and the target itself."""
        child, parent = name, self.parent.get(name)
        while isinstance(parent, ast.Tuple):
            child, parent = parent, self.parent.get(parent)
        if isinstance(parent, (ast.For, ast.comprehension)) and parent.target is child:
            return parent, child
        return None, None

    # ------------------------------------------------------------------ definitions and constants
    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if _is_dunder(node.name) and node.name not in ALLOWED_DUNDER_DEFS:
            self.add(node, f"defines the special method {node.name}", "special methods change how the grader's "
                     "own code sees an object (a finalizer runs during a collection; __torch_function__, __eq__ "
                     "or __float__ answer the checks in the object's place); " + _NEVER)
        self.annotations(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_MatchClass(self, node: ast.MatchClass) -> None:
        for attr in node.kwd_attrs:  # case Cls(attr=x) reads obj.attr
            self.attribute_name(attr, node, called=False, shown=f"matches {ast.unparse(node.cls)}({attr}=...)")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for kw in node.keywords:
            if kw.arg in ("metaclass", None):  # None: class A(**options), a metaclass unseen
                self.add(node, f"gives the class {node.name} a metaclass", "a metaclass decides what the class "
                         "and its instances answer, to the grader too; " + _NEVER)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.annotation(node.annotation)

    def annotations(self, node: ast.FunctionDef) -> None:
        """A string annotation is code too: typing.get_type_hints and functools.singledispatch evaluate it."""
        a = node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
            if arg is not None and arg.annotation is not None:
                self.annotation(arg.annotation)
        if node.returns is not None:
            self.annotation(node.returns)

    def annotation(self, node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                tree = ast.parse(node.value.strip(), mode="eval")
            except SyntaxError:
                return
            ast.increment_lineno(tree, node.lineno - 1)
            inner = _Policy.__new__(_Policy)
            inner.__dict__.update(self.__dict__, found=[], parent=dict(self.parent), nodes=list(ast.walk(tree)))
            for n in inner.nodes:
                for child in ast.iter_child_nodes(n):
                    inner.parent[child] = n
            inner.check_all()
            self.found += inner.found

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            hit = next((s for s in FORBIDDEN_SUBSTRINGS if s in node.value), None)
            if hit:
                self.add(node, f"mentions {hit!r}", "it names the grader's own machinery; " + _NEVER)
            v = node.value.strip().lower()
            if v == "sim" or v.startswith("sim:") or v in ("privateuseone", "privateuse1"):
                self.add(node, f"names the simulated accelerator ({node.value.strip()!r})", SIMULATOR_WHY)
