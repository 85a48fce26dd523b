"""What learner code may not do at run time, whoever does it on its behalf (PEP 578 audit hooks).

The source policy (grader.guard.policy) reads the submission's text; some text it cannot read still becomes code when
the file runs: a pickle names any function to call (`torch.load(weights_only=False)`, `numpy.load(allow_pickle=
True)`, `ForkingPickler.loads`), and `typing.get_type_hints` (which `functools.singledispatch` calls) evaluates a
string annotation. And some routes to the grader's memory have names the policy cannot tell from harmless ones
(`_s = sys; vars(_s)`). `install()` adds an audit hook to the grading process that refuses, when the code that
asked is the learner's (the nearest frame on the stack that is not the standard library's; the learner's file, or
code made at run time), what no fix needs:

* running code made from text or bytes (`exec`, `eval`, `compile`, `marshal.loads`, a new code object, a
  function's `__code__` or defaults replaced), but for the standard library's own code generation that learner
  code uses through documented APIs (namedtuple, dataclasses) and code of installed files (imports);
* unpickling a global outside a short allow-list (tensors, storages, dtypes, plain containers, NumPy arrays,
  torch's modules and optimizers, torch.multiprocessing's rebuild functions), whoever unpickles;
* walking the heap (`gc.get_objects`, `gc.get_referrers`, `gc.get_referents`), reaching frames (`sys._getframe`,
  `sys._current_frames`, a traceback's, generator's or coroutine's frame) or a function's defaults, where the
  grader keeps what it must not lose (grader.engine.plugin);
* `ctypes`, reading a process's memory through `/proc/PID/mem`, starting programs, trace and audit hooks.

Torch's own code generation (torch.compile: dynamo's bytecode, inductor's modules and compilers) asks from
torch's frames and goes on. Each refusal raises `Refused` where it happened and is kept in a list that only the
hook's private namespace holds (`take_refusals`): the plugin fails the check that made it even if the learner's
code caught the exception and cleared what it could reach. Audit hooks are not a
sandbox on their own (native code raises no events); they stand behind the policy and the OS (grader.guard.sandbox).
"""

from __future__ import annotations

import _compat_pickle
import os
import site
import sys
import sysconfig
import threading
import types

import torch

import grader

_STDLIB = os.path.realpath(sysconfig.get_paths()["stdlib"]) + os.sep
_INSTALLED = tuple(dict.fromkeys(os.path.realpath(p) + os.sep for p in (
    sys.prefix, sys.base_prefix, sys.exec_prefix, sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
    *site.getsitepackages(), site.getusersitepackages(), os.path.dirname(torch.__file__),
    os.path.dirname(os.path.abspath(grader.__file__)))))
_GRADER = os.path.realpath(os.path.dirname(os.path.abspath(grader.__file__))) + os.sep
_CHECKS = _GRADER + "checks" + os.sep


class Refused(RuntimeError):
    """Something learner code asked for that the grader does not run; the message says what and why."""



_LEARNER, _LIBRARY, _STANDARD = "learner", "library", "standard"
_kinds: dict[str, str] = {}


def _kind(filename: str) -> str:
    """Whose code a file name is: the standard library's (frozen modules included), an installed library's or the
    grader's, else the learner's (the submission, code made at run time, a file it wrote)."""
    kind = _kinds.get(filename)
    if kind is None:
        if filename.startswith("<frozen"):
            kind = _STANDARD
        elif not os.path.isabs(filename):
            kind = _LEARNER
        else:
            real = os.path.realpath(filename)
            if real.startswith(_GRADER):
                kind = _LIBRARY
            elif real.startswith(_STDLIB):
                kind = _STANDARD
            else:
                kind = _LIBRARY if real.startswith(_INSTALLED) else _LEARNER
        _kinds[filename] = kind
    return kind


def _installed(filename: str) -> bool:
    """A file of the Python environment or the grader (which a grading process cannot write: grader.guard.sandbox)."""
    return _kind(filename) != _LEARNER and os.path.isabs(filename)


#: Standard modules that generate code, or read the caller's frame, for documented APIs a fix may use, from text
#: they build themselves out of identifiers; they hand no frame and no code of the caller's choosing back:
#: collections.namedtuple and dataclasses make methods; namedtuple, enum and typing's NamedTuple and TypedDict read
#: the caller's module name. typing evaluates string annotations too, so only its ForwardRef's compile (which runs
#: nothing) is among the code generators.
_MAKE_CODE = {os.path.join(_STDLIB, "collections", "__init__.py"): None, os.path.join(_STDLIB, "dataclasses.py"): None,
              os.path.join(_STDLIB, "typing.py"): {"__init__"}}
