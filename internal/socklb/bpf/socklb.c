// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
//
// Socket-level Service load balancing, a small model of the socket-LB of
// Cilium's kube-proxy replacement (cilium/cilium bpf/bpf_sock.c:
// sock4_connect -> __sock4_xlate_fwd, sock4_update_revnat, and the
// reverse translation of recvmsg4/getpeername4 through the
// cilium_lb4_reverse_sk map). A ClusterIP is translated to a backend
// once, when the socket connects (or, for unconnected UDP, per sendmsg):
// no packet ever carries the ClusterIP, so no per-packet NAT, conntrack
// entry or netfilter rule is involved, which is the point of the design.
//
// The Service tables are lb4.h's (Cilium's layout), shared with the
// cilium datapath's per-packet load balancing and written by
// internal/lbmap.
//
// Unlike Cilium, which attaches at the cgroup v2 root and so serves
// every process of the node, only sockets of the network namespaces in
// netns are translated: cnibench attaches where its own processes are
// and must not touch anything on the host outside the run's pods.

#include <linux/bpf.h>
#include <linux/errno.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>

#include "lb4.h"

char __license[] SEC("license") = "Dual BSD/GPL";

#define SYS_REJECT 0
#define SYS_PROCEED 1

struct revnat_key {
	__u64 cookie; // the socket's
	__be32 address;
	__be16 port;
	__u16 pad;
};

struct revnat {
	__be32 address;
	__be16 port;
	__u16 rev_nat_index;
};

// Counters, per CPU, read by Go (LB.Stats).
enum {
	COUNT_XLATE,      // a connect/sendmsg translated to a backend
	COUNT_REV,        // a recvmsg/getpeername translated back
	COUNT_NO_BACKEND, // a Service without a usable backend: rejected
	COUNT_REVNAT_FAIL, // the reverse-NAT entry not written: rejected
	COUNT_REV_STALE,  // a reverse-NAT entry of a changed Service: dropped
	COUNT_MAX,
};

LB4_MAPS

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct revnat_key);
	__type(value, struct revnat);
} revnat_sk SEC(".maps");

// netns: the cookies of the network namespaces whose sockets are served.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} netns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COUNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &what);

	if (v)
		*v += 1;
}

static __always_inline int served(struct bpf_sock_addr *ctx)
{
	__u64 cookie = bpf_get_netns_cookie(ctx);

	return bpf_map_lookup_elem(&netns, &cookie) != NULL;
}

// dport reads the port as a whole word: narrow loads of user_port are
// not allowed on every kernel (Cilium's ctx_dst_port does the same).
static __always_inline __be16 dport(struct bpf_sock_addr *ctx)
{
	volatile __u32 p = ctx->user_port;

	return (__be16)p;
}

// slot picks a backend as Cilium's sock_select_slot does: at random per
// TCP connection, by socket cookie for UDP (stable per socket).
static __always_inline __u64 slot(struct bpf_sock_addr *ctx)
{
	return ctx->protocol == IPPROTO_TCP ? bpf_get_prandom_u32() : bpf_get_socket_cookie(ctx);
}

