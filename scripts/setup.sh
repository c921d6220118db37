#!/usr/bin/env bash
# Installs what cnibench needs on a Debian/Ubuntu machine and builds it.
# Idempotent: installs only what is missing. Usage: sudo scripts/setup.sh [--test]
#   --test  also installs what the test suite needs (chromium for the report screenshot).
set -euo pipefail
cd "$(dirname "$0")/.."
# cloud-init runs this with HOME unset: go's build cache and
# build-flanneld.sh's cache live under it.
if [ -z "${HOME:-}" ]; then
  HOME=$(getent passwd "$(id -u)" 2>/dev/null | cut -d: -f6 || true)
  if [ -z "$HOME" ] && [ "$(id -u)" -eq 0 ]; then HOME=/root; fi
  export HOME
fi
# need_root WHAT: installing needs root; with everything there already,
# building does not.
need_root() {
  [ "$(id -u)" -eq 0 ] && return
  echo "setup: $1 needs root: sudo $0" >&2
  exit 2
}

# What this run made only for itself, removed however it ends.
remove_at_exit=()
trap 'rm -rf "${remove_at_exit[@]}"' EXIT
need_pkgs=()
# What cnibench can go without: each is installed in its own apt-get, and
# its failure (or the archive not offering it) is only a warning, with
# want_hint[ITEM] saying what goes without it (and want_none[ITEM] why the
# archive may offer none of it).
want_pkgs=()
declare -A want_hint=() want_none=()
# What the default study (rps-rfs, which quickstart.sh runs) cannot run
# without: the archive not offering it stops setup, which would otherwise
# only warn and leave the study to fail.
declare -A study_needs=([iperf3]=1)
have() { command -v "$1" >/dev/null 2>&1; }
have iperf3  || need_pkgs+=(iperf3)
# ethtool and iptables are in /sbin and /usr/sbin, which a PATH (plain su's)
# may lack.
have ethtool || [ -x /sbin/ethtool ] || need_pkgs+=(ethtool)
have ip      || need_pkgs+=(iproute2)
have gcc     || need_pkgs+=(gcc)
# cgo (go's runtime/cgo, flanneld's UDP backend) needs libc's headers,
# which gcc installed without recommends does not bring.
[ -e /usr/include/stdlib.h ] || need_pkgs+=(libc6-dev)
have curl    || need_pkgs+=(curl ca-certificates)
have unzip   || need_pkgs+=(unzip)
# Workload tools of the other built-in studies (request/response latency,
# HTTP, CPU cost per packet); small, so installed up front.
have sockperf || need_pkgs+=(sockperf)
have qperf    || need_pkgs+=(qperf)
have ab       || need_pkgs+=(apache2-utils)
# Names that differ between releases are alternatives, "a|b": the first
# the archive offers is installed (a,b: both). Debian 13 keeps nginx-light
# only as a transitional package.
have nginx    || [ -x /usr/sbin/nginx ] || need_pkgs+=("nginx-light|nginx")
# perf (CPU cost per packet): Ubuntu ships it per kernel, and its
# linux-tools-common's /usr/bin/perf is a wrapper that fails until
# linux-tools-$(uname -r) is in: what counts is that perf runs. A kernel
# the archive does not ship (a container's host) has no such package.
if ! perf --version >/dev/null 2>&1; then
  perf_want="linux-perf|linux-tools-common,linux-tools-$(uname -r)"
  want_pkgs+=("$perf_want")
  want_hint[$perf_want]="without a perf for kernel $(uname -r), a study with a cpp: true workload (cni-compare, workloads) is refused at that workload's line; run it with the --set the refusal names (workloads.NAME.cpp=false)"