_READ_FRAMES = {os.path.join(_STDLIB, name): None for name in (os.path.join("collections", "__init__.py"),
                                                               "dataclasses.py", "enum.py", "typing.py")}


def _asker(frame) -> tuple[str, object]:
    """Who asked for what an event does: the kind of the nearest frame that is not the standard library's, and
    the innermost frame (the one that called into C)."""
    first = frame
    while frame is not None:
        code = frame.f_code
        kind = _LIBRARY if id(code) in _library_made else _kind(code.co_filename)
        if kind != _STANDARD:
            return kind, first
        frame = frame.f_back
    return _LIBRARY, first  # only the standard library's frames: the interpreter's own start-up


def _documented(frame, allowed: dict) -> bool:
    """Whether `frame` runs in one of `allowed`'s standard modules (in one of its functions, where it names some)."""
    code = frame.f_code
    path = code.co_filename if code.co_filename.startswith(_STDLIB) else os.path.realpath(code.co_filename)
    if path not in allowed:
        return False
    functions = allowed[path]
    return functions is None or code.co_name in functions


_inside: set[int] = set()  # threads whose hook is running (its own sys._getframe raises an event)


def _learner_asked(standard_ok: dict | None = None, importing: bool = False) -> bool:
    """Whether the learner's code asked for the current event. `standard_ok`: standard modules (and functions)
    that may do it for the learner, when they raised the event. `importing`: importlib (frozen) may, loading a
    module of the Python environment."""
    me = threading.get_ident()
    if me in _inside:
        return False
    _inside.add(me)
    try:
        frame = sys._getframe(3)  # _learner_asked, the rule, the hook: then the code that raised the event
        kind, first = _asker(frame)
        if kind != _LEARNER:
            return False
        if importing and first.f_code.co_filename.startswith("<frozen importlib"):
            return False
        return not (standard_ok and _kind(first.f_code.co_filename) == _STANDARD and _documented(first, standard_ok))
    finally:
        _inside.discard(me)


def _refuse(what: str, why: str) -> None:
    text = f"{what}: {why}"
    refusals.append(text)
    raise Refused(f"the grader does not run this: {text}")


_RUN_TEXT = ("code made while the file runs (from a string, bytes or a pickle) is code the grader never read "
             "before it ran; write the code in the file itself")


def _on_compile(args) -> None:
    filename = args[1]
    importing = isinstance(filename, str) and _installed(filename)  # importlib compiling a module without a .pyc
    if _learner_asked(standard_ok=_MAKE_CODE, importing=importing):
        _refuse("compiling text into code (compile, exec or eval of a string, a string annotation evaluated)",
                _RUN_TEXT)
    elif _a_field_named_by_code():
        _refuse("a dataclass field whose name is not an identifier", "dataclasses writes each field's name into "
                "the code it generates, so such a name is code the grader never read")


_DATACLASSES = os.path.join(_STDLIB, "dataclasses.py")
_KEYWORDS = frozenset(__import__("keyword").kwlist)


