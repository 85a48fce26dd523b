"""The source policy's tables (grader.guard.policy): the modules a submission may import, the names and attributes
it may not use, and the strings it may not hold, each with why."""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------- imports
#: Top-level modules a submission may import: those the course's fixes use, and modules of plain data,
#: arithmetic and files. Nothing here runs a string, walks the heap or starts a thread.
ALLOWED_MODULES = frozenset({
    "torch", "numpy", "math", "cmath", "time", "timeit", "os", "gc", "sys", "copy", "functools", "itertools",
    "contextlib", "collections", "typing", "dataclasses", "random", "statistics", "numbers", "decimal",
    "fractions", "json", "io", "pathlib", "tempfile", "warnings", "enum", "abc", "operator", "heapq", "bisect",
    "re", "textwrap", "__future__", "multiprocessing",
    "posixpath", "ntpath",  # os.path's real names
})
#: Public parts of allowed packages that only serve to change or escape the grader.
DENIED_MODULE_PATHS = {
    "torch.overrides": "torch.overrides intercepts every torch call (TorchFunctionMode): the checks' own included",
    "torch.library": "torch.library registers kernels for torch's operators, the checks' own included",
    "torch.utils.backend_registration": "it registers accelerators; the simulated one is the grader's",
    "torch.utils.cpp_extension": "it compiles and loads native code, which no check can see into",
    "torch.utils.benchmark": "its Timer runs code given as a string",
    "torch.hub": "it imports Python files from a folder, which no check has read",
    "torch.package": "it imports Python code from an archive, which no check has read",
    "multiprocessing.dummy": "its workers are threads, and work on another thread hides from the checks",
    "torch.jit.fork": "it runs the function on torch's thread pool, and work on another thread hides from the "
                      "checks",
    "torch.distributed.rpc": "it runs functions on threads and processes of its own, out of the checks' sight",
    "multiprocessing.util": "its hooks run inside the grader when it forks or exits",
    "numpy.ctypeslib": "it reads and writes memory at any address",
    "numpy.f2py": "it compiles and loads native code",
    "numpy.distutils": "it compiles and loads native code",
    "numpy.lib.stride_tricks": "as_strided reads and writes memory outside the array",
    "sys.path": "changing where modules come from imports code no check has read",
    "sys.argv": "the command line says how the file is graded, which a fix never depends on",
    "sys.orig_argv": "the command line says how the file is graded, which a fix never depends on",
}
#: Modules whose underscore name is public in practice: torch.utils._pytree is how torch maps over nested
#: batches (two right fixes of the course use it); only its tree_* functions and key types.
ALLOWED_PRIVATE_MODULES = {"torch.utils._pytree"}
_PYTREE_PUBLIC = {"TreeSpec", "LeafSpec", "keystr", "SequenceKey", "MappingKey", "GetAttrKey"}
#: Modules of which only some names may be used (timeit's other functions run code given as a string).
ONLY_NAMES = {"timeit": {"default_timer"}}

# ---------------------------------------------------------------------------------------------- names
#: Builtins that reach every name or run a string.
REFLECTION = {
    "globals": "it hands out every global of the file, the builtins included",
    "locals": "it hands out every local variable by name",
    "vars": "with no argument it hands out every variable in scope, the builtins included",
    "__builtins__": "it is the table of every builtin, exec and __import__ included",
    "__import__": "it imports any module by a name built at run time",
    "exec": "it runs code given as a string, which no check has read",
    "eval": "it runs code given as a string, which no check has read",
    "compile": "it makes code from a string, which no check has read",
    "breakpoint": "it stops in a debugger, which a grading process has no one to answer",
    "help": "it imports modules by name and reads from the terminal",
    "__build_class__": "it builds classes behind the class statement's back",
}
#: Builtins for reading or writing an attribute by name.
DYNAMIC_ACCESS = {"getattr", "setattr", "delattr", "hasattr"}
#: operator's functions that read attributes or call methods by name.
NAMED_ACCESS = {"attrgetter", "methodcaller"}
#: Dunder names a file may use as variables.
ALLOWED_DUNDER_NAMES = {"__name__", "__file__", "__doc__", "__all__", "__slots__", "__debug__", "__annotations__"}

# ---------------------------------------------------------------------------------------------- attributes
#: Dunder attributes a fix reads: the constructor of a base class, names (strings) and versions, the container
#: protocol of a base (super().__getitem__).
ALLOWED_DUNDER_ATTRIBUTES = {"__init__", "__name__", "__qualname__", "__module__", "__doc__", "__version__",
                             "__len__", "__getitem__", "__iter__", "__next__", "__call__", "__enter__", "__exit__"}
#: Special methods a fix defines: a module's constructor, a dataset's protocol, a context manager.
ALLOWED_DUNDER_DEFS = {"__init__", "__len__", "__getitem__", "__iter__", "__next__", "__call__", "__enter__",
                       "__exit__", "__post_init__"}
#: Underscore attributes a fix may read: nn.Module's registries of parameters, buffers and submodules
#: (find_misplaced's fix reads them) and os._exit, public despite its name (ending the process early is graded as
#: a failure by the runner).
ALLOWED_PRIVATE_ATTRIBUTES = {"_parameters", "_buffers", "_modules", "_exit",
                              # namedtuple's documented API (default_collate tells a namedtuple by _fields)
                              "_fields", "_field_defaults", "_asdict", "_replace", "_make"}
