# DepthLab's two commands. `make run`: install what is missing, build Release, open the lab.
# `make test`: install, build, run every test. Both are idempotent and quick when nothing changed.
BUILD_DIR ?= build/release
JOBS ?= $(shell nproc)
CTEST_ARGS ?=

.PHONY: run test build deps configure bench clean

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

bench: build
	$(BUILD_DIR)/app/depthlab-cli bench store

clean:
	rm -rf build
