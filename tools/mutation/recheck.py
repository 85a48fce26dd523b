"""Run the survivors of cosmic-ray sessions again (after adding tests), updating their results in place.

    cd COPY && python tools/mutation/recheck.py CONFIG.toml SESSION.sqlite [CONFIG SESSION ...]

Run it inside the copy the session was made in (run.sh's $MUT_WORK/copy-N), after copying the new tests
there; the test command is the session's config's. A mutant the new tests kill becomes killed.
"""

from __future__ import annotations

import sys

from cosmic_ray.config import load_config
from cosmic_ray.mutating import mutate_and_test
from cosmic_ray.work_db import WorkDB, use_db


def recheck(config_path: str, session: str) -> None:
    config = load_config(config_path)
    killed = still = 0
    with use_db(session, WorkDB.Mode.open) as db:
        # survivors, and runs the test command could not make (a forkserver that went away: not a kill)
        survivors = [item for item, result in db.completed_work_items
                     if (result.worker_outcome == "normal" and result.test_outcome == "survived")
                     or "forkserver: no answer" in (result.output or "")]
        for item in survivors:
            result = mutate_and_test(item.mutations, config["test-command"], config["timeout"])
            db.set_result(item.job_id, result)
            if result.test_outcome != "survived":
                killed += 1
            else:
                still += 1
    print(f"{session}: {len(survivors)} survivors rechecked, {killed} now killed, {still} still survive")


if __name__ == "__main__":
    args = sys.argv[1:]
    for cfg, ses in zip(args[::2], args[1::2]):
        recheck(cfg, ses)
