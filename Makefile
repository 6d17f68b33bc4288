# Thin wrapper around CMake: `make demo` and `make test` are the two commands.
BUILD ?= build
JOBS  ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

.PHONY: all deps build test demo clean asan valgrind bench bench-large

all: build

deps:
	@./scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

test:
	@SANDQ_WITH_TESTS=1 ./scripts/install-deps.sh
	@cmake -S . -B $(BUILD) -DSQ_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 600

demo: build
	@./scripts/demo.sh $(BUILD)

asan:
	@$(MAKE) test BUILD=build-asan CMAKE_FLAGS="-DSQ_SANITIZE=ON"

valgrind:
	@$(MAKE) test BUILD=build-vg CMAKE_FLAGS="-DSQ_VALGRIND=ON"

bench: build
	@SANDQ_WITH_BENCH=1 ./scripts/install-deps.sh
	@sh ./bench/run.sh $(BUILD)

# bench/large.sh and bench/seeded.sh alone up to a million tasks (make bench
# runs them at 10,000 and 100,000).
bench-large: build
	@SQ_BENCH_SEEDED_SIZES="10000 100000 1000000" sh ./bench/seeded.sh $(BUILD)
	@SQ_BENCH_LARGE_SIZES="10000 100000 1000000" sh ./bench/large.sh $(BUILD)

clean:
	rm -rf build build-asan build-vg demo-results.bson
