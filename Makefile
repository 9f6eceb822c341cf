# The two commands of the README. Each installs what is missing first.
.PHONY: run test deps format lint coverage docs

deps:
	@Scripts/install-deps.sh

# Plays the bundled sample headless and prints its events.
run: deps
	swift run -c release media-events log

# Builds everything with warnings as errors, then runs the whole test suite.
test: deps
	swift build --build-tests -Xswiftc -warnings-as-errors
	swift test

# The checks CI adds; each is a script in Scripts/.

# Formats Sources, Tests, Examples and Benchmarks in place (swift-format, .swift-format).
format:
	@Scripts/format.sh

# Fails on any swift-format finding in the same folders.
lint:
	@Scripts/lint.sh

# Runs the whole suite instrumented; the last line is Sources/MediaEvents' line coverage.
coverage: deps
	@Scripts/coverage.sh

# Builds the DocC catalog into .build/docs; fails on any docc warning.
docs: deps
	@Scripts/docs.sh
