"""The doctor's report: rich in a terminal, plain text when piped (grader.learner.report.fancy decides, as for
`devcourse check`), JSON (the result as it is), and SARIF 2.1.0, which editors and code scanning read to show
each finding as an annotation on the learner's line."""

from __future__ import annotations

import os
from pathlib import Path

from rich.console import Console
from rich.text import Text

from grader.learner import report
from grader.doctor.findings import KINDS, LEVELS

STYLE = {"error": "bold red", "warning": "yellow", "note": "cyan"}
OUTCOME = {
    "finished": "ran to its end",
    "exited": "exited with status {exit_code}",
    "crashed": "stopped with an error",
    "time-up": "stopped at the time limit",
}
FAILED = {"timeout", "killed", "output-limit", "doctor-error", "no-script"}


def size(nbytes: int | None) -> str:
    from grader.doctor.findings import size as _size

    return "unknown" if nbytes is None else _size(nbytes)


def shown_path(path: str, base: str | None = None) -> str:
    try:
        return os.path.relpath(path, base or os.getcwd())
    except ValueError:
        return path


def counts(result: dict) -> dict:
    out = {level: 0 for level in LEVELS}
    for f in result.get("findings", []):
        out[f["level"]] += 1
    return out


def exit_status(result: dict) -> int:
    """0: nothing but notes; 1: an error or a warning, or the script could not be run to its steps."""
    if result.get("outcome") in FAILED:
        return 1
    c = counts(result)
    return 1 if c["error"] or c["warning"] else 0


def print_report(console: Console, result: dict, base: str | None = None, locate=None) -> None:
    """`locate(finding)`: where to say a finding is (a notebook's cell), instead of SCRIPT:LINE."""
    fancy = report.fancy(console)
    script = result.get("script", "?")
    script = shown_path(script, base) if script.endswith(".py") else script
    device = result.get("device", "?")
    where = f"{device} (the simulated accelerator, {result.get('profile', 'cuda')} profile)" \
        if device.startswith("sim") else device
    steps = result.get("steps") or {}
    outcome = result.get("outcome")
    header = Text.assemble(("Doctor: ", "bold"), (script, "bold cyan"), f" on {where}")
    if outcome in OUTCOME:
        header.append(", " + OUTCOME[outcome].format(exit_code=result.get("exit_code")))
        done = steps.get("optimizer_steps", 0)
        header.append(f" ({done} optimizer step{'s' if done != 1 else ''})")
    if "seconds" in result:
        header.append(f" ({result['seconds']:.1f} s)", style="dim")
    console.print(header)
    cut = result.get("loops_cut") or []
    if cut:
        console.print(Text("Loops cut after {} iterations, the script going on after them: {}.".format(
            steps.get("asked"), ", ".join(f"line {c['line']}" + (f" ({c['cut']} times)" if c["cut"] > 1 else "")
                                          for c in cut)), style="dim"))
    if outcome == "time-up":
        console.print(Text("The script did not end within the time limit (--timeout): what it ran is reported. "
                           "A loop is cut only once its iterations do device work (a model's forward, a backward, an "
                           "optimizer step, a DataLoader batch, an operation on the device).", style="yellow"))
    if outcome in FAILED:
        console.print(Text(result.get("message") or result.get("error") or outcome, style="bold red"))
        if result.get("error") and result.get("message"):
            console.print(Text(result["error"], style="dim"))
    for f in result.get("findings", []):
        console.print()
        _print_finding(console, f, locate(f) if locate else None, script, fancy)
    _print_traffic(console, result)
    if result.get("output") and outcome in {"crashed", "exited"} | FAILED:
        console.print(Text("\nThe script's last output:", style="dim"))
        console.print(Text(_last_lines(result["output"], 8)))
    c = counts(result)
    console.print()
    if any(c.values()):
        parts = [f"{n} {level}{'s' if n != 1 else ''}" for level, n in c.items() if n]
        console.print(Text("Found: " + ", ".join(parts) + ".", style="bold red" if c["error"] else "bold yellow"))
    elif outcome not in FAILED:
        console.print(Text("Nothing found: no device problem showed in the steps run.", style="bold green"))
    if result.get("isolated") is False and result.get("isolation"):
        console.print(Text(f"Not isolated: {result['isolation']}", style="dim"))