def _a_field_named_by_code() -> bool:
    """Whether the text being compiled is a dataclass's methods (dataclasses._process_class on the stack) and a
    field's name, in the class's annotations, its fields or a base's, is not an identifier: dataclasses checks
    none (make_dataclass and namedtuple do), and a Field's name can be changed after its class is made."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "_process_class" and code.co_filename == _DATACLASSES:
            scope = frame.f_locals
            fields = scope.get("fields") or {}
            names = [*fields, *(getattr(f, "name", None) for f in fields.values()),
                     *(scope.get("cls_annotations") or {})]
            return not all(isinstance(n, str) and n.isidentifier() and n not in _KEYWORDS for n in names)
        frame = frame.f_back
    return False


def _on_exec(args) -> None:
    code = args[0]
    filename = getattr(code, "co_filename", "")
    importing = bool(filename) and _installed(filename)  # an import of an installed module
    if _learner_asked(standard_ok=_MAKE_CODE, importing=importing):
        _refuse("running a code object (exec or eval)", _RUN_TEXT)
    if importing or os.path.isabs(filename):  # a file's code (the grader runs the scanned file so) is its file's
        return
    # made from text for the learner by a standard code generator, or by a library for itself (dynamo's guards,
    # fx's GraphModules: their file names, '<string>', '<eval_with_key>.3', are no path)
    _remember(code, generated if _learner_asked() else _library_made)


#: Code objects the standard library generated for the learner's code (namedtuple's __new__, a dataclass's
#: __init__), by id, with the objects kept alive: grader.engine.submission accepts them as the file's own.
generated: dict[int, object] = {}
#: Code objects a library (torch) made from text for itself and ran: their frames are the library's.
_library_made: dict[int, object] = {}


def _remember(code, into: dict) -> None:
    into[id(code)] = code
    for const in getattr(code, "co_consts", ()):
        if hasattr(const, "co_consts"):
            _remember(const, into)


def _on_code(args) -> None:
    if _learner_asked():
        _refuse("making a code object", _RUN_TEXT)


def _on_marshal(args) -> None:
    if _learner_asked(importing=True):  # importlib reads the .pyc of what it imports (its code is checked: exec)
        _refuse("loading code from bytes (marshal)", _RUN_TEXT)


_FRAME_ATTRIBUTES = {"tb_frame", "gi_frame", "cr_frame", "ag_frame"}
_FUNCTION_PARTS = {"__defaults__", "__kwdefaults__"}


def _on_getattr(args) -> None:
    name = args[1]
    if name in _FRAME_ATTRIBUTES:
        if _learner_asked():
            _refuse(f"reading .{name}", "frames hold the grader's variables, which a fix never reads")
    elif name in _FUNCTION_PARTS and not _learners_function(args[0]) and _learner_asked():
        _refuse(f"reading {name} of a function that is not the file's", "the grader keeps its own state there; a "
                "fix calls such functions, it never reads their parts")


def _learners_function(function) -> bool:
    code = getattr(function, "__code__", None)
    return code is not None and _kind(code.co_filename) == _LEARNER and id(code) not in _library_made


def _on_setattr(args) -> None:
    name = args[1]
    if name in ("__code__", "__defaults__", "__kwdefaults__", "__globals__", "__closure__") and _learner_asked():
        _refuse(f"replacing a function's {name}", "a function must run the code it was defined with")


def _on_frames(args) -> None:
    if _learner_asked(standard_ok=_READ_FRAMES):
        _refuse("reaching the call stack's frames (sys._getframe, sys._current_frames, inspect)",
                "frames hold the grader's variables, which a fix never reads")


def _on_heap(args) -> None:
    if _learner_asked():
        _refuse("walking the heap (gc.get_objects, get_referrers, get_referents)", "it reaches every object of the "
                "process, the grader's included, under no name the file shows")


def _on_ctypes(args) -> None:
    if _learner_asked():
        _refuse("ctypes", "it reads and writes memory at any address")


def _on_program(args) -> None:
    if _learner_asked():
        _refuse("starting a program", "a program's code is out of the checks' sight (processes of this Python, "
                "multiprocessing's and a DataLoader's workers, are fine)")


def _on_trace(args) -> None:
    # The interpreter itself clears a trace function that raised (the grader's CPU-time stop, grader.engine.deferred_stop,
    # raises from one in the learner's frame), raising this event there: a library's trace function may go.
    current = sys.gettrace()
    if current is not None and not _learners_function(current) and hasattr(current, "__code__"):
        return
    _on_hook(args)


def _on_hook(args) -> None:
    if _learner_asked():
        _refuse("setting a trace, profile or audit hook", "it runs code of the file's inside the grader's own")


_MEMORY_FILES = {"mem", "pagemap"}


def _on_open(args) -> None:
    path = args[0]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str) or os.path.basename(path) not in _MEMORY_FILES:
        return
    # a relative name may be opened in a folder the event does not show (dir_fd); resolving /proc's links may
    # itself be refused by the confinement, which is no reason to let the open through
    try:
        inside_proc = not os.path.isabs(path) or os.path.realpath(path).startswith("/proc/")
    except OSError:
        inside_proc = True
    if inside_proc:
        _refuse(f"opening {path}", "it reads the grading process's memory, where the grader keeps its own state")


def _on_symlink(args) -> None:
    if _learner_asked():
        _refuse("making a symbolic link", "a link can give the process's memory (/proc) a name of the file's choosing")


_ALLOWED_GLOBALS: frozenset[str] = frozenset()
_ALLOWED_GLOBAL_PREFIXES = ("torch.multiprocessing.reductions.", "torch.storage.", "torch._utils._rebuild",
                            "torch.nn.parameter.", "torch.utils.data._utils.")
_MORE_GLOBALS = {
    "builtins.list", "builtins.dict", "builtins.tuple", "builtins.set", "builtins.frozenset", "builtins.slice",
    "builtins.range", "builtins.complex", "builtins.bytearray", "builtins.bytes", "builtins.int", "builtins.float",
    "builtins.str", "builtins.bool", "builtins.object", "copyreg._reconstructor", "copyreg.__newobj__",
    "collections.OrderedDict", "collections.defaultdict", "collections.deque", "collections.Counter",
    "torch.device", "torch.Size", "torch.dtype", "torch.Tensor", "torch._tensor._rebuild_from_type_v2",
    "numpy.ndarray", "numpy.dtype", "numpy.core.multiarray._reconstruct", "numpy._core.multiarray._reconstruct",
    "numpy.core.multiarray.scalar", "numpy._core.multiarray.scalar", "numpy.random._pickle.__randomstate_ctor",
    "numpy.random._pickle.__bit_generator_ctor", "numpy.random._pickle.__generator_ctor",
    # a DataLoader worker's batch and errors (torch.multiprocessing's file-descriptor sharing)
    "multiprocessing.resource_sharer.DupFd", "torch._utils.ExceptionWrapper",
}


def _allowed_globals() -> frozenset[str]:
    """torch's own weights-only allow-list (what `torch.load(weights_only=True)` rebuilds), with plain containers
    and NumPy's arrays: what a checkpoint or a DataLoader worker's batch holds."""
    names = set(_MORE_GLOBALS)
    try:
        from torch import _weights_only_unpickler

        names |= set(_weights_only_unpickler._get_allowed_globals())
    except (ImportError, AttributeError):
        pass
    return frozenset(names)


def _torch_class(module: str, name: str) -> bool:
    """torch's modules, optimizers and schedulers (a whole model saved with torch.save): classes only."""
    if not module.startswith(("torch.nn.", "torch.optim.")) or name.startswith("_"):
        return False
    found = getattr(sys.modules.get(module), name, None)
    return isinstance(found, type) and issubclass(found, (torch.nn.Module, torch.optim.Optimizer,
                                                          torch.optim.lr_scheduler.LRScheduler))


