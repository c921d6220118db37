#!/bin/sh
# screenshot-report.sh DIR OUT.png — render DIR/report.html in headless
# Chromium to a PNG, to check a report by eye or attach it to an issue.
# Rebuild the report first with `cnibench report DIR` if the raw files changed.
# WIDTHxHEIGHT of the window can be set with SIZE (default 1200,3000).
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 RUN_DIR OUT.png" >&2
	exit 2
fi
dir=$1
out=$2
html="$dir/report.html"
if [ ! -f "$html" ]; then
	echo "$0: $html not found (run: cnibench report $dir)" >&2
	exit 1
fi

browser=
for b in chromium chromium-browser; do
	if command -v "$b" >/dev/null 2>&1; then
		browser=$b
		break
	fi
done
if [ -z "$browser" ]; then
	echo "$0: chromium (or chromium-browser) is not on PATH; install it (apt-get install chromium)" >&2
	exit 1
fi

abs_html=$(cd "$(dirname "$html")" && pwd)/report.html
case $out in
/*) abs_out=$out ;;
*) abs_out=$(pwd)/$out ;;
esac
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT INT TERM

# Every argument is quoted: no word splitting of paths with spaces.
# A screenshot takes seconds; a browser that hangs (a missing font
# service, a GPU probe) is stopped after 120 s with its helper processes
# (timeout signals its whole process group).
rc=0
timeout -k 10 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-component-update --disable-sync --no-first-run \
	"--user-data-dir=$profile" "--screenshot=$abs_out" "--window-size=${SIZE:-1200,3000}" \
	"file://$abs_html" >/dev/null 2>&1 || rc=$?
case $rc in
0) ;;
124 | 137) echo "$0: $browser did not finish in 120 s" >&2; exit 1 ;;
*) echo "$0: $browser failed (exit $rc)" >&2; exit 1 ;;
esac
if [ ! -s "$abs_out" ]; then
	echo "$0: no screenshot written to $abs_out" >&2
	exit 1
fi
echo "$abs_out"
