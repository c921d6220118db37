# Shortcuts for the scripts in scripts/ (the README uses the scripts
# directly, because a fresh machine may not have make).
.PHONY: build quickstart test clean
# The commit is stamped into the binary (internal/version: the version
# env.json records and --resume checks) where git can read the checkout,
# whatever GOFLAGS or `go env` say; where it cannot (no git, or root
# building a user's clone: "dubious ownership"), -buildvcs=true or auto
# would fail the build, so it is built without the stamp.
VCS := $(shell git status --porcelain >/dev/null 2>&1 && echo true || echo false)
build:
	go build -buildvcs=$(VCS) -trimpath -o bin/cnibench ./cmd/cnibench
quickstart:
	scripts/quickstart.sh
test:
	scripts/test.sh
clean:
	rm -rf bin
