# DepthLab's two commands. `make run`: install what is missing, build Release, open the lab.
# `make test`: install, build, run every test. Both are idempotent and quick when nothing changed.
# The torch2 configuration builds the same tree against PyTorch's own LibTorch 2.x (the CUDA
# build of pip's torch, in a private virtual environment; see scripts/torch2-env.sh):
# `make test-torch2` runs every test there but the window's (test_ui touches no tensor: it runs in
# `make test`), `make run-torch2` opens the lab built with it.
BUILD_DIR ?= build/release
TORCH2_BUILD_DIR ?= build/torch2
JOBS ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: run test build deps configure bench clean torch2-configure build-torch2 test-torch2 run-torch2 screenshot python-install

deps:
	@bash scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: CMakeLists.txt CMakePresets.json
	cmake --preset release

configure: deps $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@bash scripts/run-lab.sh $(BUILD_DIR)

test: build
	cd $(BUILD_DIR) && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

torch2-configure: deps
	@torch_dir=$$(bash scripts/torch2-env.sh | tail -n 1) && \
	  python=$$(cd "$$torch_dir/../../../.." 2>/dev/null && pwd)/bin/python && \
	  if [ -x "$$python" ]; then py="-DDEPTHLAB_BUILD_PYTHON=ON -DPython3_EXECUTABLE=$$python"; \
	  else py="-DDEPTHLAB_BUILD_PYTHON=OFF"; fi && \
	  cmake --preset torch2 -DCMAKE_PREFIX_PATH="$$torch_dir/share/cmake;$$torch_dir" $$py >/dev/null && \
	  echo "torch2: configured $(TORCH2_BUILD_DIR) against $$torch_dir"

build-torch2: torch2-configure
	cmake --build $(TORCH2_BUILD_DIR) -j $(JOBS)

test-torch2: build-torch2
	cd $(TORCH2_BUILD_DIR) && QT_QPA_PLATFORM=offscreen ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

run-torch2: build-torch2
	@bash scripts/run-lab.sh $(TORCH2_BUILD_DIR)

# The `depthlab` Python package (depthlab.watch, docs/watch.md) into the environment of PYTHON,
# built against the torch installed there; never into a Python outside a virtual environment.
PYTHON ?= python3
python-install: deps
	@bash scripts/python-install.sh "$(PYTHON)"

# The README's dashboard screenshot, made by the lab itself: a cpu-demo group trained into a
# temporary database, rendered offscreen (scripts/make-screenshot.sh).
screenshot: build
	@bash scripts/make-screenshot.sh $(BUILD_DIR) docs/images/dashboard.png

bench: build
	$(BUILD_DIR)/app/depthlab-cli bench store

clean:
	rm -rf build
