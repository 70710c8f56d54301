# Entry points. Each target configures and builds what it needs through CMakePresets.json.
#   make demo       build and run the decode-step demo on the simulator
#   make llama      build and run the llama-style decoder example (LLAMA_ARGS: its options)
#   make test       build everything and run the whole test suite (gcc, release), the Python
#                   package's pytest suite included; TEST_CONFIGURE: extra configure options
#   make python     build the Python package into build/default/python (PYTHONPATH=that)
#   make asan       the test suite under AddressSanitizer + UndefinedBehaviorSanitizer (clang)
#   make tsan       the test suite under ThreadSanitizer (clang)
#   make controls   the negative controls (re-introduced defects must fail named tests)
#   make bench      run every benchmark and plot the results: build/bench/results.{md,json}
#                   and build/bench/*.png; BENCH_PUBLISH=1 also copies results.{md,json} to
#                   docs/bench/ and draws the plots there (the copies README.md shows)
#   make fuzz       build the libFuzzer targets (clang) and run each for FUZZ_SECONDS (60)
#   make stress     the stress program under ThreadSanitizer, then AddressSanitizer, for
#                   STRESS_SECONDS (60) each with STRESS_THREADS (8) threads
#   make soak       10^6 kernel-mode replays, resident memory and allocator calls sampled;
#                   writes build/bench/soak.json
#   make lint       clang-format and clang-tidy over the sources
#   make gpu-bundle build the GPU binaries here (no GPU needed) into .gpu-bundle/, which
#                   scripts/gpu-check.sh runs on a GPU machine instead of building there
.PHONY: demo llama test python asan tsan controls bench fuzz stress soak lint format deps gpu-bundle

FUZZ_SECONDS ?= 60
FUZZ_TARGETS := callable_desc_fuzzer invocation_fuzzer lifecycle_fuzzer
STRESS_SECONDS ?= 60
STRESS_THREADS ?= 8

deps:
	@scripts/check-deps.sh

demo: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default --target replayrt-demo
	@build/default/examples/replayrt-demo

llama: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default --target llama-decoder
	@build/default/examples/llama-decoder $(LLAMA_ARGS)

test: deps
	@cmake --preset default $(TEST_CONFIGURE) >/dev/null
	@cmake --build --preset default
	@ctest --preset default

python: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default --target replayrt_python

asan: deps
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan
	@ctest --preset asan

tsan: deps
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan
	@ctest --preset tsan

controls: deps
	@python3 tests/negative_controls/run.py

# The plots need matplotlib, which Debian's /usr/bin/python3 has (python3-matplotlib).
bench:
	@scripts/check-deps.sh --bench
	@cmake --preset default >/dev/null
	@cmake --build --preset default
	@python3 bench/run_all.py --build-dir build/default --out-dir build/bench
	@/usr/bin/python3 bench/plot_results.py build/bench/results.json --out-dir build/bench
ifneq ($(BENCH_PUBLISH),)
	@mkdir -p docs/bench
	@cp build/bench/results.json build/bench/results.md docs/bench/
	@/usr/bin/python3 bench/plot_results.py docs/bench/results.json --out-dir docs/bench
endif

fuzz: deps
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz --target $(FUZZ_TARGETS)
	@tests/fuzz/run.sh build/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

stress: deps
	@cmake --preset tsan >/dev/null
	@cmake --build --preset tsan --target replayrt-stress
	@TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 build/tsan/tests/stress/replayrt-stress \
	  --threads $(STRESS_THREADS) --seconds $(STRESS_SECONDS) --watchdog 60
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan --target replayrt-stress
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  build/asan/tests/stress/replayrt-stress --threads $(STRESS_THREADS) \
	  --seconds $(STRESS_SECONDS) --watchdog 60

soak: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default --target soak_bench
	@mkdir -p build/bench
	@build/default/bench/soak_bench --json build/bench/soak.json

GPU_BUNDLE_TARGETS := cuda_gpu_test cuda_conformance_gpu_test gpu_replay_bench llama-decoder \
  replayrt

gpu-bundle: deps
	@cmake --preset gpu-bundle >/dev/null
	@bash scripts/gpu-bundle.sh --source-hash >build/gpu-bundle/source-hash.txt
	@cmake --build --preset gpu-bundle --target $(GPU_BUNDLE_TARGETS)
	@bash scripts/gpu-bundle.sh build/gpu-bundle .gpu-bundle

lint: deps
	@scripts/lint.sh

format:
	@git ls-files '*.h' '*.hpp' '*.cpp' '*.c' | xargs clang-format -i
