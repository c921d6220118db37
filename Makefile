# Shortcuts for the scripts in scripts/ (the README uses the scripts
# directly, because a fresh machine may not have make).
.PHONY: build quickstart test clean
# -buildvcs=auto stamps the commit into the binary (internal/version: the
# version env.json records and --resume checks) even where GOFLAGS says
# -buildvcs=false, and builds without it outside a git checkout.
build:
	go build -buildvcs=auto -trimpath -o bin/cnibench ./cmd/cnibench
quickstart:
	scripts/quickstart.sh
test:
	scripts/test.sh
clean:
	rm -rf bin
