"""Rewrite references to grader's modules by their old flat names (grader/expect.py, grader.expect,
`from grader import expect`) to the layered ones (grader/engine/expect.py ...): grader/README.md, "Layers".

    python tools/layout_rewrite.py FILE...      rewrite these files in place (Python, Markdown, TOML, ...)

For a branch begun before the layout: run it on the files the branch adds or changes. Idempotent. It also
rewrites grader.engine.workers.NAME for the names that left workers.py (WORKER_NAMES); a bare `workers.NAME`
(after `from grader import workers`) it leaves for a person to point at the module WORKER_NAMES names.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

#: old dotted name -> new dotted name
MOVES = {
    "grader.course": "grader.catalog.course",
    "grader.book_links": "grader.catalog.book_links",
    "grader.guard": "grader.guard.audit_hooks",
    "grader.policy": "grader.guard.policy",
    "grader.integrity": "grader.guard.integrity",
    "grader.learner_values": "grader.guard.learner_values",
    "grader.audit": "grader.guard.audit",
    "grader.sandbox": "grader.guard.sandbox",
    "grader.containment": "grader.guard.containment",
    "grader.namespaces": "grader.guard.namespaces",
    **{f"grader.{name}": f"grader.engine.{name}" for name in (
        "legs", "limits", "machine", "settings", "deferred_stop", "lazy_dynamo", "instruments", "submission",
        "expect", "plugin", "batch", "workers", "daemon", "runner")},
    **{f"grader.{name}": f"grader.learner.{name}" for name in (
        "workspace", "progress", "milestones", "targets", "report", "watch")},
    "grader.notebooks": "grader.authoring.notebooks",
}
#: names that left grader/workers.py when it was split by job: name -> its module under grader/engine/
WORKER_NAMES = {
    **dict.fromkeys((
        'Collector', 'GRACE_SECONDS', 'OUTCOMES', 'OUTPUT_TAIL', 'START_LIMIT', '_become_subreaper',
        '_children_of', '_last_lines', '_live', '_live_in_group', '_stat', 'judge',
    ), 'judging'),
    **dict.fromkeys((
        'ForkedWorker', 'ReadyHandler', 'Spare', 'Zygote', '_graded_reply', '_handle', '_reply',
    ), 'zygote'),
    **dict.fromkeys((
        'UNUSED_PYTEST_PLUGINS', '_pytest_args', '_run', '_work',
    ), 'grading_process'),
    **dict.fromkeys((
        '_confine', '_confine_if_deferred', '_confine_job', '_confine_soon', '_dumps', '_exit', '_fork',
        '_has_nvidia_gpus', '_isolation', '_limit_host_memory', '_one_cpu_thread', '_os_fork', '_private_dir',
        '_start_gpus', '_start_worker', '_write', 'fresh_draws', 'use_fork', 'warms_gpus',
    ), 'process_setup'),
}


def _dotted(old: str, new: str, text: str) -> str:
    # grader.guard.<something new> is already rewritten; anything else after grader.guard is the old module's
    new_children = sorted({n.split(".")[2] for n in MOVES.values() if n.startswith(old + ".")} | (
        {n.split(".")[-1] for n in MOVES.values() if n.startswith(old + ".")}))
    children = "|".join(new_children)
    skip = f"(?!\\.(?:{children})\\b)(?! import (?:{children})\\b)" if new_children else ""
    return re.sub(rf"(?<![\w.]){re.escape(old)}\b{skip}", new, text)


def _path(old: str, new: str, text: str) -> str:
    old_path, new_path = old.replace(".", "/") + ".py", new.replace(".", "/") + ".py"
    return re.sub(rf"(?<![\w.]){re.escape(old_path)}", new_path, text)


_FROM_GRADER = re.compile(r"^([ \t]*)from grader import (\([^)]*\)|[^\n]*)", re.M)


def _from_grader(match: re.Match, moves: dict[str, str]) -> str:
    indent, names = match.group(1), match.group(2)
    comment = ""
    if not names.startswith("("):
        names, _, comment = names.partition("#")
        comment = "  #" + comment.rstrip() if comment else ""
    kept, moved = [], {}
    for item in names.strip("()").replace("\n", " ").split(","):
        item = item.split("#")[0].strip()
        if not item:
            continue
        name, _, alias = (part.strip() for part in item.partition(" as "))
        new = moves.get(f"grader.{name}")
        if new is None:
            kept.append(item)
            continue
        package, module = new.rsplit(".", 1)
        alias = alias or (name if module != name else "")
        moved.setdefault(package, []).append(f"{module} as {alias}" if alias else module)
    if not moved:
        return match.group(0)
    lines = [f"{indent}from grader import {', '.join(kept)}"] if kept else []
    lines += [f"{indent}from {package} import {', '.join(modules)}" for package, modules in moved.items()]
    if "noqa" in comment:  # each line's imports are unused alike
        return "\n".join(line + comment for line in lines)
    return "\n".join(lines) + comment


#: the same import inside a string of code (`python -c "import sys; from grader import workers; ..."`)
_INLINE = re.compile(r"from grader import ([A-Za-z_]\w*(?:, *[A-Za-z_]\w*)*)")


def _inline(match: re.Match, moves: dict[str, str]) -> str:
    lines = _from_grader(re.match(_FROM_GRADER, match.group(0)), moves)
    return "; ".join(lines.split("\n"))


def rewrite(text: str, moves: dict[str, str] = MOVES) -> str:
    text = _FROM_GRADER.sub(lambda match: _from_grader(match, moves), text)
    text = _INLINE.sub(lambda match: _inline(match, moves), text)
    for old, new in sorted(moves.items(), key=lambda kv: -len(kv[0])):
        text = _path(old, new, _dotted(old, new, text))
    return text


def _worker_names(text: str) -> str:
    """grader.engine.workers.judge -> grader.engine.judging.judge; `from grader.engine.workers import judge` too."""
    names = "|".join(sorted(WORKER_NAMES, key=len, reverse=True))
    text = re.sub(rf"(?<![\w.])grader\.engine\.workers\.({names})\b",
                  lambda m: f"grader.engine.{WORKER_NAMES[m.group(1)]}.{m.group(1)}", text)

    def split(match: re.Match) -> str:
        groups: dict[str, list[str]] = {}
        for item in (i.strip() for i in match.group(2).split(",")):
            groups.setdefault(WORKER_NAMES.get(item.split(" as ")[0], "workers"), []).append(item)
        return "\n".join(f"{match.group(1)}from grader.engine.{module} import {', '.join(items)}"
                         for module, items in groups.items())

    return re.sub(r"^([ \t]*)from grader\.engine\.workers import ([\w, ]+)$", split, text, flags=re.M)


def main(argv: list[str]) -> int:
    moves = MOVES
    if argv[:1] == ["--only"]:  # --only grader.a,grader.b FILE...: those moves alone
        moves = {old: MOVES[old] for old in argv[1].split(",")}
        argv = argv[2:]
    for name in argv:
        path = Path(name)
        try:
            text = path.read_text()
        except (UnicodeDecodeError, IsADirectoryError, FileNotFoundError):
            continue
        new = _worker_names(rewrite(text, moves)) if moves is MOVES else rewrite(text, moves)
        if new != text:
            path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
