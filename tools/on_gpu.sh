#!/usr/bin/env bash
# What the maintainers run on a GPU machine to produce the GPU results kept in the repo, as they come out:
#   fidelity  the simulated accelerator against real CUDA, with every GPU and with one, and CUDA's answer to
#             each OpInfo operator given a CPU tensor among device tensors (grader/simulated/cpu_mixes_*.json)
#   verdicts  every exercise, solution and other submission graded on every leg, with every GPU and with one
#             (grader/verdicts/; tests/test_verdicts.py reads them)
#   course    the course self-check (tests/test_course.py) on the real GPUs
#   book      the book's outputs, recorded page by page (book/_recorded/)
#   doctor    `devcourse doctor` on the realistic scripts of tests/doctor/ with --device cuda:1 (two GPUs needed;
#             the doctor's book links need docutils: carry its wheel in .whl/ where the machine lacks it)
# A verdict run cut by a time limit leaves OUTDIR/Ngpu.partial.json (whole exercises): copy it over
# grader/verdicts/Ngpu.json and regrade the exercises it lacks with ONLY="..." (--only merges them into it).
# Usage: tools/on_gpu.sh OUTDIR [STEP ...]   (default: every step; run from the repository root with the
# Python that has torch as python3). Copy OUTDIR's files into the repo as they are.
# ONLY="exercise ..." tools/on_gpu.sh OUTDIR verdicts: regrade those exercises only, into the committed tables.
# PAGES="memory data-loading ..." tools/on_gpu.sh OUTDIR book: record those pages only (the others keep their records).
# TABLES="every" or "one" (default both): the verdict table with every GPU visible, or with one, so that the two
# can be recorded in two calls when one call's time limit is too short for both.
# Missing packages can come as wheels in .whl/: they go to /tmp/site, appended to sys.path by a .pth file so
# that the machine's own packages (torch, numpy) still win.
set -uo pipefail
out=${1:?usage: tools/on_gpu.sh OUTDIR [fidelity] [verdicts] [course] [book] [doctor]}
shift
steps=${*:-fidelity verdicts course book doctor}
want() { [[ " $steps " == *" $1 "* ]]; }
mkdir -p "$out"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -3
  echo /tmp/site > "$(python3 -c 'import site; print(site.getsitepackages()[0])')/zz-course-wheels.pth"
fi
export PYTHONPATH=$PWD NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
ngpu=$(python3 -c 'import torch; print(torch.cuda.device_count())')
{ nvidia-smi; python3 -c 'import torch, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "python", sys.version)'; date -u; } > "$out/machine.txt" 2>&1

if want fidelity; then  # beside the verdicts: their processes use few of the machine's cores and little GPU
  {
  python3 -m tests.simulated.fidelity --device cuda --out "$out/fidelity_cuda.json" > "$out/fidelity.log" 2>&1
  python3 -m tests.simulated.fidelity --markdown-from "$out/fidelity_cuda.json" > "$out/fidelity_cuda.md" 2>>"$out/fidelity.log"
  if [ "$ngpu" -gt 1 ]; then
    CUDA_VISIBLE_DEVICES=0 python3 -m tests.simulated.fidelity --device cuda --out "$out/fidelity_cuda_1gpu.json" >> "$out/fidelity.log" 2>&1
  fi
  python3 tests/simulated/mix_sweep.py cuda --out "$out/cpu_mixes_sweep_cuda.json" --rules "$out/cpu_mixes_cuda.json" \
    >> "$out/fidelity.log" 2>&1
  # what NCCL, DDP and CUDA IPC say to the bugs of the chapter "Distributed workers" (worker processes of their own)
  python3 -m tests.simulated.fidelity_distributed --out "$out/fidelity_distributed_cuda.json" >> "$out/fidelity.log" 2>&1
  } &
fi
if want verdicts; then
  only=()  # ONLY="name ..." regrades those exercises in the committed tables (after a change to their graders)
  if [ -n "${ONLY:-}" ]; then only=(--only $ONLY); cp grader/verdicts/*gpu.json "$out/"; fi
  tables=" ${TABLES:-every one} "
  if [[ $tables == *" every "* ]]; then
    python3 tools/verdicts.py --jobs 6 --out "$out/${ngpu}gpu.json" --markdown "$out/${ngpu}gpu.md" "${only[@]}" \
      > "$out/verdicts.log" 2>&1
  fi
  if [ "$ngpu" -gt 1 ] && [[ $tables == *" one "* ]]; then
    CUDA_VISIBLE_DEVICES=0 python3 tools/verdicts.py --jobs 6 --out "$out/1gpu.json" --markdown "$out/1gpu.md" "${only[@]}" \
      >> "$out/verdicts.log" 2>&1
  fi
fi
wait
if want course; then
  python3 -m pytest tests/test_course.py tests/test_instruments.py "tests/test_integrity.py::test_one_submission_graded_twenty_times_gives_one_verdict" -q -p no:cacheprovider -o addopts= \
    > "$out/course_on_gpu.log" 2>&1
fi
if want book; then
  # Pages that need several GPUs (book/_ext/recording_rules.py) see them all; the others see one, as a reader's
  # single-GPU machine would. The recorder refuses a page on a machine with fewer GPUs than it needs.
  list_pages='import sys; sys.path.insert(0, "book/_ext"); import record, recording_rules as r
wanted = sys.argv[2].split()  # PAGES, or every page
print(" ".join(str(p.relative_to(record.ROOT)) for p in record.toc_pages()
               if (r.gpus_needed(p.stem) > 1) == (sys.argv[1] == "multi") and (not wanted or p.stem in wanted)))'
  single=$(python3 -c "$list_pages" single "${PAGES:-}")
  multi=$(python3 -c "$list_pages" multi "${PAGES:-}")
  : > "$out/record.log"
  [ -n "$single" ] && CUDA_VISIBLE_DEVICES=0 timeout 540 python3 book/_ext/record.py $single >> "$out/record.log" 2>&1
  [ -n "$multi" ] && timeout 180 python3 book/_ext/record.py $multi >> "$out/record.log" 2>&1   # with every GPU visible
  # The book's record checks (digest, machine, GPU count, tracebacks, glued values, keys) on what was just written.
  python3 -m pytest tests/book/test_records.py tests/book/test_pages.py -k "not runs_on_the_cpu" -q -p no:cacheprovider \
    -o addopts= > "$out/record_check.log" 2>&1
  tar czf "$out/recorded.tgz" book/_recorded
fi
if want doctor && [ "$ngpu" -gt 1 ]; then
  DOCTOR_DEVICE=cuda:1 python3 -m pytest tests/test_doctor_scripts.py -q -p no:cacheprovider -o addopts= \
    > "$out/doctor_on_gpu.log" 2>&1
fi
tail -n 5 "$out"/*.log
