package flanneld

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/datapath/internal/daemon"
)

// lease is a node's subnet lease, as flanneld writes it to subnet.env.
type lease struct {
	subnet *net.IPNet // the node's pod subnet (10.244.X.0/24)
	gw     net.IP     // its .1, on cni0
	mtu    int
}

// waitLease waits for flanneld to write its subnet file and parses it.
func waitLease(ctx context.Context, f *daemon.Daemon, path string) (lease, error) {
	for {
		if b, err := os.ReadFile(path); err == nil {
			l, err := parseSubnetEnv(string(b))
			if err == nil {
				return l, nil
			}
		}
		if ok, _ := f.Exited(); ok {
			return lease{}, f.ErrExited()
		}
		select {
		case <-ctx.Done():
			return lease{}, fmt.Errorf("flanneld on %s wrote no subnet file in %s; its log ends:\n%s", f.Node(), startTimeout, f.Tail(8))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// parseSubnetEnv reads flanneld's subnet.env:
//
//	FLANNEL_NETWORK=10.244.0.0/16
//	FLANNEL_SUBNET=10.244.57.1/24
//	FLANNEL_MTU=1472
//	FLANNEL_IPMASQ=false
func parseSubnetEnv(s string) (lease, error) {
	var l lease
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok {
			continue
		}
		switch k {
		case "FLANNEL_SUBNET":
			ip, n, err := net.ParseCIDR(v)
			if err != nil || ip.To4() == nil {
				return lease{}, fmt.Errorf("subnet.env: FLANNEL_SUBNET %q is not an IPv4 CIDR", v)
			}
			l.gw, l.subnet = ip.To4(), n
		case "FLANNEL_MTU":
			m, err := strconv.Atoi(v)
			if err != nil || m < 68 || m > 65535 {
				return lease{}, fmt.Errorf("subnet.env: FLANNEL_MTU %q is not an MTU", v)
			}
			l.mtu = m
		}
	}
	if l.subnet == nil || l.mtu == 0 {
		return lease{}, errors.New("subnet.env: FLANNEL_SUBNET or FLANNEL_MTU missing")
	}
	return l, nil
}

// lease returns node n's lease.
func (d *Datapath) lease(n datapath.Node) (lease, error) {
	d.mu.Lock()
	l, ok := d.leases[n.Netns]
	d.mu.Unlock()
	if !ok {
		return lease{}, fmt.Errorf("node %s has no flannel lease (SetupNode did not run)", n.Name)
	}
	return l, nil
}
