#!/usr/bin/env bash
# Mutation testing of the grader core, the simulator's instruments/clock/allocator and the book's output store
# (issue 13). A report, not a CI step: results in $MUT_WORK, summarised by tools/mutation/report.py into
# benchmarks/results/mutation.md.
#
#   tools/mutation/run.sh                      # every module of tools/mutation/modules.tsv
#   tools/mutation/run.sh grader/engine/legs.py ...   # only these modules
#   MUT_JOBS=2 MUT_WORK=/tmp/$USER-mut tools/mutation/run.sh
#   MUT_SAMPLE=80 tools/mutation/run.sh grader/simulated/tensor.py   # a seeded random sample (MUT_SEED) of its mutants
#
# cosmic-ray mutates files in place, so it runs in private copies of the working tree (tracked and untracked
# files, never the tree itself), one per job: $MUT_WORK/copy-N. Each module's mutants run against the few test
# files that exercise it (modules.tsv), through a warm pytest (forkserver.py) that imports torch once and
# forks a fresh pytest per mutant; each run has its own grading daemons (DEVCOURSE_DAEMON_DIR) and no .pyc.
# Mutants outside the selective operator set and equivalent ones in annotations are skipped (filter.py).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-$ROOT/.venv/bin/python}
BIN=$(dirname "$PY")
WORK=${MUT_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/mutation-XXXXXX")}
JOBS=${MUT_JOBS:-2}
LIMIT=${MUT_LIMIT:-240}  # seconds per mutant's test run; past it the mutant counts as a timeout (killed)
TABLE=${MUT_MODULES:-$ROOT/tools/mutation/modules.tsv}
mkdir -p "$WORK"
echo "mutation work folder: $WORK"

mapfile -t LINES < <(grep -v '^#' "$TABLE" | grep -v '^\s*$')
if [ $# -gt 0 ]; then
  SEL=(); for l in "${LINES[@]}"; do for m in "$@"; do [ "${l%%$'\t'*}" = "$m" ] && SEL+=("$l"); done; done
  LINES=("${SEL[@]}")
fi

FS="$WORK/fs.sock"  # one warm pytest for all jobs, ended with this script
FORKSERVER_LIMIT=$LIMIT "$PY" "$ROOT/tools/mutation/forkserver.py" serve "$FS" >"$WORK/forkserver.log" 2>&1 &
FSPID=$!
trap 'kill $FSPID 2>/dev/null || true' EXIT

make_copy() {  # the working tree as it is, uncommitted changes included; never the tree itself
  local dst=$1
  [ -d "$dst" ] && return
  mkdir -p "$dst"
  (cd "$ROOT" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$dst"
  find "$dst" -name __pycache__ -prune -exec rm -rf {} +
}

run_module() {  # copy-dir module "pytest arguments" (shell words; quote -k expressions with ')
  local copy=$1 module=$2 tests=$3
  local name; name=$(echo "$module" | tr '/.' '__')
  local cmd="$PY $ROOT/tools/mutation/forkserver.py run $FS -- -x -q -p no:cacheprovider $tests"
  cat >"$WORK/$name.toml" <<EOT
[cosmic-ray]
module-path = "$module"
timeout = $((LIMIT + 60))
excluded-modules = []
test-command = "$cmd"
[cosmic-ray.distributor]
name = "local"
EOT
  (
    cd "$copy"
    if ! eval "$cmd" >"$WORK/$name.baseline.log" 2>&1; then
      echo "BASELINE FAILS for $module: see $WORK/$name.baseline.log"; return 0
    fi
    [ -f "$WORK/$name.sqlite" ] || { "$BIN/cosmic-ray" init "$WORK/$name.toml" "$WORK/$name.sqlite" &&
                                     "$PY" "$ROOT/tools/mutation/filter.py" "$WORK/$name.sqlite"; }
    "$BIN/cosmic-ray" exec "$WORK/$name.toml" "$WORK/$name.sqlite" >"$WORK/$name.exec.log" 2>&1
    echo "done: $module"
  )
}

PIDS=()
for ((j = 0; j < JOBS; j++)); do
  (
    make_copy "$WORK/copy-$j"
    for ((i = j; i < ${#LINES[@]}; i += JOBS)); do
      IFS=$'\t' read -r module tests <<<"${LINES[$i]}"
      run_module "$WORK/copy-$j" "$module" "$tests"
    done
  ) &
  PIDS+=($!)
done
wait "${PIDS[@]}"  # the jobs, not the forkserver
"$PY" "$ROOT/tools/mutation/report.py" "$WORK" >"$WORK/summary.md"
echo "summary: $WORK/summary.md"
