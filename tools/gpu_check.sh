#!/usr/bin/env bash
# One GPU call for a change to the grading processes or the doctor (one GPU is enough): the confinement,
# isolation, daemon and worker tests with CUDA started; the doctor on the realistic scripts of tests/doctor/
# with --device cuda:0; the course's sample (make test's part of tests/test_course.py) on the real legs; and the
# book pages named in PAGES recorded again. Usage, from the repository root on the GPU machine:
#   PAGES="device-agnostic-training" tools/gpu_check.sh OUTDIR [confinement] [doctor] [course] [book]
# What comes back in OUTDIR: one log per step, the doctor's JSON reports, the recorded pages, machine.txt.
set -uo pipefail
out=${1:?usage: tools/gpu_check.sh OUTDIR [confinement] [doctor] [course] [book]}
shift
steps=${*:-confinement doctor course book}
want() { [[ " $steps " == *" $1 "* ]]; }
mkdir -p "$out"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl > "$out/pip.log" 2>&1
  echo /tmp/site > "$(python3 -c 'import site; print(site.getsitepackages()[0])')/zz-course-wheels.pth"
fi
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
{ nvidia-smi; python3 -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version)'; date -u; } > "$out/machine.txt" 2>&1
pytest() { timeout "$1" python3 -m pytest -q -p no:cacheprovider -o addopts= "${@:2}"; }

if want confinement; then
  pytest 300 -n 4 --dist loadfile tests/test_confinement.py tests/test_isolation.py tests/test_batch.py \
    tests/test_worker_units.py tests/test_daemon.py tests/test_attacks.py tests/test_attacks_round3.py \
    > "$out/confinement.log" 2>&1
  echo "confinement rc=$?" >> "$out/summary.txt"
fi
if want doctor; then
  for script in tests/doctor/*_buggy.py tests/doctor/*_fixed.py; do
    name=$(basename "$script" .py)
    timeout 120 python3 -m grader doctor --device cuda:0 --json "$script" > "$out/doctor-$name.json" 2>> "$out/doctor.log"
    echo "doctor $name rc=$?" >> "$out/summary.txt"
  done
  tar -czf "$out/doctor.tgz" -C "$out" $(cd "$out" && ls doctor-*.json) && rm -f "$out"/doctor-*.json
fi
if want course; then
  pytest 300 -n 8 --dist loadfile -m "not exhaustive" tests/test_course.py > "$out/course.log" 2>&1
  echo "course rc=$?" >> "$out/summary.txt"
fi
if want book; then
  for page in ${PAGES:-}; do
    CUDA_VISIBLE_DEVICES=0 timeout 300 python3 book/_ext/record.py "book/$page.md" >> "$out/book.log" 2>&1
    echo "book $page rc=$?" >> "$out/summary.txt"
    cp "book/_recorded/$page.json" "$out/" 2>/dev/null
  done
fi
cat "$out/summary.txt"