#: Calls that list a module's registries, so a name taken from them is a registered name.
REGISTRY_LISTS = {"named_parameters", "named_buffers", "named_children", "named_modules"}

# Frames, tracebacks, code objects, generators and cells: each leads to the variables of the code that runs
# the submission (the grader's). After RestrictedPython's INSPECT_ATTRIBUTES, with what it leaves out.
_FRAME = {"f_back", "f_builtins", "f_code", "f_generator", "f_globals", "f_locals", "f_trace",
          "f_trace_lines", "f_trace_opcodes", "f_lasti"}
_TRACEBACK = {"tb_frame", "tb_next", "tb_lasti"}
_GENERATOR = {"gi_frame", "gi_code", "gi_yieldfrom", "gi_suspended", "gi_running",
              "cr_frame", "cr_code", "cr_await", "cr_origin", "cr_running", "cr_suspended",
              "ag_frame", "ag_code", "ag_await", "ag_running"}
INTERNALS = {**{a: "a frame" for a in _FRAME}, **{a: "a traceback" for a in _TRACEBACK},
             **{a: "a generator or coroutine" for a in _GENERATOR}, "cell_contents": "a closure cell"}
INTERNALS_WHY = "its parts reach the variables of the code that runs yours, the grader's"

#: Attribute names that reach the interpreter's machinery whatever object they are read on.
MACHINERY = {
    "modules": "the table of every loaded module, the grader's included",
    "meta_path": "it decides how modules are imported", "path_hooks": "it decides how modules are imported",
    "path_importer_cache": "it decides how modules are imported",
    "settrace": "a trace function sees every line the grader runs",
    "setprofile": "a profile function sees every call the grader makes",
    "settrace_all_threads": "a trace function sees every line the grader runs",
    "setprofile_all_threads": "a profile function sees every call the grader makes",
    "monitoring": "it sees every line and call the grader runs",
    "addaudithook": "an audit hook sees every import and file the grader opens",
    "callbacks": "gc.callbacks run inside the grader at each collection",
    "setrecursionlimit": "the recursion limit decides where the grader's own code fails",
    "setswitchinterval": "it decides when the grader's threads run",
    "get_objects": "it hands out every object of the process, the grader's included",
    "get_referrers": "it hands out the objects that hold a given one, the grader's included",
    "get_referents": "it hands out the objects a given one holds",
    "garbage": "with gc.DEBUG_SAVEALL it keeps every object the grader let go",
    "set_debug": "gc.DEBUG_SAVEALL keeps every object the grader let go, in gc.garbage",
    "import_module": "it imports any module by a name built at run time",
    "resolve_name": "it imports any module by a name built at run time",
    "locate": "it imports any module by a name built at run time",
    "cudart": "CUDA's runtime copies memory between any two addresses of the process",
    "excepthook": "it runs on the grader's own errors", "unraisablehook": "it runs on the grader's own errors",
    "displayhook": "it runs inside the interpreter's loop", "breakpointhook": "it replaces breakpoint()",
    "remote_exec": "it runs code given as a string", "call_tracing": "it runs a call under the trace function",
    "mro": "a class's bases lead to every class of the process (type.mro, like __subclasses__)",
    "get_type_hints": "it evaluates annotation strings, code that no check has read",
    "CodeType": "it makes code from raw bytecode", "FunctionType": "it makes functions from code objects",
    "make_dataclass": "it builds a class from a dictionary of methods",
    "TorchFunctionMode": "a torch-function mode intercepts every torch call, the checks' own included",
    "TorchDispatchMode": "a dispatch mode intercepts every operation, the checks' own included",
    "load_library": "it loads native code",
    "register_at_fork": "it runs code in the grader's own forks",
    "ThreadPool": "its workers are threads, and work on another thread hides from the checks",
    "system": "it runs a program, outside every check", "popen": "it runs a program, outside every check",
    **{name: "it runs a program, outside every check" for name in (
        "execl", "execle", "execlp", "execlpe", "execv", "execve", "execvp", "execvpe", "spawnl", "spawnle",
        "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "posix_spawn", "posix_spawnp")},
}
#: Modules outside the allow-list that allowed ones hand out as attributes (torch.ctypes, enum.bltns is builtins,
#: dataclasses.copyreg...): those that run strings, import by name, patch by name, or start threads.
DENIED_MODULE_ATTRIBUTES = {"ctypes", "ctypeslib", "importlib", "inspect", "builtins", "threading", "signal",
                            "faulthandler", "subprocess", "pickle", "marshal", "runpy", "types", "weakref",
                            "atexit", "traceback", "pytest", "pluggy", "grader", "overrides", "stride_tricks",
                            "cpp_extension", "backend_registration", "bltns", "concurrent", "copyreg", "pkgutil",
                            "string", "unittest", "mock", "logging", "socket", "typing_extensions"}

# ---------------------------------------------------------------------------------------------- strings
FORBIDDEN_SUBSTRINGS = ("PYTEST_CURRENT_TEST", "_python_dispatch", "dispatch_mode", "grade-report")
SIMULATOR_WHY = "code that works on any device never needs to"

_NEVER = "a device fix never needs it"
