# Entry points. Each target configures and builds what it needs through CMakePresets.json.
#   make demo       build and run the decode-step demo on the simulator
#   make test       build everything and run the whole test suite (gcc, release)
#   make asan       the test suite under AddressSanitizer + UndefinedBehaviorSanitizer (clang)
#   make tsan       the test suite under ThreadSanitizer (clang)
#   make controls   the negative controls (re-introduced defects must fail named tests)
#   make bench      run every benchmark; writes build/bench/results.{md,json}
#   make lint       clang-format and clang-tidy over the sources
.PHONY: demo test asan tsan controls bench lint format deps

deps:
	@scripts/check-deps.sh

demo: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default --target replayrt-demo
	@build/default/examples/replayrt-demo

test: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default
	@ctest --preset default

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

bench: deps
	@cmake --preset default >/dev/null
	@cmake --build --preset default
	@python3 bench/run_all.py --build-dir build/default --out-dir build/bench

lint: deps
	@scripts/lint.sh

format:
	@git ls-files '*.h' '*.cpp' '*.c' | xargs clang-format -i
