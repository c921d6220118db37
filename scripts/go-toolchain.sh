# shellcheck shell=bash
# Sourced (not run) by scripts/setup.sh and scripts/test.sh, from the
# checkout's top directory: which Go builds cnibench, and where go.mod's
# toolchain is fetched from when there is none. The checksums of what is
# fetched are in scripts/go-toolchain.sha256.

# go_want: go.mod's go line, the oldest Go that builds cnibench.
go_want() { awk '/^go [0-9]/{print $2}' go.mod; }

# go_dir [DIR...]: the directory of the first Go that is go_want's version
# or newer, among the first go on PATH and DIRs (default: /usr/local/go's
# and the one setup.sh fetches). An older go first on PATH (Debian 12's
# golang-go is 1.19) cannot build go.mod's version, and PATH order alone
# would pick it: the caller puts the directory found first on PATH. A
# fetched toolchain go.mod has moved past must not shadow a newer
# /usr/local/go either. Prints nothing and fails when there is none.
go_dir() {
  local want d v
  want=$(go_want)
  [ $# -gt 0 ] || set -- /usr/local/go/bin /usr/local/lib/cnibench-go/go/bin
  for d in "$(dirname "$(command -v go || echo /nonexistent/go)")" "$@"; do
    v=$("$d/go" env GOVERSION 2>/dev/null) || continue
    case $v in go[0-9]*) ;; *) continue ;; esac
    if [ "$(printf '%s\n%s\n' "$want" "${v#go}" | sort -V | head -n1)" = "$want" ]; then echo "$d"; return 0; fi
  done
  return 1
}

# go_proxy: the Go module proxy the toolchain's zip is fetched from, read
# from GOPROXY (default https://proxy.golang.org) as go reads it
# (cmd/go/internal/modfetch/proxy.go, proxyList): entries split on "," and
# "|", blank ones skipped, "https://" put before one without a scheme, and
# "direct" and "off" end the list. Only a proxy serves
# golang.org/toolchain's zip, so it is the first entry before those; none
# (GOPROXY=direct, or off): fails.
go_proxy() {
  local e entries
  IFS=',|' read -ra entries <<<"${GOPROXY:-https://proxy.golang.org}"
  for e in "${entries[@]}"; do
    e=${e//[[:space:]]/}
    case $e in
      '') continue ;;
      direct | off) return 1 ;;
      *:/*) ;;
      *) e="https://$e" ;;
    esac
    while [ "${e%/}" != "$e" ]; do e=${e%/}; done
    echo "$e"
    return 0
  done
  return 1
}

# redact_url URL...: the URLs with a user:password@ replaced, for messages
# (a company GOPROXY may carry its credentials).
redact_url() { printf '%s\n' "$*" | sed -E 's#://[^/@]*@#://***@#g'; }