def _print_finding(console: Console, f: dict, at: str | None, script: str, fancy: bool) -> None:
    level = f["level"]
    at = at or (f"{script}:{f['line']}" if f.get("line") else script)
    console.print(Text.assemble((f"{level.upper()} ", STYLE[level]), (at, "bold"), "  ", (f["code"], "dim"),
                                f"  {f['title']}"))
    if f.get("source"):
        bar = "│" if fancy else "|"
        console.print(Text.assemble(f"  {f.get('cell_line') or f['line']:>4} {bar} ", (f["source"], "bold")))
    for line in f["message"].splitlines():
        console.print(Text("    " + line))
    for r in f.get("related") or []:
        console.print(Text(f"    see line {r['line']} ({r['message']}): {r['source']}", style="dim"))
    section = f.get("section") or {}
    if section:
        console.print(Text(f"    Book: \"{section['title']}\" in {section['chapter']}, {section['url']}", style="dim"))


def _print_traffic(console: Console, result: dict) -> None:
    per = result.get("per_step") or {}
    device = result.get("device", "the device")
    steps = result.get("steps") or {}
    if per:
        h2d, d2h, d2d = per["h2d"], per["d2h"], per["d2d"]
        console.print()
        console.print(Text(f"Per step (the last iteration of the loop at line {per['loop_line']}):", style="bold"))
        from grader.doctor.findings import plural

        console.print(Text(f"  to {device}: {plural(h2d['copies'], 'copy', 'copies')}, {size(h2d['bytes'])}, "
                           f"{h2d['pinned']} from pinned memory; to the CPU: {plural(d2h['copies'], 'copy', 'copies')}"
                           f", {size(d2h['bytes'])}, {d2h['pinned']} into pinned memory; between devices: "
                           f"{plural(d2d['copies'], 'copy', 'copies')} ({size(d2d['bytes'])})"))
        console.print(Text(f"  host reads of device values: {per['host_reads']}; explicit synchronisations: "
                           f"{per['syncs']}"))
    memory = result.get("memory") or {}
    if memory.get("peak_bytes") is not None:
        held = ", ".join(f"line {h['line']} ({size(h['bytes'])})" if h["line"] else f"outside the script "
                         f"({size(h['bytes'])})" for h in memory.get("held_at_peak", []))
        console.print(Text(f"Peak device memory: {size(memory['peak_bytes'])}"
                           + (f"; at the peak, tensors made at {held}" if held else "")))


def _last_lines(text: str, n: int) -> str:
    return "\n".join(text.rstrip().splitlines()[-n:])


# ------------------------------------------------------------------------------------------------ SARIF
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def sarif(result: dict, base: str | None = None) -> dict:
    """The findings as a SARIF 2.1.0 log: one rule per kind of finding, one result per finding, at the
    script's line (artifact paths relative to `base`, the folder the doctor ran in, as code scanning expects)."""
    from grader.doctor import links

    rules = [{"id": k.code, "name": k.code.title().replace("-", ""), "shortDescription": {"text": k.title},
              "helpUri": links.url(k), "help": {"text": f"{k.heading} ({k.page})"},
              "defaultConfiguration": {"level": k.level}} for k in KINDS.values()]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for f in result.get("findings", []):
        location = {"artifactLocation": {"uri": Path(shown_path(f.get("file") or result["script"], base)).as_posix()}}
        if f.get("line"):
            location["region"] = {"startLine": f["line"]}
        entry = {"ruleId": f["code"], "ruleIndex": index[f["code"]], "level": f["level"],
                 "message": {"text": f"{f['title']}: {f['message']}"},
                 "locations": [{"physicalLocation": location}]}
        if f.get("related"):
            entry["relatedLocations"] = [
                {"id": i, "message": {"text": r["message"]},
                 "physicalLocation": {"artifactLocation": location["artifactLocation"],
                                      "region": {"startLine": r["line"]}}}
                for i, r in enumerate(f["related"], 1)]
        results.append(entry)
    invocation = {"executionSuccessful": result.get("outcome") not in FAILED}
    if result.get("outcome") in FAILED:
        invocation["toolExecutionNotifications"] = [
            {"level": "error", "message": {"text": result.get("message") or result.get("outcome")}}]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "devcourse doctor", "informationUri": links.home(), "rules": rules}},
        "invocations": [invocation], "results": results}]}
