// Package lbmap writes ClusterIP Services into the BPF tables of
// lb4.h, the layout of Cilium's cilium_lb4_services_v2 and
// cilium_lb4_backends: the socket load balancer (internal/socklb) and
// the cilium datapath's per-packet load balancing read the same tables.
package lbmap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/netfilter"
)

// Translator is a datapath that translates Services per packet from its
// own tables (the cilium datapath): knob service-path writes the
// measured Services into it, and pktgen's packets, which no socket sent,
// are translated there too.
type Translator interface {
	SetServices([]netfilter.Service) error
}

// Key, Service and Backend are lb4.h's structs, byte for byte.
type Key struct {
	Address     uint32 // network order in memory
	Dport       uint16 // network order in memory
	BackendSlot uint16
	Proto       uint8
	Pad         [3]uint8
}

type Service struct {
	BackendID   uint32
	Count       uint16
	RevNATIndex uint16
}

type Backend struct {
	Address uint32
	Port    uint16
	Proto   uint8
	Pad     uint8
}

// Table is one program object's pair of tables and what was last
// written to them.
type Table struct {
	Services, Backends *ebpf.Map
	svcKeys            []Key
	backendKeys        []uint32
}

// Set makes svcs the Services of the table, replacing what the last Set
// wrote. Endpoints keep their order as backend slots 1..n.
func (t *Table) Set(svcs []netfilter.Service) error {
	sk, sv, bk, bv, err := Layout(svcs)
	if err != nil {
		return err
	}
	for _, k := range t.svcKeys {
		if err := t.Services.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("removing a Service entry: %w", err)
		}
	}
	for _, k := range t.backendKeys {
		if err := t.Backends.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("removing a backend: %w", err)
		}
	}
	t.svcKeys, t.backendKeys = nil, nil
	// Backends before the slots that name them, slots before the master
	// entry that makes the Service visible.
	for i, k := range bk {
		if err := t.Backends.Put(k, bv[i]); err != nil {
			return fmt.Errorf("writing backend %d: %w", k, err)
		}
		t.backendKeys = append(t.backendKeys, k)
	}
	for i := len(sk) - 1; i >= 0; i-- {
		if err := t.Services.Put(sk[i], sv[i]); err != nil {
			return fmt.Errorf("writing a Service entry: %w", err)
		}
		t.svcKeys = append(t.svcKeys, sk[i])
	}
	return nil
}

// Layout lays svcs out as the tables hold them: per Service its master
// entry then its slots, and the backends with ids from 1 (one per
// address, port and protocol).
func Layout(svcs []netfilter.Service) ([]Key, []Service, []uint32, []Backend, error) {
	var (
		sk  []Key
		sv  []Service
		bk  []uint32
		bv  []Backend
		ids = map[Backend]uint32{}
	)
	for i, s := range svcs {
		proto, err := protocol(s.Protocol)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("Service %s/%s: %w", s.Namespace, s.Name, err)
		}
		vip, err := be32(s.ClusterIP)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("Service %s/%s: %w", s.Namespace, s.Name, err)
		}
		if len(s.Endpoints) > 0xffff || i+1 > 0xffff {
			return nil, nil, nil, nil, fmt.Errorf("Service %s/%s: more than 65535 Services or endpoints", s.Namespace, s.Name)
		}
		key := Key{Address: vip, Dport: Port(s.Port), Proto: proto}
		sk = append(sk, key)
		sv = append(sv, Service{Count: uint16(len(s.Endpoints)), RevNATIndex: uint16(i + 1)})
		for j, ep := range s.Endpoints {
			addr, err := be32(ep.IP)
			if err != nil {
				return nil, nil, nil, nil, fmt.Errorf("Service %s/%s endpoint %d: %w", s.Namespace, s.Name, j, err)
			}
			b := Backend{Address: addr, Port: Port(ep.Port), Proto: proto}
			id, ok := ids[b]
			if !ok {
				id = uint32(len(ids) + 1)
				ids[b] = id
				bk, bv = append(bk, id), append(bv, b)
			}
			slot := key
			slot.BackendSlot = uint16(j + 1)
			sk, sv = append(sk, slot), append(sv, Service{BackendID: id})
		}
	}
	return sk, sv, bk, bv, nil
}

func protocol(p string) (uint8, error) {
	switch p {
	case "tcp", "":
		return unix.IPPROTO_TCP, nil
	case "udp":
		return unix.IPPROTO_UDP, nil
	}
	return 0, fmt.Errorf("protocol %q: only tcp and udp are translated", p)
}

// be32 is an IPv4 address as the kernel's __be32 reads on this host:
// the bytes in network order.
func be32(ip net.IP) (uint32, error) {
	v4 := ip.To4()
	if v4 == nil {
		return 0, fmt.Errorf("address %v: only IPv4 is translated", ip)
	}
	return binary.NativeEndian.Uint32(v4), nil
}

// Port is a port as a __be16 reads on this host.
func Port(p int) uint16 {
	return binary.NativeEndian.Uint16(binary.BigEndian.AppendUint16(nil, uint16(p)))
}
