#!/usr/bin/env bash
# Prepares the full-kernel VM that runs cnibench's kernel tests on Debian's
# own kernel (ipip, gre, geneve, wireguard, ipvlan, netem, openvswitch ...),
# which the CI kernel lacks. See docs/datapaths.md and
# ../shared/docs/full-kernel-vm.md. Idempotent; run as root.
#
#   scripts/vm/setup.sh            install QEMU etc. and build the cache
#   CNIBENCH_VM_CACHE=/dir ...     cache location (default /var/cache/cnibench-vm)
#
# The cache holds: the kernel package extracted (root/), its modules
# indexed by depmod, the uncompressed kernel (vmlinux) and a tiny
# initramfs (initrd.img: busybox-static + the modules the guest needs).
# Nothing is installed into the host's /lib/modules or /boot.
#
# The kernel is the distribution's own: Debian's linux-image-amd64, or on
# Ubuntu linux-image-generic (whose modules come in linux-modules-* and
# linux-modules-extra-*, zstd-compressed, and whose vmlinuz is booted as it
# is when it holds no xz payload).
set -euo pipefail
CACHE=${CNIBENCH_VM_CACHE:-/var/cache/cnibench-vm}
HERE=$(cd "$(dirname "$0")" && pwd)

if [ "$(id -u)" -ne 0 ]; then echo "vm setup: run as root" >&2; exit 2; fi

# elf_static FILE: FILE is an ELF64 (little-endian, as on x86-64) program
# without a program interpreter (no PT_INTERP header): statically linked.
# od only, because a minimal host may have no `file` or `readelf`.
elf_static() {
  local phoff phentsize phnum i
  [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] || return 1
  phoff=$(od -An -t u8 -j 32 -N 8 "$1" | tr -d ' ')
  phentsize=$(od -An -t u2 -j 54 -N 2 "$1" | tr -d ' ')
  phnum=$(od -An -t u2 -j 56 -N 2 "$1" | tr -d ' ')
  for ((i = 0; i < phnum; i++)); do
    [ "$(od -An -t u4 -j $((phoff + i * phentsize)) -N 4 "$1" | tr -d ' ')" != 3 ] || return 1
  done
}
# static_busybox: a static busybox with insmod on this host, if any. The
# initramfs has no libc: Debian's busybox package (dynamically linked, also
# /bin/busybox) would leave the guest without an init.
static_busybox() {
  local b
  for b in "$(command -v busybox 2>/dev/null)" /bin/busybox /usr/bin/busybox; do
    [ -x "$b" ] && elf_static "$b" && "$b" --list 2>/dev/null | grep -x insmod >/dev/null && { echo "$b"; return 0; }
  done
  return 1
}

# The distribution's kernel metapackage; qemu-system-x86_64 runs it.
. /etc/os-release
case " ${ID:-} ${ID_LIKE:-} " in
*" ubuntu "*) kmeta=linux-image-generic ;;
*" debian "*) kmeta=linux-image-amd64 ;;
*) echo "vm setup: ${PRETTY_NAME:-this distribution} is neither Debian nor Ubuntu: no kernel package to take" >&2; exit 2 ;;
esac

apt_install() { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "$@"; }
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
[ -e /usr/share/qemu/qboot.rom ] || need+=(qemu-system-data)
# busybox-static replaces a dynamically linked busybox package.
static_busybox >/dev/null || need+=(busybox-static)
command -v depmod >/dev/null || need+=(kmod)
command -v cpio >/dev/null || need+=(cpio)
command -v xz >/dev/null || need+=(xz-utils)
[ "$kmeta" != linux-image-generic ] || command -v zstd >/dev/null || need+=(zstd)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt_install "${need[@]}"
fi
BUSYBOX=$(static_busybox) || { echo "vm setup: no statically linked busybox with insmod (apt-get install busybox-static)" >&2; exit 1; }

mkdir -p "$CACHE"
cd "$CACHE"

