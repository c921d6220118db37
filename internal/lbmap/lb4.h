// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
//
// The Service tables both of cnibench's Cilium models read: the socket
// load balancer (internal/socklb) and the cilium datapath's per-packet
// load balancing (internal/datapath/cilium). Organised as Cilium's
// cilium_lb4_services_v2 and cilium_lb4_backends (bpf/lib/lb.h): per
// (ClusterIP, port, protocol) a master entry (slot 0: backend count,
// reverse-NAT index) and one entry per backend slot (1..count) naming a
// backend id. The structs hold only the fields these programs read, in
// Cilium's order, so they are not Cilium's byte for byte: the key is 12
// bytes as Cilium's (its scope byte is padding here), but Cilium's
// lb4_service (flags, flags2, qcount) and lb4_backend (flags,
// cluster_id, zone) are 12 bytes where these are 8 (cilium/cilium
// v1.17.4 bpf/lib/common.h:1086-1142). internal/lbmap's Go structs are
// these byte for byte.

#ifndef CNIBENCH_LB4_H
#define CNIBENCH_LB4_H

#include <linux/types.h>

struct lb4_key {
	__be32 address;
	__be16 dport;
	__u16 backend_slot; // 0: the master entry
	__u8 proto;         // IPPROTO_TCP or IPPROTO_UDP
	__u8 pad[3];
};

struct lb4_service {
	__u32 backend_id;    // slot entries: the backend
	__u16 count;         // master entry: number of slots
	__u16 rev_nat_index; // master entry: the Service's id
};

struct lb4_backend {
	__be32 address;
	__be16 port;
	__u8 proto;
	__u8 pad;
};

#define LB4_MAX_ENTRIES 65536

// LB4_MAPS defines the two tables in a program object.
#define LB4_MAPS                                      \
	struct {                                      \
		__uint(type, BPF_MAP_TYPE_HASH);      \
		__uint(max_entries, LB4_MAX_ENTRIES); \
		__type(key, struct lb4_key);          \
		__type(value, struct lb4_service);    \
	} lb4_services SEC(".maps");                  \
	struct {                                      \
		__uint(type, BPF_MAP_TYPE_HASH);      \
		__uint(max_entries, LB4_MAX_ENTRIES); \
		__type(key, __u32);                   \
		__type(value, struct lb4_backend);    \
	} lb4_backends SEC(".maps");

#endif