def _exception_class(module: str, name: str) -> bool:
    """An exception class of a module already imported: a DataLoader worker sends its error back as a pickle
    (torch._utils.ExceptionWrapper), rebuilt by calling the class, which runs no code but the exception's own."""
    found = getattr(sys.modules.get(module), name, None)
    return isinstance(found, type) and issubclass(found, BaseException)


def _a_check_modules(module: str) -> bool:
    """A hidden check module's own global (load_checkpoint's check plants a payload of its own, to see whether the
    learner's load runs it)."""
    path = getattr(sys.modules.get(module), "__file__", None) or ""
    return os.path.realpath(path).startswith(_CHECKS)


def _on_find_class(args) -> None:
    module, name = args[0], args[1]
    if (module, name) in _compat_pickle.NAME_MAPPING:  # protocol 2's Python 2 names (torch.save's default)
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    module = _compat_pickle.IMPORT_MAPPING.get(module, module)
    full = f"{module}.{name}"
    if (full in _ALLOWED_GLOBALS or full.startswith(_ALLOWED_GLOBAL_PREFIXES) or _torch_class(module, name)
            or _exception_class(module, name) or _a_check_modules(module)):
        return
    _refuse(f"unpickling {full}", "a pickle may name any function to call, which runs code no check has read; "
            "the grader unpickles only tensors, arrays, plain containers and torch's modules (save a state_dict, "
            "and load it with weights_only=True)")


_RULES = {
    "compile": _on_compile, "exec": _on_exec, "code.__new__": _on_code, "marshal.loads": _on_marshal,
    "marshal.load": _on_marshal, "object.__getattr__": _on_getattr, "object.__setattr__": _on_setattr,
    "sys._getframe": _on_frames, "sys._current_frames": _on_frames, "sys._current_exceptions": _on_frames,
    "gc.get_objects": _on_heap, "gc.get_referrers": _on_heap, "gc.get_referents": _on_heap,
    "subprocess.Popen": _on_program, "os.system": _on_program, "os.exec": _on_program, "os.posix_spawn": _on_program,
    "os.spawn": _on_program, "pty.spawn": _on_program, "os.startfile": _on_program,
    "sys.settrace": _on_trace, "sys.setprofile": _on_hook, "sys.addaudithook": _on_hook,
    "open": _on_open, "os.symlink": _on_symlink, "pickle.find_class": _on_find_class,
    **{f"ctypes.{e}": _on_ctypes for e in ("dlopen", "dlsym", "dlsym/handle", "addressof", "call_function",
                                            "cdata", "cdata/buffer", "create_string_buffer", "create_unicode_buffer",
                                            "string_at", "wstring_at", "get_errno", "set_errno", "PyObj_FromPtr")},
}

