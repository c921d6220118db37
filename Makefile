# Shortcuts for the scripts in scripts/ (the README uses the scripts
# directly, because a fresh machine may not have make).
.PHONY: build quickstart test clean
build:
	go build -trimpath -o bin/cnibench ./cmd/cnibench
quickstart:
	scripts/quickstart.sh
test:
	scripts/test.sh
clean:
	rm -rf bin
