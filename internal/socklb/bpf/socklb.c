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
#include <linux/in.h>
#include <bpf/bpf_helpers.h>

#include "lb4.h"

char __license[] SEC("license") = "Dual BSD/GPL";

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
	COUNT_NO_BACKEND, // a Service without a usable backend
	COUNT_REVNAT_FAIL,
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

static __always_inline void xlate_fwd(struct bpf_sock_addr *ctx)
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
		return;
	if (svc->count == 0) {
		count(COUNT_NO_BACKEND);
		return;
	}
	rev = svc->rev_nat_index;
	key.backend_slot = (slot(ctx) % svc->count) + 1;
	sl = bpf_map_lookup_elem(&lb4_services, &key);
	if (!sl) {
		count(COUNT_NO_BACKEND);
		return;
	}
	be = bpf_map_lookup_elem(&lb4_backends, &sl->backend_id);
	if (!be) {
		count(COUNT_NO_BACKEND);
		return;
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
	if (bpf_map_update_elem(&revnat_sk, &rk, &rv, BPF_ANY) < 0)
		count(COUNT_REVNAT_FAIL);

	ctx->user_ip4 = be->address;
	ctx->user_port = (__u32)be->port;
	count(COUNT_XLATE);
}

// xlate_rev shows the peer a translated socket talks to as the Service
// it asked for, while that Service still exists.
static __always_inline void xlate_rev(struct bpf_sock_addr *ctx)
{
	struct revnat_key rk = {
		.cookie = bpf_get_socket_cookie(ctx),
		.address = ctx->user_ip4,
		.port = dport(ctx),
	};
	struct revnat *rv;

	rv = bpf_map_lookup_elem(&revnat_sk, &rk);
	if (!rv)
		return;
	struct lb4_key key = {
		.address = rv->address,
		.dport = rv->port,
		.proto = (__u8)ctx->protocol,
	};
	if (!bpf_map_lookup_elem(&lb4_services, &key)) {
		bpf_map_delete_elem(&revnat_sk, &rk);
		return;
	}
	ctx->user_ip4 = rv->address;
	ctx->user_port = (__u32)rv->port;
	count(COUNT_REV);
}

SEC("cgroup/connect4")
int sock4_connect(struct bpf_sock_addr *ctx)
{
	if (served(ctx))
		xlate_fwd(ctx);
	return SYS_PROCEED;
}

SEC("cgroup/sendmsg4")
int sock4_sendmsg(struct bpf_sock_addr *ctx)
{
	if (served(ctx))
		xlate_fwd(ctx);
	return SYS_PROCEED;
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
