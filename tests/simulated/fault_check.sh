#!/bin/bash
# Mutation check for the simulator tests (issue 13): each line applies a fault, runs the tests that must
# catch it (expect "N failed"), and restores the file from a backup. Run from anywhere: bash tests/simulated/fault_check.sh
# The faults go into a private copy of the working tree (never the tree itself, which others may be editing or
# committing, and which an interrupted run would leave broken); no .pyc is written, so a fault of the same
# size as the original line is never masked by a cached one. The whole mutation run: tools/mutation/run.sh.
cd "$(dirname "$0")/../.."
REPO=$PWD
PY=$REPO/.venv/bin/python
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fault-check-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$WORK"
cd "$WORK"
export PYTHONDONTWRITEBYTECODE=1
# apply a fault, run the given tests, expect failure, restore
run() {  # file sed-expr tests...
  f=$1; e=$2; shift 2
  cp "$f" "$WORK/.fault_backup"
  sed -i "$e" "$f"
  if cmp -s "$f" "$WORK/.fault_backup"; then echo "FAULT NOT APPLIED: $e"; cp "$WORK/.fault_backup" "$f"; return; fi
  out=$(timeout 600 "$PY" -m pytest "$@" -q -p no:cacheprovider 2>&1 | tail -1)
  cp "$WORK/.fault_backup" "$f"
  echo "[$e] -> $out"
}
run grader/simulated/tensor.py 's/    sync(func.__name__.split(".")\[0\], args\[0\]._idx)/    pass/' tests/simulated/test_async.py
run grader/simulated/tensor.py 's/    aten.masked_select.default: op_nonzero,/    aten.masked_select.default: lambda f, a, k: generic(f, a, k),/' tests/simulated/test_async.py
run grader/simulated/tensor.py 's/    aten.nonzero.default: op_nonzero,/    aten.nonzero.default: lambda f, a, k: generic(f, a, k),/' tests/simulated/test_async.py
run grader/simulated/streams.py 's|return (end_event._time - self._time) / 1000.0|return (end_event._time - self._time) / 1000.0 * 1.05|' tests/simulated/test_async.py tests/simulated/test_accelerator.py
run grader/simulated/streams.py 's|self._time = max(c.host, stream_end(\*self._key))|self._time = c.host|' tests/simulated/test_async.py tests/simulated/test_accelerator.py tests/simulated/test_stream_races.py
run grader/simulated/allocator.py 's/^MIN_BLOCK = 512/MIN_BLOCK = 1024/' tests/simulated/test_allocator.py tests/simulated/test_accelerator.py
run grader/simulated/allocator.py 's/^MIN_BLOCK = 512/MIN_BLOCK = 256/' tests/simulated/test_allocator.py tests/simulated/test_accelerator.py
run grader/simulated/allocator.py 's/^SMALL_BUFFER = 2 \* MiB/SMALL_BUFFER = 4 * MiB/' tests/simulated/test_allocator.py
run grader/simulated/allocator.py 's/^LARGE_BUFFER = 20 \* MiB/LARGE_BUFFER = 16 * MiB/' tests/simulated/test_allocator.py
run grader/simulated/allocator.py 's/^ROUND_LARGE = 2 \* MiB/ROUND_LARGE = 1 * MiB/' tests/simulated/test_allocator.py
run grader/simulated/tensor.py 's/            queue_h2d(dst._idx, dst._data, src)/            dst._data.copy_(src)/' tests/simulated/test_async.py
run grader/simulated/clock.py 's/        _note_host_read(read, config.dev(idx if idx is not None else config.CURRENT\[0\]))/        pass/' tests/simulated/test_async.py
run grader/simulated/registration.py 's/^    _patch_module_apply()/    pass/' tests/simulated/test_optimizer_move.py
run grader/simulated/pinned.py "s/    return RuntimeError(f\"cannot pin/    return RuntimeError(f\"can not pin/" tests/simulated/test_async.py
run grader/simulated/tensor.py 's/    aten._pin_memory.default: op_pin_memory,//' tests/simulated/test_async.py
run grader/simulated/generators.py 's/        raise generator_device_error(str(gen.device.type))/        return gen/' tests/simulated/test_generators.py
run grader/simulated/accelerator.py 's/    sync("synchronize", _idx(i))/    pass/' tests/simulated/test_accelerator.py
# races between streams (races.py, clock.py "Streams", the allocator's pools per stream)
run grader/simulated/races.py 's/        if w is not None and w\[0\] != key and/        if False and w is not None and w[0] != key and/' tests/simulated/test_stream_races.py
run grader/simulated/races.py 's/            _poison_from(i)/            pass/' tests/simulated/test_stream_races.py
run grader/simulated/races.py 's/    allocator.hold(block)/    return True/' tests/simulated/test_stream_races.py
run grader/simulated/allocator.py 's/            if pool\[i\]\[2\].stream == stream:/            if True:/' tests/simulated/test_stream_races.py
run grader/simulated/clock.py 's/        waited = \[stream_key(idx, sid)\]/        waited = [k for k in c.streams if k[0] == idx]/' tests/simulated/test_stream_races.py
run grader/simulated/streams.py 's/        config.CURRENT\[0\] = self._idx/        pass/' tests/simulated/test_stream_races.py
run grader/simulated/streams.py 's/            merge_known(mine, known)/            pass/' tests/simulated/test_stream_races.py
