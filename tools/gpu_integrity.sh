#!/usr/bin/env bash
# One GPU call for the integrity work (issue 26) and the simulator fixes of issue 27: the fidelity cases no GPU
# has recorded yet (added to both committed tables), the verdict rows of the exercises named in ONLY, and the
# attack, isolation and daemon tests on the GPU machine (Landlock confining CUDA). Usage, from the repository
# root on a machine with 2 GPUs: ONLY="exercise ..." tools/gpu_integrity.sh OUTDIR. What comes back: the two
# fidelity tables, the verdict tables, and logs.tgz (every log and the machine's description).
set -uo pipefail
out=${1:?usage: tools/gpu_integrity.sh OUTDIR}
mkdir -p "$out/work"
export PYTHONPATH=$PWD NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl > "$out/work/pip.log" 2>&1
  echo /tmp/site > "$(python3 -c 'import site; print(site.getsitepackages()[0])')/zz-course-wheels.pth"
fi
cp grader/simulated/fidelity_cuda.json grader/simulated/fidelity_cuda_1gpu.json "$out/"
python3 -m tests.simulated.fidelity --device cuda --add-missing "$out/fidelity_cuda.json" > "$out/work/fidelity.log" 2>&1
CUDA_VISIBLE_DEVICES=0 python3 -m tests.simulated.fidelity --device cuda --add-missing "$out/fidelity_cuda_1gpu.json" \
  >> "$out/work/fidelity.log" 2>&1
ONLY="${ONLY:-}" tools/on_gpu.sh "$out/work" verdicts > "$out/work/on_gpu.log" 2>&1
mv "$out/work/2gpu.json" "$out/work/1gpu.json" "$out/" 2>/dev/null
python3 -m pytest tests/test_isolation.py tests/test_attacks.py tests/test_daemon.py -q -p no:cacheprovider \
  -o addopts= > "$out/work/security_on_gpu.log" 2>&1
tar -czf "$out/logs.tgz" -C "$out/work" . && rm -rf "$out/work"
