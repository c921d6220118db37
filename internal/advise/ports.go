package advise

import (
	"fmt"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// nicDevs are the devices the underlay's receive steering, interrupts,
// GRO and offloads live on: the underlay itself, the one device under it
// (a VLAN's or macvlan's parent), or every port of the bond or team under
// it (inspect.Inspection.UnderlayLower). Over a bond packets arrive on
// each port, so the facts read them all (queues add up: RPS/RFS share
// one flow table among every queue) and a knob on {nic} is one knob per
// port (Rule.fill).
func nicDevs(in *inspect.Inspection) ([]*inspect.NIC, error) {
	if len(in.UnderlayLower) == 0 {
		n, err := underlayDev(in)
		if err != nil {
			return nil, err
		}
		return []*inspect.NIC{n}, nil
	}
	out := make([]*inspect.NIC, 0, len(in.UnderlayLower))
	for _, name := range in.UnderlayLower {
		n := findNIC(in, name)
		if n == nil {
			return nil, fmt.Errorf("underlay %s sits on %s, which is not a NIC", in.Underlay, name)
		}
		out = append(out, n)
	}
	return out, nil
}

// nics are nicDevs when they are hardware: what has interrupts, RSS, a
// NUMA node and hardware offloads.
func nics(in *inspect.Inspection) ([]*inspect.NIC, error) {
	ns, err := nicDevs(in)
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		if n.Virtual {
			return nil, fmt.Errorf("underlay %s is a virtual device, not a NIC: no interrupts, RSS, NUMA node or hardware offloads", n.Name)
		}
	}
	return ns, nil
}

func findNIC(in *inspect.Inspection, name string) *inspect.NIC {
	for i := range in.NICs {
		if in.NICs[i].Name == name {
			return &in.NICs[i]
		}
	}
	return nil
}

// knownEach is known for one inspected key per device ("queues eth0").
func knownEach(in *inspect.Inspection, key string, ns []*inspect.NIC) error {
	for _, n := range ns {
		if err := known(in, key+" "+n.Name); err != nil {
			return err
		}
	}
	return nil
}

// rxQueues is the receive queues of all the devices.
func rxQueues(ns []*inspect.NIC) (int, error) {
	q := 0
	for _, n := range ns {
		q += n.RxQueues
	}
	if q == 0 {
		return 0, fmt.Errorf("%s: no rx queues in sysfs", nicNames(ns, ", "))
	}
	return q, nil
}

// nicNames joins the devices' names. {nic} joins them with "|", udev's
// alternative patterns (KERNEL=="eth0|eth1" matches either port), which
// Rule.fill splits back into one knob per port.
func nicNames(ns []*inspect.NIC, sep string) string {
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.Name
	}
	return strings.Join(names, sep)
}

// allOn reports whether every device has feature on: a bond offers what
// all its ports offer.
func allOn(ns []*inspect.NIC, feature string) bool {
	for _, n := range ns {
		if !n.Offloads[feature].On {
			return false
		}
	}
	return len(ns) > 0
}
