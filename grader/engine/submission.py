"""Load a learner's code from a `.py` file or from a notebook's code cells, turning every way it can be
broken (syntax error, crash at import, missing name) into a clear, learner-facing message."""

from __future__ import annotations

import functools
import linecache
import traceback
import types
from pathlib import Path

from grader.guard import integrity, learner_values

_MISSING = object()


class SubmissionError(Exception):
    """The learner's file cannot be used; the message says why, in the learner's terms."""


def source_of(path: Path) -> str:
    """The Python source of a submission. Notebooks contribute their code cells, in order; IPython
    magics and shell escapes are commented out, since graders run plain Python."""
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8")
    import nbformat  # here, not at the top: it costs a second (its JSON-schema checks), for notebooks only

    nb = nbformat.read(path, as_version=4)
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        lines = [f"# {ln}" if ln.lstrip().startswith(("%", "!")) else ln for ln in cell.source.splitlines()]
        cells.append("\n".join(lines))
    return "\n\n".join(cells) + "\n"


def _where(exc: BaseException, filename: str) -> str:
    """' (line N, in func)' for the innermost frame of the learner's file, if any."""
    frames = _frames_in(exc, filename)
    if not frames:
        return ""
    lineno, name, line = frames[-1]
    return f" (line {lineno}, in {name}: `{line}`)"


def _frames_in(exc: BaseException, filename: str) -> list[tuple[int, str, str]]:
    """(line, function, source line) of each frame of `filename` that `exc` went through, outermost first. Only
    those frames' lines are read: traceback.extract_tb reads the source of every frame (torch's, pytest's), which
    was a tenth of a failing check's time."""
    return [(lineno, frame.f_code.co_name, linecache.getline(filename, lineno).strip() if lineno else "")
            for frame, lineno in traceback.walk_tb(exc.__traceback__) if frame.f_code.co_filename == filename]


#: Frames of the learner's file kept in a trace: the outermost and the innermost ones, the middle elided.
TRACE_HEAD, TRACE_TAIL = 2, 4


def learner_trace(exc: BaseException | None, filename: str) -> list[tuple[int, str, str]]:
    """(line, function, source line) of each frame of the learner's file where `exc` went through, outermost
    first. A grader's failure that wraps the learner's exception (raised `from None` in `expect.running`, or a
    SubmissionError) still carries it as its context: the chain is followed to the first exception with such
    frames. A long run of frames (deep recursion) keeps its ends and a `(None, "...", "N more")` marker."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        frames = _frames_in(exc, filename)
        if frames:
            if len(frames) > TRACE_HEAD + TRACE_TAIL + 1:
                hidden = len(frames) - TRACE_HEAD - TRACE_TAIL
                frames = frames[:TRACE_HEAD] + [(None, "...", f"{hidden} more")] + frames[-TRACE_TAIL:]
            return frames
        exc = exc.__cause__ or exc.__context__
    return []


def describe_exception(exc: BaseException, filename: str) -> str:
    """One line: the exception and where in the learner's file it came from."""
    return f"{_type_name(exc)}: {exception_text(exc)}{_where(exc, filename)}"


def _type_name(exc: BaseException) -> str:
    name = type.__dict__["__name__"].__get__(type(exc))  # not a name the learner's metaclass could make up
    return name if type(name) is str else "an exception"


def exception_text(exc: BaseException) -> str:
    """str(exc), or a stand-in where the learner's exception class makes that raise."""
    try:
        text = str(exc)
        return text if type(text) is str else "(a message that is not text)"
    except BaseException:  # noqa: BLE001 - an exception whose __str__ raises must not end the grading
        return "(a message that could not be shown)"


def _verify_loaded(name: str) -> None:
    """What the file's top level may not leave behind (grader.guard.audit): checked before any check runs."""
    from grader.guard import audit

    from grader.guard import audit_hooks as guard

    try:
        audit.verify()
    except audit.Tainted as exc:
        raise SubmissionError(f"{name}, at its top level: {exc}") from None
    refused = guard.take_refusals()
    if refused:
        raise SubmissionError(f"{name}, at its top level: {guard.message(refused)}")


#: The sources that compiled and passed the source policy in this process, by (file name, name shown, source):
#: each check loads the submission afresh (a module of its own), but a grading process grades one submission,
#: whose scanning costs more than a small check itself. The code object itself is made again for each load:
#: torch.compile caches its work on a function's code object and puts the compiled function in the globals of the
#: module that first ran it, so a code object shared by two loads ran, in the second, code naming a global only
#: the first had (NameError: __compiled_fn_1_... is not defined).
_VETTED: set[tuple[str, str, str]] = set()


def _vetted_code(source: str, filename: str, display_name: str) -> types.CodeType:
    """`source` compiled, once it passed the source policy (grader.guard.integrity.check_source)."""
    key = (filename, display_name, source)
    try:
        code = compile(source, filename, "exec")
    except SyntaxError as exc:
        raise SubmissionError(
            f"{display_name} has a syntax error at line {exc.lineno}: {exc.msg}"
            f"{': ' + exc.text.strip() if exc.text else ''}. Fix it so the file runs, then check again."
        ) from None
    if key in _VETTED:
        return code
    try:
        integrity.check_source(source, display_name)
    except integrity.IntegrityError as exc:
        raise SubmissionError(str(exc)) from None
    _VETTED.add(key)
    return code


