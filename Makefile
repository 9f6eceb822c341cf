# The two commands of the README. Each installs what is missing first.
.PHONY: run test deps format lint coverage sanitize docs

deps:
	@Scripts/install-deps.sh

# Plays the bundled sample headless and prints its events.
run: deps
	swift run -c release media-events log

# Builds everything with warnings as errors, then runs the whole test suite, several test
# processes at once (Scripts/test.sh; TEST_ARGS=--coverage adds the line coverage).
test: deps
	@Scripts/test.sh $(TEST_ARGS)

# The checks CI adds; each is a script in Scripts/.

# Formats Sources, Tests, Examples and Benchmarks in place (swift-format, .swift-format).
format:
	@Scripts/format.sh

# Fails on any swift-format finding in the same folders, and on a libvlc call outside
# Sources/MediaEvents/Native/ (Scripts/check-native-layer.sh).
lint:
	@Scripts/lint.sh
	@Scripts/check-native-layer.sh

# Runs the whole suite instrumented; the last line is Sources/MediaEvents' line coverage.
coverage: deps
	@Scripts/test.sh --coverage

# Runs the whole suite under ThreadSanitizer, then under AddressSanitizer.
sanitize: deps
	@Scripts/test.sh --sanitize thread
	@Scripts/test.sh --sanitize address

# Builds the DocC catalog into .build/docs; fails on any docc warning.
docs: deps
	@Scripts/docs.sh
