"""Rewrite references to grader's modules by their old flat names (grader/expect.py, grader.expect,
`from grader import expect`) to the layered ones (grader/engine/expect.py ...): grader/README.md, "Layers".

    python tools/layout_rewrite.py FILE...      rewrite these files in place (Python, Markdown, TOML, ...)

For a branch begun before the layout: run it on the files the branch adds or changes. Idempotent.
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
#: the new sub-packages' names, which an old name must not be read into (grader.guard.policy is new)
_NEW_PACKAGES = ("catalog", "guard", "engine", "learner", "authoring")


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
        new = rewrite(text, moves)
        if new != text:
            path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