# Kernel: the version the metapackage currently depends on.
pkg=$(apt-cache depends "$kmeta" | awk '/Depends: linux-image-/ {print $2; exit}')
[ -n "$pkg" ] || { echo "vm setup: cannot resolve $kmeta (apt-get update?)" >&2; exit 1; }
kver=${pkg#linux-image-}
kver=${kver#unsigned-}
if [ ! -e "root/lib/modules/$kver/modules.dep" ]; then
  rm -rf root dl && mkdir -p dl root
  chmod 777 dl  # apt-get download drops privileges to _apt
  pkgs=("$pkg")
  [ "$kmeta" != linux-image-generic ] || pkgs+=("linux-modules-$kver" "linux-modules-extra-$kver")
  (cd dl && apt-get download "${pkgs[@]}" >/dev/null)
  for deb in dl/*.deb; do dpkg -x "$deb" root; done
  # Ubuntu ships the modules under /usr/lib/modules (merged /usr).
  [ -d "root/lib/modules/$kver" ] || { mkdir -p root/lib && ln -s ../usr/lib/modules root/lib/modules; }
  depmod -b root "$kver"
  rm -rf dl
fi

# Uncompressed kernel: where the payload of vmlinuz is xz (Debian),
# booting the ELF (PVH entry) with qboot saves ~4 s per boot; other
# kernels (Ubuntu's, lz4 or zstd) boot as the bzImage they are.
if [ ! -s "vmlinux-$kver" ]; then
  vmlinuz="root/boot/vmlinuz-$kver"
  [ -s "$vmlinuz" ] || { echo "vm setup: $pkg has no $vmlinuz" >&2; exit 1; }
  off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1 || true)
  if [ -n "$off" ]; then
    tail -c +"$((off + 1))" "$vmlinuz" | xz -dc 2>/dev/null > "vmlinux-$kver.tmp" || true
    [ -s "vmlinux-$kver.tmp" ] || { echo "vm setup: decompressing $vmlinuz failed" >&2; exit 1; }
  else
    cp "$vmlinuz" "vmlinux-$kver.tmp"
  fi
  mv "vmlinux-$kver.tmp" "vmlinux-$kver"
fi

# Initramfs: busybox + modules (with dependencies, in load order).
# xfrm_user and nfnetlink: netlink.NewHandleAt opens XFRM and NETFILTER
# sockets too, and fails without them. br_netfilter: flanneld refuses to
# start without /proc/sys/net/bridge (Kubernetes nodes load it). The
# iptables here is iptables-nft: nf_tables and nft_compat carry the xt
# matches; ip_set and ip_vs serve kube-proxy's IPVS mode. ip_vti: advise tells
# an IPsec VTI from IP-in-IP (advise/inspect TestKernelVTIAndIPIP). nft_log and nfnetlink_log:
# iptables-nft writes -j NFLOG as nft's log expression, which needs both (weave-npc's rules).
modules=(virtio_pci virtio_blk 9pnet_virtio 9p overlay af_packet xfrm_user nfnetlink
  dummy ifb sch_fq_codel sch_ingress cls_u32 act_mirred br_netfilter
  veth bridge vxlan macvlan ipvlan tun ipip ip_vti ip_gre gre geneve wireguard
  sch_netem sch_tbf sch_htb cls_bpf openvswitch vport-vxlan vport-geneve vport-gre
  ip_tables iptable_filter iptable_nat iptable_mangle iptable_raw nf_conntrack xt_conntrack xt_comment xt_MASQUERADE
  nf_tables nft_compat nft_chain_nat nft_ct nft_nat nft_masq nft_reject_inet nft_numgen nft_hash nft_fib_inet nft_limit
  xt_tcpudp nf_reject_ipv4 nft_reject_ipv4 xt_iprange ipt_rpfilter xt_socket xt_state xt_CT xt_NFLOG xt_addrtype xt_mark xt_statistic xt_nat xt_set xt_ipvs xt_physdev xt_multiport ipt_REJECT
  ip_set ip_set_hash_ip ip_set_hash_ipport ip_set_hash_ipportip ip_set_hash_net ip_set_bitmap_port ip_vs ip_vs_rr pktgen nfnetlink_log nft_log)
if [ ! -s "initrd-$kver.img" ] || [ "$HERE/setup.sh" -nt "initrd-$kver.img" ] || [ "$HERE/init.sh" -nt "initrd-$kver.img" ]; then
  ird=$(mktemp -d)
  trap 'rm -rf "$ird"' EXIT
  mkdir -p "$ird"/{bin,dev,proc,sys,newroot,mods,lower,upper}
  cp "$BUSYBOX" "$ird/bin/busybox"
  for a in sh mount umount mkdir insmod chroot poweroff reboot sync cat echo sleep switch_root ln mknod; do
    ln -sf busybox "$ird/bin/$a"
  done
  : > "$ird/mods/order"
  # Each module is resolved on its own: one the kernel package lacks is
  # named (all of them), never the end of setup without a word.
  missing=()
  for m in "${modules[@]}"; do
    if ! deps=$(modprobe -d "$CACHE/root" -S "$kver" --show-depends "$m" 2>/dev/null); then
      missing+=("$m")
      continue
    fi
    while read -r f; do
      b=$(basename "$f"); b=${b%.xz}; b=${b%.zst}
      if grep -qx "$b" "$ird/mods/order"; then continue; fi
      case "$f" in *.xz) xz -dc "$f" > "$ird/mods/$b" ;; *.zst) zstd -qdc "$f" > "$ird/mods/$b" ;; *) cp "$f" "$ird/mods/$b" ;; esac
      echo "$b" >> "$ird/mods/order"
    done < <(awk '$1=="insmod"{print $2}' <<<"$deps")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "vm setup: the $kver kernel package has no module ${missing[*]} (nor built in)" >&2
    exit 1
  fi
  cp "$HERE/init.sh" "$ird/init"
  chmod +x "$ird/init"
  (cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) > "initrd-$kver.img.tmp"
  mv "initrd-$kver.img.tmp" "initrd-$kver.img"
fi
ln -sfn "vmlinux-$kver" vmlinux
ln -sfn "initrd-$kver.img" initrd.img
echo "vm setup: kernel $kver ready in $CACHE"
