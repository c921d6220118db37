#!/usr/bin/env bash
# The README's first command: set up what is missing, then run the default
# study (rps-rfs, quick profile) on the local engine.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "quickstart: run as root (sudo $0): the local engine creates network namespaces" >&2
  exit 2
fi
scripts/setup.sh
exec bin/cnibench run rps-rfs --quick "$@"
