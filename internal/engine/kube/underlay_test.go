package kube

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
)

// underlayFake is a node with a management NIC (eth0, the InternalIP's)
// and a data NIC (ens5, a bond's port list below it) the CNI sends on.
type underlayFake struct {
	lower   map[string]string // tunnel -> lower device
	lowerOK bool              // false: an older agent, "unknown op"
}

func (f underlayFake) AddrDev(ip string) (string, []string, error) {
	switch ip {
	case "10.0.0.4":
		return "eth0", nil, nil
	case "192.168.50.4":
		return "ens5", []string{"ens5f0"}, nil
	}
	return "", nil, errors.New("no device of the node holds " + ip)
}

func (f underlayFake) LowerDev(tunnel string) (string, []string, error) {
	if !f.lowerOK {
		return "", nil, errors.New(`unknown op "lower-dev"`)
	}
	if d := f.lower[tunnel]; d != "" {
		return d, []string{d + "f0"}, nil
	}
	return "", nil, nil
}

// The underlay is the NIC the CNI sends on, not the InternalIP's where
// they differ: the tunnel's lower device, else the CNI's own address's
// device, else the InternalIP's; a note says when it is not the latter.
func TestUnderlayIsTheCNIsNIC(t *testing.T) {
	node := func(ann map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1", Annotations: ann},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.4"}}}}
	}
	flannel := map[string]string{FlannelAddrAnnotation: "192.168.50.4"}
	calico := map[string]string{cnidetect.CalicoAddrAnnotation: "192.168.50.4/24"}
	bound := underlayFake{lower: map[string]string{"flannel.1": "ens5"}, lowerOK: true}
	for _, tc := range []struct {
		name     string
		a        underlayFake
		n        *corev1.Node
		tunnel   string
		dev, sub string
		noted    bool
	}{
		{"vxlan bound to the data NIC", bound, node(nil), "flannel.1", "ens5", "ens5f0", true},
		{"vxlan bound to the InternalIP's NIC", underlayFake{lower: map[string]string{"flannel.1": "eth0"}, lowerOK: true}, node(flannel), "flannel.1", "eth0", "", false},
		{"tunl0 bound to none, calico's address", bound, node(calico), "tunl0", "ens5", "ens5f0", true},
		{"older agent, flannel's address", underlayFake{}, node(flannel), "flannel.1", "ens5", "ens5f0", true},
		{"no tunnel, no annotation", bound, node(nil), "", "eth0", "", false},
		{"annotation on the InternalIP", bound, node(map[string]string{FlannelAddrAnnotation: "10.0.0.4"}), "", "eth0", "", false},
		{"annotation of no device", bound, node(map[string]string{FlannelAddrAnnotation: "172.16.0.9"}), "", "eth0", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := findUnderlay(tc.a, tc.n, tc.tunnel)
			if err != nil || u.dev != tc.dev || strings.Join(u.stackedOn, ",") != tc.sub || (u.note != "") != tc.noted {
				t.Fatalf("underlay %+v, %v; want %s on [%s], noted %v", u, err, tc.dev, tc.sub, tc.noted)
			}
			if tc.noted && !strings.Contains(u.note, "not eth0, which holds its InternalIP 10.0.0.4") {
				t.Errorf("note %q", u.note)
			}
		})
	}
	if _, err := findUnderlay(bound, &corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.9.9.9"}}}}, ""); err == nil {
		t.Error("no error where no device holds the InternalIP")
	}
}
