// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
//
// The two tc programs of cnibench's cilium datapath, a small model of
// Cilium's bpf_lxc.c (from-container) and bpf_overlay.c (from-overlay):
//
//   from_container  tc ingress of each pod's host-side veth (lxc...): a
//                   packet the pod sent. A local destination pod is reached
//                   with bpf_redirect_peer straight into its eth0 (no
//                   bridge, no routing, no netfilter in the node); a
//                   remote pod through the VXLAN device in collect-metadata
//                   mode, with the tunnel endpoint set by the program.
//   from_overlay    tc ingress of cilium_vxlan: a decapsulated packet, sent
//                   on to the destination pod with bpf_redirect_peer.
//
// Services (ClusterIPs) are translated per packet, as Cilium's bpf_lxc.c
// does for pods' traffic whether or not kube-proxy runs beside it
// (handle_ipv4_from_lxc -> lb4_lookup_service, lb4_local; the reply's
// lb4_rev_nat on the way into the client pod): from_container DNATs a
// packet to a ClusterIP to a backend, remembering the flow's backend and
// its reverse translation; a reply is translated back just before it is
// redirected into the client pod (from_container on the same node,
// from_overlay from another). Hairpin traffic (a pod to its own Service)
// is left to the stack: Cilium SNATs it to a loopback address, which
// this model does not.
//
// Anything else (ARP, traffic to the node itself) goes to the stack.
// The maps are filled from Go (cilium.go): endpoints = local pods,
// ipcache = remote pod CIDRs -> the owning node's underlay address.

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/stddef.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "lb4.h"

char __license[] SEC("license") = "Dual BSD/GPL";

// endpoint is a local pod: its host-side veth and both MACs, as Cilium's
// endpoint map (cilium_lxc) holds them.
struct endpoint {
	__u32 ifindex;   // host-side veth; bpf_redirect_peer reaches its peer eth0
	__u8 mac[6];     // pod's eth0
	__u8 node_mac[6]; // host-side veth (the pod's gateway MAC)
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32); // pod IPv4, network order
	__type(value, struct endpoint);
} endpoints SEC(".maps");

// ipcache maps a remote prefix to the node that owns it (Cilium's
// cilium_ipcache, an LPM trie as well).
struct ipcache_key {
	__u32 prefixlen;
	__u32 ip; // network order
};

struct remote {
	__u32 tunnel_ip; // remote node's underlay address, network order
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 256);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct ipcache_key);
	__type(value, struct remote);
} ipcache SEC(".maps");

// The node's Services (lb4.h), written from Go (Datapath.SetServices).
LB4_MAPS

// ct4: a translated flow as the client sent it (to the ClusterIP) ->
// its backend, so every packet of a connection goes to the same one
// (Cilium's CT entry with its backend_id).
struct ct4_key {
	__be32 saddr, daddr;
	__be16 sport, dport;
	__u8 proto;
	__u8 pad[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct ct4_key);
	__type(value, __u32);
} ct4 SEC(".maps");

// revnat4: a reply as the backend sends it -> the Service to show as
// its source (Cilium's reverse NAT by rev_nat_index).
struct revnat4_val {
	__be32 address;
	__be16 port;
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct ct4_key);
	__type(value, struct revnat4_val);
} revnat4 SEC(".maps");

// Counters, read by tests: which way packets went.
enum {
	STAT_LOCAL = 0,   // from_container -> local pod
	STAT_TUNNEL = 1,  // from_container -> cilium_vxlan
	STAT_OVERLAY = 2, // from_overlay -> local pod
	STAT_PASS = 3,    // handed to the stack
	STAT_LB = 4,      // a packet to a ClusterIP sent to a backend
	STAT_REVNAT = 5,  // a reply shown as from its Service
	STAT_MAX,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

// Set by the loader before the programs load.
volatile const __u32 vxlan_ifindex = 0;
// VNI on the wire. Cilium puts the source's security identity there; 2 is
// reserved:world, as good as any for a model without identities.
volatile const __u32 vni = 2;

static __always_inline void count(__u32 what)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &what);
	if (v)
		*v += 1;
}

// rewrite_macs makes the frame look as if the pod's gateway sent it to
// the pod, as a router would (Cilium's ipv4_l3 / eth_store_daddr/saddr).
static __always_inline int rewrite_macs(struct __sk_buff *skb, struct endpoint *ep)
{
	if (bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_dest), ep->mac, ETH_ALEN, 0) < 0)
		return -1;
	return bpf_skb_store_bytes(skb, offsetof(struct ethhdr, h_source), ep->node_mac, ETH_ALEN, 0);
}