fi
# nft: the nftables counters (counters: true) on both engines, and part of
# the kube engine's image.
have nft || [ -x /usr/sbin/nft ] || need_pkgs+=(nftables)
# The real flanneld (flannel-udp, implementation: flanneld) keeps its
# network configuration in etcd; flanneld itself is built below, so that
# `cnibench run datapaths` after the first command runs every datapath
# the kernel supports.
have etcd || need_pkgs+=(etcd-server)
# iptables: cni-compare's datapaths install their CNI's netfilter state
# with iptables-restore, and counters: true reads iptables-save -c.
have iptables || [ -x /usr/sbin/iptables ] || need_pkgs+=(iptables)
# modprobe: the kernel runs it to load a qdisc's or tunnel's module on
# first use (sch_netem, ipip, ...), and the pktgen and OVS probes run it;
# a minimal root may lack it, which would make modular features look absent.
have modprobe || [ -x /sbin/modprobe ] || need_pkgs+=(kmod)
# Open vSwitch's tools only where the kernel has its datapath module: the
# package pulls in Python, which nic-modes needs only if OVS can run.
kernel_has() {
  local m; m="/lib/modules/$(uname -r)"
  [ -d "/sys/module/$1" ] || grep -E "/$1\.ko" "$m/modules.dep" "$m/modules.builtin" >/dev/null 2>&1
}
if kernel_has openvswitch; then have ovs-dpctl || need_pkgs+=(openvswitch-switch); fi
if [ "${1:-}" = "--test" ]; then
  # The test suite also exercises the screenshot of the report, BIRD for
  # calico-routed's BGP mode, OVS (in the full-kernel VM too) and the
  # Kubernetes cluster.
  # The screenshot is optional (test.sh skips it without a browser).
  # Ubuntu has no chromium deb: its chromium-browser installs a snap from
  # its preinst, which fails where snapd is not running (a container, a
  # chroot), so it is tried only where snapd runs.
  if ! have chromium && ! have chromium-browser; then
    if [ -S /run/snapd.socket ]; then
      want_pkgs+=("chromium|chromium-browser")
    else
      want_pkgs+=(chromium)
      want_none[chromium]="; Ubuntu's chromium-browser is not tried: it installs a snap, and snapd is not running here"
    fi
    want_hint[${want_pkgs[-1]}]="test.sh skips the report's screenshot"
  fi
  # bird2 installs bird and birdc in /usr/sbin, which not every PATH has.
  have bird || [ -x /usr/sbin/bird ] || need_pkgs+=(bird2)
  have ovs-dpctl || need_pkgs+=(openvswitch-switch)
  # The Kubernetes engine's test cluster.
  have containerd || need_pkgs+=(containerd)
  have runc       || need_pkgs+=(runc)
  [ -x /usr/lib/cni/bridge ] || need_pkgs+=(containernetworking-plugins)
  have openssl    || need_pkgs+=(openssl)
