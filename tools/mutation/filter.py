"""Trim a cosmic-ray session to what is worth running (a selective-mutation set) and mark the equivalent
mutants that need no test run.

    python tools/mutation/filter.py SESSION.sqlite

1. cosmic-ray replaces each binary operator by every other one (`a + b` becomes eleven mutants: -, *, /, //,
   %, **, >>, <<, |, &, ^) and each comparison by every other one. We keep one replacement per arithmetic
   operator (+ <-> -, * <-> /, // -> /, % -> //, ** -> *, << <-> >>, | <-> &, ^ -> |) and the boundary and
   negation replacements of comparisons (== <-> !=, < -> <= and >=, <= -> < and >, > -> >= and <=,
   >= -> > and <, is <-> is not, in <-> not in): the usual selective set; a test that kills those kills
   the rest in practice. Unary: removing -, ~ or not, and - -> +.
2. A mutant inside a type annotation, in a module with `from __future__ import annotations`, is equivalent
   (annotations are never evaluated there): it is marked skipped with the reason.
3. With MUT_SAMPLE=N (run.sh passes it on), only a random sample of N of the mutants left is run, drawn with
   MUT_SEED (default 31); the others are marked "NOT SAMPLED". For modules whose mutants cost too much to run all
   of them here: the score is then an estimate, and report.py says so.
"""

from __future__ import annotations

import ast
import os
import random
import re
import sys
from pathlib import Path

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import WorkerOutcome, WorkResult

KEEP_BINARY = {"Add_Sub", "Sub_Add", "Mul_Div", "Div_Mul", "FloorDiv_Div", "Mod_FloorDiv", "Pow_Mul",
               "LShift_RShift", "RShift_LShift", "BitOr_BitAnd", "BitAnd_BitOr", "BitXor_BitOr"}
KEEP_COMPARISON = {"Eq_NotEq", "NotEq_Eq", "Lt_LtE", "Lt_GtE", "LtE_Lt", "LtE_Gt", "Gt_GtE", "Gt_LtE",
                   "GtE_Gt", "GtE_Lt", "Is_IsNot", "IsNot_Is", "In_NotIn", "NotIn_In"}
KEEP_UNARY = {"Delete_USub", "Delete_Invert", "Delete_Not", "USub_UAdd"}


def kept(operator: str) -> bool:
    m = re.fullmatch(r"core/Replace(Binary|Comparison|Unary)Operator_(\w+)", operator)
    if not m:
        return True
    return m.group(2) in {"Binary": KEEP_BINARY, "Comparison": KEEP_COMPARISON, "Unary": KEEP_UNARY}[m.group(1)]


def annotation_spans(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    tree = ast.parse(path.read_text())
    future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations" for a in n.names)
                 for n in tree.body)
    if not future:
        return []
    spans = []
    for node in ast.walk(tree):
        notes = []
        if isinstance(node, ast.arg) and node.annotation is not None:
            notes.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            notes.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        spans += [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in notes]
    return spans


def main(session: str) -> None:
    skipped = equivalent = 0
    with use_db(session, WorkDB.Mode.open) as db:
        spans_of: dict[str, list] = {}
        for item in list(db.pending_work_items):
            for mutation in item.mutations:
                path = str(mutation.module_path)
                if path not in spans_of:
                    spans_of[path] = annotation_spans(Path(path))
                start = tuple(mutation.start_pos)
                if not kept(mutation.operator_name):
                    db.set_result(item.job_id, WorkResult(output="not in the selective operator set",
                                                          worker_outcome=WorkerOutcome.SKIPPED))
                    skipped += 1
                elif any(a <= start < b for a, b in spans_of[path]):
                    db.set_result(item.job_id, WorkResult(output="EQUIVALENT: inside a type annotation",
                                                          worker_outcome=WorkerOutcome.SKIPPED))
                    equivalent += 1
                break
        sample = int(os.environ.get("MUT_SAMPLE") or 0)
        left = sorted(item.job_id for item in db.pending_work_items)
        unsampled = 0
        if 0 < sample < len(left):
            drawn = set(random.Random(int(os.environ.get("MUT_SEED") or 31)).sample(left, sample))
            for job_id in left:
                if job_id not in drawn:
                    db.set_result(job_id, WorkResult(output=NOT_SAMPLED, worker_outcome=WorkerOutcome.SKIPPED))
                    unsampled += 1
    print(f"{session}: {skipped} outside the selective set, {equivalent} equivalent (annotations)"
          + (f", {unsampled} not in the sample of {sample}" if unsampled else ""))


NOT_SAMPLED = "NOT SAMPLED: outside the random sample (MUT_SAMPLE)"


if __name__ == "__main__":
    for s in sys.argv[1:]:
        main(s)
