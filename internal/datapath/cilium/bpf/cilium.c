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
// Anything else (ARP, traffic to the node itself) goes to the stack.
// The maps are filled from Go (cilium.go): endpoints = local pods,
// ipcache = remote pod CIDRs -> the owning node's underlay address.

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/stddef.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

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

// Counters, read by tests: which way packets went.
enum {
	STAT_LOCAL = 0,   // from_container -> local pod
	STAT_TUNNEL = 1,  // from_container -> cilium_vxlan
	STAT_OVERLAY = 2, // from_overlay -> local pod
	STAT_PASS = 3,    // handed to the stack
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

SEC("tc")
int from_container(struct __sk_buff *skb)
{
	struct iphdr *ip = parse(skb);
	struct endpoint *ep;
	struct remote *r;
	__u32 daddr;
	__u8 ttl, proto;

	if (!ip)
		goto pass;
	daddr = ip->daddr;
	ttl = ip->ttl;
	proto = ip->protocol;
	if (ttl <= 1)
		goto pass; // the stack sends ICMP time exceeded

	ep = bpf_map_lookup_elem(&endpoints, &daddr);
	if (ep) {
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
	__u32 daddr;

	if (!ip)
		goto pass;
	daddr = ip->daddr;
	ep = bpf_map_lookup_elem(&endpoints, &daddr);
	if (!ep)
		goto pass;
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
