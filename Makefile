# Two commands do all the set-up on a fresh machine (each creates .venv when needed):
#   make book   build the book and say where to open it (make serve: the same, served on localhost)
#   make test   run the project's test suite: every behaviour once (about ten minutes on two idle cores)
# make setup only creates .venv (with the learner's `devcourse` tool in .venv/bin).

VENV   ?= .venv
PYTHON ?= python3
PY     := $(VENV)/bin/python
PORT   ?= 8000
# With an NVIDIA GPU: the newest torch. Without one: the release this course is tested on (on our CI
# machine a CPU-only wheel of it sits on disk, so no multi-GB CUDA build is pulled). Override at will:
#   make test TORCH_SPEC='torch>=2.11'
# Test files run in TEST_JOBS processes at once (pytest-xdist; a file's tests stay together): most tests wait
# for subprocesses (nbgrader, kernels, the grading workers, the browser), so two keep two cores busy.
TEST_JOBS ?= 2
TORCH_SPEC ?= $(shell command -v nvidia-smi >/dev/null 2>&1 && echo 'torch>=2.11' || echo 'torch==2.13.0')

.PHONY: setup book serve test test-all clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "$(TORCH_SPEC)"
	$(PY) -m pip install --quiet -e '.[dev]'
	@# An editable install compiles none of the grader's modules; every `devcourse check` would compile them
	@# again where bytecode is not written (PYTHONDONTWRITEBYTECODE), about 40 ms of each check.
	$(PY) -m compileall -q grader >/dev/null
	touch $@

setup: $(VENV)/.installed
	@echo "Ready. Activate it with: source $(VENV)/bin/activate   then try: devcourse list"

book: $(VENV)/.installed
	$(VENV)/bin/jupyter-book build . -W -n --keep-going
	@echo "The book is built. Open file://$(CURDIR)/_build/html/index.html (or run: make serve)"

serve: book
	@echo "Serving the book on http://localhost:$(PORT)/ (Ctrl-C to stop)"
	$(PY) -m http.server $(PORT) --bind 127.0.0.1 --directory _build/html

test: $(VENV)/.installed
	$(VENV)/bin/python -m pytest -n $(TEST_JOBS) --dist loadfile -m "not exhaustive"

# make test, and the sweeps and repeats it leaves out (tests marked exhaustive: every submission of every
# exercise, every OpInfo sample, every book page run on the CPU...).
test-all: $(VENV)/.installed
	$(VENV)/bin/python -m pytest -n $(TEST_JOBS) --dist loadfile

clean:
	rm -rf _build