fi
# first_offered "a|b,c": the first alternative whose packages the archive
# offers (a candidate version), as a space-separated list.
first_offered() {
  local alt p ok
  IFS='|' read -ra alts <<<"$1"
  for alt in "${alts[@]}"; do
    ok=1
    for p in ${alt//,/ }; do
      # grep reads to the end: -q would stop early, and under pipefail
      # apt-cache's SIGPIPE would count as "not offered".
      apt-cache policy "$p" 2>/dev/null | grep 'Candidate: [^(]' >/dev/null || ok=
    done
    if [ -n "$ok" ]; then echo "${alt//,/ }"; return 0; fi
  done
  return 1
}
# apt_install PKG...: apt-get install, its output kept to show when it fails.
apt_install() {
  local log; log=$(mktemp)
  remove_at_exit+=("$log")
  apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "$@" >"$log" 2>&1 && return 0
  tail -n 20 "$log" >&2
  return 1
}
if [ ${#want_pkgs[@]} -gt 0 ] && [ ${#need_pkgs[@]} -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
  echo "setup: warning: not root: not installing what cnibench can go without (${want_pkgs[*]//|/ or }; sudo $0 installs it)" >&2
  want_pkgs=()
fi
if [ ${#need_pkgs[@]} -gt 0 ] || [ ${#want_pkgs[@]} -gt 0 ]; then
  need_root "installing what is missing (${need_pkgs[*]} ${want_pkgs[*]})"
  export DEBIAN_FRONTEND=noninteractive
  # Packages such as etcd-server, openvswitch-switch and bird2 start a
  # service on install; cnibench starts its own instances, so keep them
  # from starting.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
    remove_at_exit+=(/usr/sbin/policy-rc.d)
  fi
  # apt-get update exits 0 when it could not fetch an index ("W: Failed
  # to fetch"): keep what it said, to name the cause if packages are missing.
  # -o DPkg::Lock::Timeout: wait (5 min at most) for an apt that runs
  # already, as on a fresh cloud machine's first boot, instead of failing.
  apt_said=$(apt-get update -qq -o DPkg::Lock::Timeout=300 2>&1) || { echo "$apt_said" >&2; echo "setup: apt-get update failed" >&2; exit 2; }
  apt_failed=$(grep -E '^(W: Failed to fetch|E: )' <<<"$apt_said" || true)
  # Ubuntu keeps iperf3, sockperf, qperf and etcd-server in its universe
  # component, which a minimal install may not enable.
  universe_hint=
  if [ "$(. /etc/os-release 2>/dev/null && echo "${ID:-}")" = ubuntu ] && ! apt-cache policy 2>/dev/null | grep 'c=universe' >/dev/null; then
    universe_hint="; Ubuntu's universe component (iperf3, sockperf, qperf, etcd-server) is not enabled: add-apt-repository universe (or add universe to the Components: of /etc/apt/sources.list.d/ubuntu.sources, or to sources.list's deb lines), then rerun $0"
  fi
  pkgs=() study_unoffered=()
  for need in "${need_pkgs[@]}"; do
    if ! found=$(first_offered "$need"); then
      if [ -n "${study_needs[$need]:-}" ]; then study_unoffered+=("${need//|/ or }"); continue; fi
      echo "setup: warning: the package archive offers none of: ${need//|/ or }" >&2
    fi
    # shellcheck disable=SC2206 # an alternative may name several packages
    pkgs+=($found)
  done
  if [ ${#need_pkgs[@]} -gt 0 ] && [ ${#pkgs[@]} -eq 0 ]; then
    echo "setup: the package archive offers none of what is missing (${need_pkgs[*]})$universe_hint" >&2
    [ -z "$apt_failed" ] || printf 'setup: apt-get update could not reach it:\n%s\n' "$apt_failed" >&2
    exit 2
  fi
  if [ ${#study_unoffered[@]} -gt 0 ]; then
    echo "setup: the package archive offers none of: ${study_unoffered[*]}, which the default study (rps-rfs) needs$universe_hint" >&2
    [ -z "$apt_failed" ] || printf 'setup: apt-get update could not reach it:\n%s\n' "$apt_failed" >&2
    exit 2
  fi
  [ -z "$apt_failed" ] || printf 'setup: warning: apt-get update could not fetch some indexes:\n%s\n' "$apt_failed" >&2
  # iperf3's package asks whether to start a daemon; say no.
  echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections 2>/dev/null || true
  if [ ${#pkgs[@]} -gt 0 ]; then
    echo "setup: installing ${pkgs[*]}"
    apt_install "${pkgs[@]}" || {
      echo "setup: installing ${pkgs[*]} failed; apt-get's last lines above name the cause: often the network, a proxy (http_proxy, Acquire::http::Proxy) or the mirror in /etc/apt/sources.list*; after an interrupted dpkg, dpkg --configure -a. Then rerun $0" >&2
      exit 2
    }
  fi
  for want in "${want_pkgs[@]}"; do
    if ! found=$(first_offered "$want"); then
      echo "setup: warning: the package archive offers none of: ${want//|/ or }${want_none[$want]:-} (${want_hint[$want]})" >&2
      continue
    fi
    echo "setup: installing $found (optional)"
    # shellcheck disable=SC2086 # an alternative may name several packages
    apt_install $found || echo "setup: warning: installing $found failed (apt-get's last lines above); going on without it (${want_hint[$want]})" >&2
  done
  # ... nor at boot: installed here only for cnibench's own instances (a
  # service the user had installed before is left as it was). Entries are
  # PACKAGE:SERVICE, the package as installed (either of nginx's
  # alternatives): nginx's would serve its default site on :80 after a
  # reboot; the test cluster starts its own containerd.
  for pkg_svc in etcd-server:etcd bird2:bird openvswitch-switch:openvswitch-switch \
    nginx-light:nginx nginx:nginx containerd:containerd; do
    if [[ " ${pkgs[*]} " == *" ${pkg_svc%%:*} "* ]] && have systemctl; then
      systemctl disable "${pkg_svc#*:}" >/dev/null 2>&1 || true
    fi
  done
fi

# Go: the first of PATH's, /usr/local/go's and the one fetched before that
# is go.mod's version or newer, put first on PATH; else fetch the toolchain
# named in go.mod from the Go module proxy (golang.org/toolchain).
. scripts/go-toolchain.sh
want=$(go_want)
if gobin=$(go_dir); then
  export PATH="$gobin:$PATH"
else
  arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
  dest=/usr/local/lib/cnibench-go
  if [ ! -x "$dest/go/bin/go" ] || [ "$("$dest/go/bin/go" env GOVERSION 2>/dev/null)" != "go$want" ]; then
    sum=$(awk -v v="$want" -v a="$arch" '$1 == v && $2 == a {print $3}' scripts/go-toolchain.sha256)
    if [ -z "$sum" ]; then
      echo "setup: no pinned checksum for Go $want on $arch in scripts/go-toolchain.sha256: install Go $want (https://go.dev/dl) or add its line" >&2
      exit 2
    fi
    # From the Go module proxy go itself would use (GOPROXY): a machine
    # may reach only its company's.
    if ! proxy=$(go_proxy); then
      echo "setup: GOPROXY ($(redact_url "${GOPROXY-}")) allows no proxy to fetch Go $want from (\"direct\" or \"off\" comes before any): set GOPROXY to a Go module proxy, or install Go $want yourself (https://go.dev/dl, on PATH or in /usr/local/go), and rerun $0" >&2
      exit 2
    fi
    need_root "installing Go $want into $dest"
    echo "setup: fetching Go $want from $(redact_url "$proxy")"
    tmp=$(mktemp -d)
    # The download (about 70 MB) goes whatever stops the fetch; a stalled
    # transfer is cut after 10 minutes and tried again. --netrc-optional:
    # a proxy's credentials in ~/.netrc, which go reads too.
    remove_at_exit+=("$tmp")
    go_url="$proxy/golang.org/toolchain/@v/v0.0.1-go${want}.linux-${arch}.zip"
    curl -fsSL --netrc-optional --max-time 600 --retry 3 -o "$tmp/go.zip" "$go_url" || {
      echo "setup: fetching Go $want failed (curl exit $?, $(redact_url "$go_url")): check the network, the Go module proxy (GOPROXY) and an HTTP proxy (https_proxy; sudo drops both unless kept: sudo --preserve-env=http_proxy,https_proxy,no_proxy,GOPROXY), or install Go $want yourself (https://go.dev/dl, on PATH or in /usr/local/go) and rerun $0" >&2
      exit 2
    }
    if ! echo "$sum  $tmp/go.zip" | sha256sum -c --quiet - >/dev/null 2>&1; then
      echo "setup: the Go $want toolchain fetched does not match its sha256 in scripts/go-toolchain.sha256" >&2
      exit 2
    fi
    mkdir -p "$dest" && unzip -q "$tmp/go.zip" -d "$tmp/x"
    rm -rf "$dest/go" && mv "$tmp/x/golang.org/toolchain@v0.0.1-go${want}.linux-${arch}" "$dest/go"
    chmod +x "$dest/go/bin/"* "$dest/go/pkg/tool/"*/* 2>/dev/null || true
    rm -rf "$tmp"
  fi
  export PATH="$dest/go/bin:$PATH"
fi

mkdir -p bin
# The commit stamped where git can read the checkout (see Makefile).
vcs=false
if git status --porcelain >/dev/null 2>&1; then vcs=true; fi
if ! go build -buildvcs="$vcs" -trimpath -o bin/cnibench ./cmd/cnibench; then
  echo "setup: building bin/cnibench with $(go version | awk '{print $3}') failed (go's output above): a module go could not download points at the Go module proxy (GOPROXY) or an HTTP proxy (https_proxy); then rerun $0" >&2
  exit 2
fi
# The real flanneld for flannel-udp (pinned, cached): only the datapaths
# that run it need it, not the default study, so a failed build (the
# module proxy, cgo) is a warning; the test suite runs it, so with --test
# it stops setup.
if ! scripts/build-flanneld.sh; then
  if [ "${1:-}" = "--test" ]; then
    echo "setup: building flanneld failed (its output above), and the test suite runs it: fix what it names and rerun $0 --test" >&2
    exit 2
  fi
  echo "setup: warning: building flanneld failed (its output above): the datapaths that run the real flanneld (flannel-udp, implementation: flanneld) are unavailable until scripts/build-flanneld.sh succeeds; rps-rfs and the other datapaths do not need it" >&2
fi
echo "setup: built bin/cnibench ($(go version | awk '{print $3}'))"