// dec_ttl decrements the IPv4 TTL and patches the header checksum: the
// node routes the packet, so the pod sees one hop, as with Cilium.
static __always_inline int dec_ttl(struct __sk_buff *skb, __u8 ttl, __u8 proto)
{
	__u16 old = bpf_htons(((__u16)ttl << 8) | proto);
	__u16 new = bpf_htons(((__u16)(ttl - 1) << 8) | proto);
	__u8 nttl = ttl - 1;

	if (bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check), old, new, 2) < 0)
		return -1;
	return bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct iphdr, ttl), &nttl, 1, 0);
}

// parse returns the IPv4 header of an Ethernet frame, or NULL.
static __always_inline struct iphdr *parse(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = data + sizeof(*eth);

	if ((void *)(ip + 1) > data_end)
		return NULL;
	if (eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5)
		return NULL;
	return ip;
}

#define IP_OFF ETH_HLEN
#define L4_OFF (ETH_HLEN + sizeof(struct iphdr)) // parse admits ihl 5 only
#define IP_CSUM_OFF (IP_OFF + offsetof(struct iphdr, check))

// ports reads a TCP or UDP packet's ports (network order); -1 when the
// packet is neither or too short.
static __always_inline int ports(struct __sk_buff *skb, __u8 proto, __be16 *sport, __be16 *dport)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__be16 *p = data + L4_OFF;

	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return -1;
	if ((void *)(p + 2) > data_end)
		return -1;
	*sport = p[0];
	*dport = p[1];
	return 0;
}

// rewrite replaces the address at addr_off and the port at port_off,
// patching the IP and the TCP/UDP checksums (the address is part of the
// L4 pseudo-header; a UDP checksum of 0 stays "none").
static __always_inline int rewrite(struct __sk_buff *skb, __u8 proto, __u32 addr_off, __be32 from, __be32 to,
				   __u32 port_off, __be16 pfrom, __be16 pto)
{
	__u32 csum = proto == IPPROTO_TCP ? L4_OFF + 16 : L4_OFF + 6;
	__u64 mangled = proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;

	if (bpf_l4_csum_replace(skb, csum, from, to, BPF_F_PSEUDO_HDR | mangled | sizeof(to)) < 0)
		return -1;
	if (bpf_l3_csum_replace(skb, IP_CSUM_OFF, from, to, sizeof(to)) < 0)
		return -1;
	if (bpf_skb_store_bytes(skb, addr_off, &to, sizeof(to), 0) < 0)
		return -1;
	if (bpf_l4_csum_replace(skb, csum, pfrom, pto, mangled | sizeof(pto)) < 0)
		return -1;
	return bpf_skb_store_bytes(skb, port_off, &pto, sizeof(pto), 0);
}

// lb4 sends a packet to a ClusterIP to a backend: the flow's, or one
// picked at random for a new flow. *daddr becomes the backend's address.
// 0: not a Service (or hairpin, left to the stack); -1: drop.
static __always_inline int lb4(struct __sk_buff *skb, __be32 saddr, __be32 *daddr, __u8 proto)
{
	struct lb4_key key = {};
	struct ct4_key ck = {};
	struct lb4_service *svc, *sl;
	struct lb4_backend *be = NULL;
	__be16 sport, dport;
	__u32 *id, bid;

	if (ports(skb, proto, &sport, &dport) < 0)
		return 0;
	key.address = *daddr;
	key.dport = dport;
	key.proto = proto;
	svc = bpf_map_lookup_elem(&lb4_services, &key);
	if (!svc || svc->count == 0)
		return 0;
	ck.saddr = saddr;
	ck.daddr = *daddr;
	ck.sport = sport;
	ck.dport = dport;
	ck.proto = proto;
	id = bpf_map_lookup_elem(&ct4, &ck);
	if (id)
		be = bpf_map_lookup_elem(&lb4_backends, id);
	if (!be) {
		key.backend_slot = (bpf_get_prandom_u32() % svc->count) + 1;
		sl = bpf_map_lookup_elem(&lb4_services, &key);
		if (!sl)
			return 0;
		bid = sl->backend_id;
		be = bpf_map_lookup_elem(&lb4_backends, &bid);
		if (!be)
			return 0;
		bpf_map_update_elem(&ct4, &ck, &bid, BPF_ANY);
	}
	if (be->address == saddr)
		return 0;

	struct ct4_key rk = {
		.saddr = be->address,
		.daddr = saddr,
		.sport = be->port,
		.dport = sport,
		.proto = proto,
	};
	struct revnat4_val rv = {.address = *daddr, .port = dport};
	__be32 to = be->address;
	__be16 pto = be->port;

	if (bpf_map_update_elem(&revnat4, &rk, &rv, BPF_ANY) < 0)
		return -1;
	if (rewrite(skb, proto, IP_OFF + offsetof(struct iphdr, daddr), *daddr, to, L4_OFF + 2, dport, pto) < 0)
		return -1;
	*daddr = to;
	count(STAT_LB);
	return 0;
}

