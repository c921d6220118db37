// Package cniconf holds the CNI network configuration documents cnibench
// hands to the reference CNI plugins (Debian's containernetworking-plugins)
// when pods are wired through them (wiring cni): the configuration list a
// container runtime reads from /etc/cni/net.d, with the plugin and
// host-local IPAM sections the datapaths fill in. Pure data: building or
// reading a document touches nothing on the machine.
package cniconf

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Version is the CNI specification version of every document and call:
// the newest that libcni and Debian 12's plugins (1.1.1, which speak
// 0.1.0 to 1.0.0) have in common.
const Version = "1.0.0"

// Plugin types (the executable names in CNI_PATH).
const (
	TypeBridge    = "bridge"
	TypePtp       = "ptp"
	TypeMacvlan   = "macvlan"
	TypeIPVlan    = "ipvlan"
	TypeHostLocal = "host-local"
	TypeLoopback  = "loopback"
)

// List is a network configuration list (a *.conflist file).
type List struct {
	CNIVersion string `json:"cniVersion"`
	Name       string `json:"name"`
	Plugins    []any  `json:"plugins"`
}

// Bridge is the bridge plugin's section.
type Bridge struct {
	Type             string    `json:"type"`
	Bridge           string    `json:"bridge"`
	MTU              int       `json:"mtu"`
	IsGateway        bool      `json:"isGateway"`
	IsDefaultGateway bool      `json:"isDefaultGateway"`
	HairpinMode      bool      `json:"hairpinMode"`
	IPMasq           bool      `json:"ipMasq"`
	IPAM             HostLocal `json:"ipam"`
}

// Underlay is the section of the macvlan and ipvlan plugins: the pod's
// interface is a child of Master in the given mode.
type Underlay struct {
	Type   string    `json:"type"`
	Master string    `json:"master"`
	Mode   string    `json:"mode"`
	MTU    int       `json:"mtu"`
	IPAM   HostLocal `json:"ipam"`
}

// HostLocal is the host-local IPAM section. It has no dataDir on purpose:
// where IPAM state lives belongs to the node (package cniexec puts it in
// the run's state directory), not to the network.
type HostLocal struct {
	Type   string    `json:"type"`
	Ranges [][]Range `json:"ranges"`
	Routes []Route   `json:"routes,omitempty"`
}

// Range is one host-local address range.
type Range struct {
	Subnet     string `json:"subnet"`
	RangeStart string `json:"rangeStart,omitempty"`
	RangeEnd   string `json:"rangeEnd,omitempty"`
	Gateway    string `json:"gateway,omitempty"`
}

// Route is a route IPAM gives the pod; without GW it goes via the range's
// gateway.
type Route struct {
	Dst string `json:"dst"`
	GW  string `json:"gw,omitempty"`
}

// Marshal returns the configuration list named name holding plugins, in
// Version.
func Marshal(name string, plugins ...any) ([]byte, error) {
	if name == "" || len(plugins) == 0 {
		return nil, errors.New("cni configuration list needs a name and at least one plugin")
	}
	b, err := json.Marshal(List{CNIVersion: Version, Name: name, Plugins: plugins})
	if err != nil {
		return nil, fmt.Errorf("cni configuration list %s: %w", name, err)
	}
	return b, nil
}

// Loopback is the list containerd's CRI plugin (go-cni) runs for every
// pod besides its network, on the interface "lo": the loopback plugin
// sets lo up.
func Loopback() []byte {
	return []byte(`{"cniVersion":"` + Version + `","name":"cni-loopback","plugins":[{"type":"` + TypeLoopback + `"}]}`)
}

// Types lists the plugin types a configuration list runs: each plugin's
// type and, where it has one, its IPAM plugin's, in order.
func Types(list []byte) ([]string, error) {
	var l struct {
		Plugins []struct {
			Type string `json:"type"`
			IPAM *struct {
				Type string `json:"type"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(list, &l); err != nil {
		return nil, fmt.Errorf("cni configuration list: %w", err)
	}
	var out []string
	for i, p := range l.Plugins {
		if p.Type == "" {
			return nil, fmt.Errorf("cni configuration list: plugin %d has no type", i)
		}
		out = append(out, p.Type)
		if p.IPAM != nil && p.IPAM.Type != "" {
			out = append(out, p.IPAM.Type)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("cni configuration list has no plugins")
	}
	return out, nil
}