// xlate_fwd translates a connect or send to a Service into one to a
// backend, as Cilium's __sock4_xlate_fwd (bpf/bpf_sock.c:243-403 in
// v1.17.4): -ENXIO when the address is no Service (the socket goes on
// untranslated), -EHOSTUNREACH when the Service has no backend, its slot
// or backend is missing (:288-289, 367-381), -ENOMEM when the
// reverse-NAT entry cannot be written (:393-397).
static __always_inline int xlate_fwd(struct bpf_sock_addr *ctx)
{
	struct lb4_key key = {
		.address = ctx->user_ip4,
		.dport = dport(ctx),
		.proto = (__u8)ctx->protocol,
	};
	struct lb4_service *svc, *sl;
	struct lb4_backend *be;
	__be32 vip = key.address;
	__be16 vport = key.dport;
	__u16 rev;

	svc = bpf_map_lookup_elem(&lb4_services, &key);
	if (!svc)
		return -ENXIO;
	if (svc->count == 0) {
		count(COUNT_NO_BACKEND);
		return -EHOSTUNREACH;
	}
	rev = svc->rev_nat_index;
	key.backend_slot = (slot(ctx) % svc->count) + 1;
	sl = bpf_map_lookup_elem(&lb4_services, &key);
	if (!sl) {
		count(COUNT_NO_BACKEND);
		return -EHOSTUNREACH;
	}
	be = bpf_map_lookup_elem(&lb4_backends, &sl->backend_id);
	if (!be) {
		count(COUNT_NO_BACKEND);
		return -EHOSTUNREACH;
	}

	struct revnat_key rk = {
		.cookie = bpf_get_socket_cookie(ctx),
		.address = be->address,
		.port = be->port,
	};
	struct revnat rv = {
		.address = vip,
		.port = vport,
		.rev_nat_index = rev,
	};
	if (bpf_map_update_elem(&revnat_sk, &rk, &rv, BPF_ANY) < 0) {
		count(COUNT_REVNAT_FAIL);
		return -ENOMEM;
	}

	ctx->user_ip4 = be->address;
	ctx->user_port = (__u32)be->port;
	count(COUNT_XLATE);
	return 0;
}

// xlate_rev shows the peer a translated socket talks to as the Service
// it asked for, while that Service is the one translated to it: as
// Cilium's __sock4_xlate_rev (bpf/bpf_sock.c:528-578), an entry whose
// Service is gone, has another reverse-NAT index now (deleted and made
// again) or no backend left is stale, deleted, and nothing translated.
static __always_inline void xlate_rev(struct bpf_sock_addr *ctx)
{
	struct revnat_key rk = {
		.cookie = bpf_get_socket_cookie(ctx),
		.address = ctx->user_ip4,
		.port = dport(ctx),
	};
	struct lb4_service *svc;
	struct revnat *rv;

	rv = bpf_map_lookup_elem(&revnat_sk, &rk);
	if (!rv)
		return;
	struct lb4_key key = {
		.address = rv->address,
		.dport = rv->port,
		.proto = (__u8)ctx->protocol,
	};
	svc = bpf_map_lookup_elem(&lb4_services, &key);
	if (!svc || svc->rev_nat_index != rv->rev_nat_index || svc->count == 0) {
		bpf_map_delete_elem(&revnat_sk, &rk);
		count(COUNT_REV_STALE);
		return;
	}
	ctx->user_ip4 = rv->address;
	ctx->user_port = (__u32)rv->port;
	count(COUNT_REV);
}

// forward is connect4's and sendmsg4's verdict, as cil_sock4_connect and
// cil_sock4_sendmsg give it (bpf/bpf_sock.c:405-422, 580-591): a
// Service that cannot be translated is refused, never let through to
// its ClusterIP. Cilium also sets the error the caller sees
// (try_set_retval, bpf_set_retval from Linux 5.18); without it, as here
// on every kernel, the caller sees EPERM.
static __always_inline int forward(struct bpf_sock_addr *ctx)
{
	int err;

	if (!served(ctx))
		return SYS_PROCEED;
	err = xlate_fwd(ctx);
	if (err == -EHOSTUNREACH || err == -ENOMEM)
		return SYS_REJECT;
	return SYS_PROCEED;
}

SEC("cgroup/connect4")
int sock4_connect(struct bpf_sock_addr *ctx)
{
	return forward(ctx);
}

SEC("cgroup/sendmsg4")
int sock4_sendmsg(struct bpf_sock_addr *ctx)
{
	return forward(ctx);
}

SEC("cgroup/recvmsg4")
int sock4_recvmsg(struct bpf_sock_addr *ctx)
{
	if (served(ctx))
		xlate_rev(ctx);
	return SYS_PROCEED;
}

SEC("cgroup/getpeername4")
int sock4_getpeername(struct bpf_sock_addr *ctx)
{
	if (served(ctx))
		xlate_rev(ctx);
	return SYS_PROCEED;
}