// rev_nat4 shows a reply from a backend as coming from the Service the
// client addressed, on its way into the client pod.
static __always_inline int rev_nat4(struct __sk_buff *skb, __be32 saddr, __be32 daddr, __u8 proto)
{
	struct revnat4_val *rv;
	__be16 sport, dport;

	if (ports(skb, proto, &sport, &dport) < 0)
		return 0;
	struct ct4_key rk = {
		.saddr = saddr,
		.daddr = daddr,
		.sport = sport,
		.dport = dport,
		.proto = proto,
	};
	rv = bpf_map_lookup_elem(&revnat4, &rk);
	if (!rv)
		return 0;
	// Only while the Service exists: a later flow that happens to reuse
	// the tuple straight to the pod must not be rewritten.
	struct lb4_key sk = {.address = rv->address, .dport = rv->port, .proto = proto};
	if (!bpf_map_lookup_elem(&lb4_services, &sk)) {
		bpf_map_delete_elem(&revnat4, &rk);
		return 0;
	}
	__be32 to = rv->address;
	__be16 pto = rv->port;
	if (rewrite(skb, proto, IP_OFF + offsetof(struct iphdr, saddr), saddr, to, L4_OFF, sport, pto) < 0)
		return -1;
	count(STAT_REVNAT);
	return 0;
}

SEC("tc")
int from_container(struct __sk_buff *skb)
{
	struct iphdr *ip = parse(skb);
	struct endpoint *ep;
	struct remote *r;
	__u32 saddr, daddr;
	__u8 ttl, proto;

	if (!ip)
		goto pass;
	saddr = ip->saddr;
	daddr = ip->daddr;
	ttl = ip->ttl;
	proto = ip->protocol;
	if (ttl <= 1)
		goto pass; // the stack sends ICMP time exceeded
	if (lb4(skb, saddr, &daddr, proto) < 0)
		return TC_ACT_SHOT;

	ep = bpf_map_lookup_elem(&endpoints, &daddr);
	if (ep) {
		if (rev_nat4(skb, saddr, daddr, proto) < 0)
			return TC_ACT_SHOT;
		if (dec_ttl(skb, ttl, proto) < 0 || rewrite_macs(skb, ep) < 0)
			return TC_ACT_SHOT;
		count(STAT_LOCAL);
		return bpf_redirect_peer(ep->ifindex, 0);
	}

	struct ipcache_key key = {.prefixlen = 32, .ip = daddr};
	r = bpf_map_lookup_elem(&ipcache, &key);
	if (r) {
		struct bpf_tunnel_key tkey = {
			.remote_ipv4 = bpf_ntohl(r->tunnel_ip),
			.tunnel_id = vni,
			.tunnel_ttl = 64,
		};
		if (dec_ttl(skb, ttl, proto) < 0)
			return TC_ACT_SHOT;
		if (bpf_skb_set_tunnel_key(skb, &tkey, sizeof(tkey), BPF_F_ZERO_CSUM_TX) < 0)
			return TC_ACT_SHOT;
		count(STAT_TUNNEL);
		return bpf_redirect(vxlan_ifindex, 0);
	}
pass:
	count(STAT_PASS);
	return TC_ACT_OK;
}

SEC("tc")
int from_overlay(struct __sk_buff *skb)
{
	struct iphdr *ip = parse(skb);
	struct endpoint *ep;
	__u32 saddr, daddr;
	__u8 proto;

	if (!ip)
		goto pass;
	saddr = ip->saddr;
	daddr = ip->daddr;
	proto = ip->protocol;
	ep = bpf_map_lookup_elem(&endpoints, &daddr);
	if (!ep)
		goto pass;
	if (rev_nat4(skb, saddr, daddr, proto) < 0)
		return TC_ACT_SHOT;
	if (rewrite_macs(skb, ep) < 0)
		return TC_ACT_SHOT;
	// The inner frame was addressed to the sender's gateway MAC, so the
	// VXLAN device classified it "other host"; the pod's IP layer would
	// drop it as such.
	if (bpf_skb_change_type(skb, PACKET_HOST) < 0)
		return TC_ACT_SHOT;
	count(STAT_OVERLAY);
	return bpf_redirect_peer(ep->ifindex, 0);
pass:
	count(STAT_PASS);
	return TC_ACT_OK;
}
