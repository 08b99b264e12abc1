# Every target that needs Python makes .venv first, so a fresh clone needs only python3.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SAMPLE := resources/sample.safetensors
PIP    := $(BIN)/python -m pip -q --disable-pip-version-check
# pip's output goes to a log that is shown only when it fails (this machine's mirrors are chatty)
QUIET  = > $(VENV)/pip.log 2>&1 || { cat $(VENV)/pip.log; exit 1; }

.PHONY: run test test-fallbacks lint bench fuzz mutate translations package package-test clean install install-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip $(QUIET)

# stamps: reinstall when pyproject.toml changes
# the window's translations: .ts sources (pyside6-lupdate) compiled to .qm (pyside6-lrelease)
TS := $(wildcard inspector/gui/i18n/*.ts)
QM := $(TS:.ts=.qm)
inspector/gui/i18n/%.qm: inspector/gui/i18n/%.ts | $(VENV)/.installed
	$(BIN)/pyside6-lrelease -silent $< -qm $@

# after changing window strings: refresh the .ts files (then translate what is new)
translations: $(VENV)/.installed
	$(BIN)/pyside6-lupdate inspector/gui/*.py -ts $(TS) -no-obsolete
	$(MAKE) $(QM)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install -e . $(QUIET)
	$(BIN)/python -c "import inspector, PySide6, pyqtgraph, safetensors, ml_dtypes"
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install -e '.[test]' $(QUIET)
	$(BIN)/python -c "import inspector, PySide6, pyqtgraph, safetensors, ml_dtypes, torch, pytest, pytestqt, hypothesis"
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test $(QM)

run: $(VENV)/.installed $(QM)
	@if [ "$$(uname)" = Linux ] && [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ] && [ -z "$$QT_QPA_PLATFORM" ]; then \
		echo "No display found (DISPLAY/WAYLAND_DISPLAY unset): rendering the window to sample-screenshot.png instead."; \
		QT_QPA_PLATFORM=offscreen $(BIN)/checkpoint-inspector --screenshot sample-screenshot.png $(SAMPLE) \
			&& echo "Wrote sample-screenshot.png"; \
	else \
		$(BIN)/checkpoint-inspector $(SAMPLE); \
	fi

test: $(VENV)/.installed-test $(QM)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q
	$(MAKE) --no-print-directory test-fallbacks

# Each platform facility switched off in turn (--without, issue 34), as on macOS, Windows or a
# file system without it: the tests of what uses it then run its fallback (~2.5 min on 2 cores).
CAST_TESTS   := tests/core/test_cast.py tests/core/test_cast_processes.py \
	tests/core/test_cast_pool.py tests/core/test_early_workers.py tests/core/test_checkpoint.py
SAVE_TESTS   := tests/core/test_save_commit.py tests/core/test_save_faults.py \
	tests/core/test_writer.py tests/core/test_writer_commit.py tests/core/test_commit_journal.py
SIGNAL_TESTS := tests/core/test_thread_start.py tests/cli/test_cli_hostile.py
PREVIEW_TESTS := tests/core/quantize/test_preview_processes.py
FALLBACKS    := pwrite:CAST populate:CAST madvise:CAST affinity:CAST writeback:SAVE flock:SAVE \
	link:SAVE dir_fsync:SAVE full_fsync:SAVE replace_mapped:SAVE fchmod:SAVE unlink_open:SAVE \
	sighup:SIGNAL mallopt:PREVIEW all:CAST+SAVE+SIGNAL+PREVIEW
test-fallbacks: $(VENV)/.installed-test
	@set -e; for pair in $(FALLBACKS); do \
		facility=$${pair%%:*}; tests=; \
		case $${pair#*:} in *CAST*) tests="$$tests $(CAST_TESTS)";; esac; \
		case $${pair#*:} in *SAVE*) tests="$$tests $(SAVE_TESTS)";; esac; \
		case $${pair#*:} in *SIGNAL*) tests="$$tests $(SIGNAL_TESTS)";; esac; \
		case $${pair#*:} in *PREVIEW*) tests="$$tests $(PREVIEW_TESTS)";; esac; \
		echo "without $$facility:"; \
		QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:cacheprovider \
			--without=$$facility $$tests; \
	done

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml

bench: $(VENV)/.installed-test
	$(BIN)/python bench/cast_vs_torch.py
	$(BIN)/python bench/list_vs_safe_open.py
	$(BIN)/python bench/pickle_vs_torch.py
	$(BIN)/python bench/burnpack_vs_safetensors.py
	$(BIN)/python bench/gguf_vs_reader.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/gui_open_200k.py

fuzz: $(VENV)/.installed-test
	$(PIP) install atheris
	$(BIN)/python tests/fuzz/fuzz_header.py -max_total_time=300
	$(BIN)/python tests/fuzz/fuzz_pickle.py -max_total_time=300
	$(BIN)/python tests/fuzz/fuzz_burnpack.py -max_total_time=300
	$(BIN)/python tests/fuzz/fuzz_gguf.py -max_total_time=300

# mutation testing (mutmut; not in CI: hours on 2 cores). Config: pyproject [tool.mutmut], the
# core set (inspector/core/, inspector/session/); MUTATE_SET=gui (the window's job runner, workers
# and controllers, pytest-qt headless) or cli: [tool.mutmut.sets.*], through tools/mutate.py.
# MUTATE_ONLY (globs of files) and MUTATE_TESTS (test paths) narrow a set, MUTATE names mutants,
# MUTATE_CHILDREN=1 runs one at a time. Afterwards: $(BIN)/python tools/mutate.py --set SET -- show NAME
# One OpenMP thread: mutmut forks each mutant's run from a process that already ran torch, and
# torch's OpenMP pool deadlocks in a forked child (every such mutant then "timed out").
MUTATE_SET ?= core
# window tests wait a quarter as long for a signal (a mutant that stops one costs 5 s, not 20)
MUTATE_WAITS = $(if $(filter gui,$(MUTATE_SET)),CHECKPOINT_INSPECTOR_TEST_WAIT_SCALE=0.25)
MUTMUT = $(BIN)/python tools/mutate.py --set $(MUTATE_SET) $(MUTATE_ONLY:%=--only '%') \
	$(MUTATE_TESTS:%=--tests %) --
mutate: $(VENV)/.installed-test
	$(PIP) install "mutmut>=3.8,<4" $(QUIET)
	rm -rf mutants
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(MUTATE_WAITS) $(MUTMUT) run \
		$(if $(MUTATE_CHILDREN),--max-children $(MUTATE_CHILDREN)) $(MUTATE)
	$(MUTMUT) results

# one-folder bundle in dist/checkpoint-inspector/ (PyInstaller; a few minutes the first time)
package: $(VENV)/.installed $(QM)
	$(PIP) install "pyinstaller>=6.5" $(QUIET)
	PYTHON=$(BIN)/python bash packaging/build.sh

# run the built bundle headless (list, --screenshot, errors) plus the desktop-integration checks
package-test: $(VENV)/.installed-test package
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q --run-slow tests/packaging

clean:
	rm -rf $(VENV) build dist .pytest_cache .ruff_cache mutants
