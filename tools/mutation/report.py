"""Summarise the cosmic-ray sessions of a mutation run (tools/mutation/run.sh) as Markdown.

    python tools/mutation/report.py WORK_FOLDER [--survivors]

Per module: mutants generated, skipped (outside the selective operator set), equivalent (annotations,
marked by filter.py, plus those listed in tools/mutation/equivalent.txt), killed, timeouts (counted as
killed), survived, and the score killed / (mutants run - equivalent). --survivors lists each survivor's diff.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def equivalents() -> dict[tuple[str, str, int], str]:
    """module, operator, occurrence -> why; lines of tools/mutation/equivalent.txt: MODULE OPERATOR OCCURRENCE WHY"""
    out = {}
    path = HERE / "equivalent.txt"
    for line in path.read_text().splitlines() if path.exists() else ():
        if line.strip() and not line.startswith("#"):
            module, op, occ, why = line.split(None, 3)
            out[(module, op, int(occ))] = why
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion k / n: where a sampled module's score lies, at 95 %."""
    p = k / n
    centre, half = p + z * z / (2 * n), z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def rows(session: Path):
    dump = subprocess.run([str(Path(sys.executable).with_name("cosmic-ray")), "dump", str(session)],
                          capture_output=True, text=True, check=True).stdout
    for line in dump.splitlines():
        item, result = json.loads(line)
        yield item, result


def main(work: Path, survivors: bool) -> None:
    eq = equivalents()
    print("| module | mutants | skipped (selective set) | run | equivalent | killed | timeouts | survived | score |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    details = []
    for session in sorted(work.glob("*.sqlite")):
        n = skipped = equivalent = killed = timeouts = survived = pending = unsampled = 0
        module = None
        for item, result in rows(session):
            n += 1
            m = item["mutations"][0]
            module = m["module_path"]
            key = (module, m["operator_name"], m["occurrence"])
            out = (result or {}).get("output") or ""
            if result is None or "forkserver: no answer" in out:  # the tests could not be run: not a kill
                pending += 1
                continue
            if result["worker_outcome"] == "skipped":
                if out.startswith("EQUIVALENT"):
                    equivalent += 1
                elif out.startswith("NOT SAMPLED"):
                    unsampled += 1
                else:
                    skipped += 1
            elif key in eq and result.get("test_outcome") == "survived":
                equivalent += 1
                details.append((module, "equivalent", m, result, eq[key]))
            elif result.get("test_outcome") == "killed" or result["worker_outcome"] != "normal":
                if "timeout" in out.lower() and ("TIMEOUT" in out or out.strip() == "timeout"):
                    timeouts += 1
                else:
                    killed += 1
            else:
                survived += 1
                details.append((module, "survived", m, result, ""))
        run = n - skipped - unsampled
        denominator = run - pending - equivalent  # a partial run (stopped, or rechecked): scored on what ran
        score = f"{100 * (killed + timeouts) / denominator:.1f} %" if denominator else "-"
        if unsampled and denominator:
            low, high = wilson(killed + timeouts, denominator)
            score += f" (95 % interval {100 * low:.0f}-{100 * high:.0f} %)"
        extra = f" ({pending} not run)" if pending else ""
        if unsampled:  # a random sample of what the selective set keeps: the score estimates the module's
            extra += f" ({unsampled} more not drawn: a random sample)"
        print(f"| {module} | {n} | {skipped} | {run}{extra} | {equivalent} | {killed} | {timeouts} | {survived} | {score} |")
    if survivors:
        for module, kind, m, result, why in details:
            print(f"\n### {kind}: {module} {m['operator_name']} #{m['occurrence']} line {m['start_pos'][0]}"
                  + (f" — {why}" if why else ""))
            print("```diff\n" + (result.get("diff") or "").strip() + "\n```")


if __name__ == "__main__":
    main(Path(sys.argv[1]), "--survivors" in sys.argv)