def sealed_copy(namespace: dict, names) -> dict:
    """A private copy of a module's globals in which the functions `names` are copies bound to that copy: code that
    reaches the module (a module under a plain name) and rebinds a helper, poisons a cache or clears a table
    changes the module, not what the copies call. The copies are handed out only where learner code cannot read
    them (the audit hook, which nothing lists; a function's defaults, which grader.guard.audit_hooks refuses to learner code):
    a copy's __globals__ is the private namespace."""
    private = dict(namespace)
    for name in names:
        original = namespace[name]
        copy = types.FunctionType(original.__code__, private, original.__name__, original.__defaults__)
        copy.__kwdefaults__ = original.__kwdefaults__
        private[name] = copy
    return private


_PRIVATE = ("_kind", "_installed", "_a_field_named_by_code", "_asker", "_documented", "_learner_asked", "_refuse", "_remember",
            "_learners_function", "_torch_class", "_exception_class", "_a_check_modules", "learner_on_stack", "learner_asks", *(f.__name__ for f in set(_RULES.values())))


def _snapshot(module, nested=()) -> types.SimpleNamespace:
    """The attributes of `module` as they are now, in an object only the private namespace holds: code that reaches
    the module and rebinds what the hook calls (`sys._getframe` made to return None made every event look like the
    interpreter's start-up) changes the module, not the snapshot."""
    taken = types.SimpleNamespace(**vars(module))
    for name in nested:
        setattr(taken, name, _snapshot(getattr(module, name)))
    return taken


def _make_private() -> dict:
    import builtins

    namespace_tables = globals()
    private = sealed_copy(namespace_tables, _PRIVATE)
    # The modules and builtins the hook's functions call, as they are now (the module's own are rebindable)
    private.update(sys=_snapshot(sys), os=_snapshot(os, ("path",)), threading=_snapshot(threading),
                   types=_snapshot(types), sysconfig=_snapshot(sysconfig), __builtins__=dict(vars(builtins)))
    private["_kinds"] = {}  # a cache of its own
    # What was refused so far (the plugin fails the check that made a refusal, caught or not): a list no module
    # holds, so that learner code cannot take a refusal back (take_refusals)
    private["refusals"] = []
    private["_library_made"] = {}  # what the module's own dict holds is never read by the hook
    private["_inside"] = set()
    # tables of their own, read-only: the module's are objects a submission could reach and fill
    for name in ("_MAKE_CODE", "_READ_FRAMES"):
        private[name] = types.MappingProxyType({path: None if functions is None else frozenset(functions)
                                                for path, functions in namespace_tables[name].items()})
    for name in ("_FRAME_ATTRIBUTES", "_FUNCTION_PARTS", "_MEMORY_FILES", "_INSTALLED"):
        private[name] = frozenset(namespace_tables[name]) if name != "_INSTALLED" else tuple(namespace_tables[name])
    private["_installed_hook"] = [False]  # set by install(): before it, no learner code has run here
    private["_RULES"] = {event: private[rule.__name__] for event, rule in _RULES.items()}
    return private


def private(name: str, *, _private=None):
    """The private copy of one of this module's functions (learner_on_stack, for the channel's send), for the
    grader to hold in a function's defaults before learner code runs; refused to learner code."""
    if _private["learner_asks"]():
        raise Refused("the grader does not run this: asking for the grader's private functions")
    return _private[name]


_installed_hook = [False]


def install(*, _private=None) -> None:
    """Refuse, from now on and for good (audit hooks cannot be removed), what the module docstring lists. Called
    in each grading process once the checks are collected, before the submission is loaded; never in a zygote."""
    if _installed_hook[0]:
        return
    _private["_ALLOWED_GLOBALS"] = _allowed_globals()
    _private["_installed_hook"][0] = True

    def hook(event, args, _get=_private["_RULES"].get):
        rule = _get(event)
        if rule is not None:
            rule(args)

    # the hook itself with the private namespace as its globals: nothing lists audit hooks, and nothing else
    # holds it
    sys.addaudithook(types.FunctionType(hook.__code__, _private, "hook", hook.__defaults__))
    _installed_hook[0] = True
    _guard_signal_handlers(_private)
    _guard_program_starts(_private)