class Submission:
    """A learner's module. Attribute access of a missing name fails with a message, not an AttributeError
    deep inside a grader."""

    def __init__(self, path: Path, display_name: str | None = None):
        self.path = Path(path)
        self.display_name = display_name or self.path.name
        self.filename = str(self.path.resolve())
        try:
            source = source_of(self.path)
        except FileNotFoundError:
            raise SubmissionError(f"{self.display_name} does not exist.") from None
        except Exception as exc:  # an unreadable notebook, bad encoding...
            raise SubmissionError(f"{self.display_name} could not be read: {exc}") from None
        code = _vetted_code(source, self.filename, self.display_name)
        self._scanned = _code_objects(code)
        # The lines that run, for the messages that quote them: a notebook's file is JSON, not this source.
        linecache.cache[self.filename] = (len(source), None, source.splitlines(True), self.filename)
        module = types.ModuleType(self.path.stem)
        module.__file__ = self.filename
        try:
            exec(code, module.__dict__)
        except (Exception, SystemExit) as exc:  # exit() in a learner's file must not end the grader
            raise SubmissionError(
                f"running {self.display_name} failed before any check could start: "
                f"{describe_exception(exc, self.filename)}"
            ) from None
        finally:
            _verify_loaded(self.display_name)
        self.module = module
        self.verify_scanned()

    def verify_scanned(self) -> None:
        """Every function and class among the module's globals runs code compiled from the scanned source (or
        an installed library's, or the standard library's generated for it: namedtuple, dataclasses): code made
        from text that the source policy never read (a pickle, a string annotation) and bound to a name of the
        file would otherwise be what the checks call. Called after loading and after every call of its code."""
        scanned = self.__dict__["_scanned"]
        for name, value in list(vars(self.__dict__["module"]).items()):
            if not name.startswith("__"):  # special names, and the globals torch.compile adds (__compiled_fn_1...)
                where = _unscanned(value, scanned)
                if where:
                    raise SubmissionError(
                        f"{self.display_name}: `{name}` is no longer the code of the file ({where} was made while the "
                        "file ran, from text the grader never read). Write every function in the file itself.")

    def __getattr__(self, name: str):
        try:
            found = getattr(self.__dict__["module"], name)
        except (KeyError, AttributeError):
            found = _MISSING
        if found is not _MISSING:
            self.verify_scanned()
        if type(found) is types.FunctionType:  # what a check calls: its results are vetted (grader.guard.learner_values)
            return _vetting(found, name, self)
        if found is _MISSING:
            raise SubmissionError(
                f"{self.display_name} defines no `{name}`; the exercise asks for it (was it renamed or deleted?).")
        return found


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _code_objects(code: types.CodeType) -> dict[int, types.CodeType]:
    """Every code object compiled from a source (its functions', classes', lambdas' and comprehensions'), by id."""
    found = {id(code): code}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.update(_code_objects(const))
    return found


def _unscanned(value, scanned: dict, depth: int = 0) -> str | None:
    """What in `value` (a function, a class and its methods, a wrapper's wrapped function) runs code that is neither
    in `scanned`, nor an installed file's, nor generated by the standard library for the file; None if nothing."""
    from grader.guard import audit_hooks as guard

    if depth > 8:
        return None
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, functools.partial):
        return _unscanned(value.func, scanned, depth + 1)
    if isinstance(value, types.MethodType):
        return _unscanned(value.__func__, scanned, depth + 1)
    if isinstance(value, types.FunctionType):
        code = value.__code__
        if id(code) in scanned or id(code) in guard.generated:
            return None
        if not guard.installed_code(code):
            return f"the function {value.__qualname__}"
        wrapped = value.__dict__.get("__wrapped__")  # torch.compile's and functools.wraps' wrappers
        return None if wrapped is None else _unscanned(wrapped, scanned, depth + 1)
    if isinstance(value, type):
        for klass in value.__mro__:
            if guard.library_class(klass):
                continue
            for member in list(vars(klass).values()):
                if isinstance(member, property):
                    member = member.fget
                where = _unscanned(member, scanned, depth + 1) if callable(member) or isinstance(
                    member, (staticmethod, classmethod)) else None
                if where:
                    return where
    elif depth == 0 and not isinstance(value, (types.ModuleType, types.BuiltinFunctionType)):
        own = vars(value) if hasattr(type(value), "__dict__") and isinstance(getattr(value, "__dict__", None),
                                                                             dict) else {}
        if "__wrapped__" in own:  # functools.lru_cache and other wrappers of a function
            return _unscanned(own["__wrapped__"], scanned, depth + 1)
        if not guard.library_class(type(value)):
            return _unscanned(type(value), scanned, depth + 1)  # an instance of the file's class: its methods
    return None


def _vetting(function, name: str, submission: Submission | None = None):
    """`function`, whose every return value is vetted before a check reads it, and which may not change the CPU
    tensors it is given (grader.guard.learner_values.untouched)."""
    @functools.wraps(function)
    def call(*args, **kwargs):
        given = learner_values.CpuArguments(args, kwargs)
        result = function(*args, **kwargs)
        if submission is not None:
            submission.verify_scanned()
        changed = given.changed()
        if changed:
            raise SubmissionError(
                f"{name}() changed {changed} in place, a CPU tensor the caller gave it and still uses (an in-place "
                "operation such as add_, masked_fill_, x[...] = ..., or a write through .numpy()): on the CPU, "
                ".to(device) returns that very tensor, so the caller's own data changed. Make a new tensor instead "
                "(x * mask, x.masked_fill(...), x.clone()).")
        try:
            return learner_values.vetted(result, f"the value {name}() returned")
        except learner_values.UntrustedValue as exc:
            raise SubmissionError(str(exc)) from None
    return call