def _guard_signal_handlers(private: dict) -> None:
    """A signal handler is called with the frame the signal interrupted, whose callers hold the grader's variables,
    and setting one raises no audit event: `_signal.signal` (which `signal.signal` calls) is replaced by a copy
    that refuses learner code, holding the original where learner code cannot read it. Before the baseline is
    taken, so the replacement is what the baseline keeps."""
    import _signal

    def guarded_signal(signalnum, handler, *, _original=_signal.signal, _asker=private["_asker"],
                       _getframe=sys._getframe, _refuse=private["_refuse"]):
        if _asker(_getframe(1))[0] == "learner":  # torch's own (a DataLoader's SIGCHLD handler) go on
            _refuse("installing a signal handler", "a handler is called with the frame the signal interrupts, "
                    "which holds the grader's variables")
        return _original(signalnum, handler)

    _signal.signal = guarded_signal


def _guard_program_starts(private: dict) -> None:
    """`_posixsubprocess.fork_exec` starts a program without an audit event of its own (subprocess raises one
    before it calls it; `multiprocessing.util.spawnv_passfds`, which multiprocessing's spawn start method uses,
    does not): replaced, like `_signal.signal`, by a copy that refuses learner code. Torch's own (a DataLoader
    whose workers are spawned) go on."""
    import _posixsubprocess

    def guarded_fork_exec(*args, _original=_posixsubprocess.fork_exec, _asker=private["_asker"],
                          _getframe=sys._getframe, _refuse=private["_refuse"]):
        if _asker(_getframe(1))[0] == "learner":
            _refuse("starting a program (multiprocessing's spawn start method)", "a new interpreter runs "
                    "outside the checks' sight and without the grader's guard (forked processes are fine)")
        return _original(*args)

    _posixsubprocess.fork_exec = guarded_fork_exec


def installed_code(code) -> bool:
    """Whether a code object was compiled from a file of the Python environment or the grader."""
    filename = code.co_filename
    return os.path.isabs(filename) and _kind(filename) != _LEARNER


def library_class(klass: type) -> bool:
    """A class of an installed module, found under its own name there (builtins, torch's, NumPy's)."""
    module = sys.modules.get(getattr(klass, "__module__", None) or "")
    found = module
    for part in klass.__qualname__.split("."):
        found = getattr(found, part, None)
    if found is not klass:
        return False
    path = getattr(module, "__file__", None)
    return path is None or _kind(path) != _LEARNER


#: Where a grading process starts grading (grader.engine.grading_process._run, grader.engine.batch._answer_process): the frames below
#: are the zygote's, forked, which ran no learner code (a test that serves a daemon has its own frames there).
_BASE_NAMES = frozenset({"_run", "_answer_process"})  # frozen: the private copy shares these objects
_BASE_FILES = frozenset({os.path.join(_GRADER, "engine", "grading_process.py"), os.path.join(_GRADER, "engine", "batch.py")})


def learner_on_stack() -> bool:
    """Whether any frame of this thread's stack is the learner's (for the grader's functions that must not be
    called on its behalf)."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name in _BASE_NAMES and os.path.realpath(code.co_filename) in _BASE_FILES:
            return False  # the grading process's own start: what called it is not graded (a test's daemon)
        if _kind(code.co_filename) == _LEARNER and id(code) not in _library_made:
            return True
        frame = frame.f_back
    return False


def learner_asks() -> bool:
    """learner_on_stack(), once the guard is installed in this process (before, no learner code has run here:
    a test process that runs the plugin itself, whose own test files are not the grader's)."""
    return _installed_hook[0] and learner_on_stack()


def message(refused: list[str]) -> str:
    shown = "; ".join(dict.fromkeys(refused))
    return (f"your code asked for what the grader does not run ({shown}). The grader refused it, and this check "
            "counts as failed even where your code went on.")


_sealed = _make_private()
private.__kwdefaults__ = {"_private": _sealed}
install.__kwdefaults__ = {"_private": _sealed}


def refused_sending(*, _private=None) -> None:
    text = ("sending a record on the grading channel: only the grader reports a check's result")
    _private["refusals"].append(text)
    raise Refused(f"the grader does not run this: {text}")


def take_refusals(*, _private=None) -> list[str]:
    """What was refused since the last call (the plugin asks after every call of learner code)."""
    refusals = _private["refusals"]
    taken = list(refusals)
    refusals.clear()
    return taken


refused_sending.__kwdefaults__ = {"_private": _sealed}
take_refusals.__kwdefaults__ = {"_private": _sealed}
del _sealed
