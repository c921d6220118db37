package pktgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/netns"
)

// threadDir is the generator's control directory as a thread inside the
// namespace sees it: /proc/self/net would show the process's namespace.
const threadDir = "/proc/thread-self/net/pktgen"

// Run sends every flow at once, each from its own namespace, and returns
// what each device's generator counted, in flow order. started is called
// once every generator runs. A generator that keeps its schedule ends
// with its count; one behind it (a CPU that cannot send the rate) is
// stopped at the longest flow's duration and a little more (endGrace), as
// a time-bounded sender ends: its Sent then says how far it got.
// ctx's end stops them too, and is an error. The generators forget
// their devices afterwards. The kernel module is loaded if it is not
// (modprobe pktgen; it stays loaded, as any module a run needs).
func Run(ctx context.Context, flows []Flow, started func(time.Time)) ([]Sent, error) {
	seen := map[string]bool{}
	for _, f := range flows {
		if seen[f.Netns] {
			return nil, fmt.Errorf("pktgen: two flows from namespace %s (one generator per namespace drives one device here)", f.Netns)
		}
		seen[f.Netns] = true
	}
	if err := loadModule(flows); err != nil {
		return nil, err
	}
	threads := make([]string, len(flows))
	for i, f := range flows {
		t, err := setUp(f)
		if err != nil {
			return nil, errors.Join(err, forget(flows[:i], threads[:i]))
		}
		threads[i] = t
	}
	errs := make([]error, len(flows))
	var wg sync.WaitGroup
	for i, f := range flows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// pgctrl's start returns when the generators are done.
			errs[i] = write(f.Netns, "pgctrl", "start")
		}()
	}
	if started != nil {
		started(time.Now())
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var longest time.Duration
	for _, f := range flows {
		longest = max(longest, f.Duration)
	}
	end := time.NewTimer(longest + endGrace(longest))
	defer end.Stop()
	stop := func() {
		for _, f := range flows {
			_ = write(f.Netns, "pgctrl", "stop")
		}
		<-done
	}
	select {
	case <-done:
	case <-end.C:
		// Behind its schedule: a count set from rate x duration would
		// run on (at a hundredth of the rate, a hundred durations).
		stop()
	case <-ctx.Done():
		stop()
	}
	out := make([]Sent, len(flows))
	for i, f := range flows {
		if errs[i] == nil {
			var b []byte
			errs[i] = netns.Do(f.Netns, func() (err error) {
				b, err = os.ReadFile(filepath.Join(threadDir, f.Dev))
				return err
			})
			if errs[i] == nil {
				out[i], errs[i] = ParseResult(b)
			}
		}
	}
	errs = append(errs, forget(flows, threads), ctx.Err())
	return out, errors.Join(errs...)
}

// endGrace is how long past its duration a generator may run before Run
// stops it: enough for one that keeps its schedule to end with its count
// (its last packets and the kernel thread's wake-up), short against the
// trial.
func endGrace(d time.Duration) time.Duration { return d/100 + 100*time.Millisecond }

// setUp configures f on the first generator thread of its namespace.
func setUp(f Flow) (string, error) {
	var thread string
	err := netns.Do(f.Netns, func() error {
		ts, err := filepath.Glob(filepath.Join(threadDir, "kpktgend_*"))
		if err != nil || len(ts) == 0 {
			return fmt.Errorf("pktgen: no generator thread in %s", threadDir)
		}
		sort.Strings(ts)
		thread = filepath.Base(ts[0])
		return nil
	})
	if err != nil {
		return "", err
	}
	cmds, err := f.Commands(thread)
	if err != nil {
		return "", err
	}
	for _, c := range cmds {
		if err := write(f.Netns, c.File, c.Text); err != nil {
			return "", errors.Join(err, write(f.Netns, thread, "rem_device_all"))
		}
	}
	return thread, nil
}

// forget has each flow's thread drop its devices.
func forget(flows []Flow, threads []string) error {
	var errs []error
	for i, f := range flows {
		if threads[i] != "" {
			errs = append(errs, write(f.Netns, threads[i], "rem_device_all"))
		}
	}
	return errors.Join(errs...)
}

// write writes one command to a file of the namespace's generator.
// Equivalent to: ip netns exec NS sh -c 'echo TEXT > /proc/net/pktgen/FILE'
func write(ns, file, text string) error {
	return netns.Do(ns, func() error {
		if err := os.WriteFile(filepath.Join(threadDir, file), []byte(text+"\n"), 0o600); err != nil {
			return fmt.Errorf("pktgen %s %q in %s: %w", file, text, ns, err)
		}
		return nil
	})
}

// loadModule loads pktgen when the first flow's namespace has no
// generator yet.
func loadModule(flows []Flow) error {
	if len(flows) == 0 {
		return nil
	}
	exists := func() bool {
		ok := false
		_ = netns.Do(flows[0].Netns, func() error {
			_, err := os.Stat(threadDir)
			ok = err == nil
			return nil
		})
		return ok
	}
	if exists() {
		return nil
	}
	if out, err := exec.Command("modprobe", "pktgen").CombinedOutput(); err != nil {
		return fmt.Errorf("modprobe pktgen: %w: %s", err, strings.TrimSpace(string(out)))
	}
	if !exists() {
		return errors.New("pktgen: the module is loaded but " + threadDir + " is missing")
	}
	return nil
}

// RouteDev is the device namespace ns sends dst out of.
// Equivalent to: ip -n NS route get DST
func RouteDev(ns string, dst net.IP) (string, error) {
	h, err := netns.Handle(ns)
	if err != nil {
		return "", err
	}
	defer h.Close()
	dev, _, err := route(h, ns, dst)
	return dev, err
}

// route is the device and route namespace ns sends dst by.
func route(h *netns.NetlinkHandle, ns string, dst net.IP) (string, netlink.Route, error) {
	rs, err := h.RouteGet(dst)
	if err != nil || len(rs) == 0 {
		return "", netlink.Route{}, fmt.Errorf("route to %s in %s: %v", dst, ns, err)
	}
	l, err := h.LinkByIndex(rs[0].LinkIndex)
	if err != nil {
		return "", netlink.Route{}, err
	}
	return l.Attrs().Name, rs[0], nil
}

// NextHopMAC is the device namespace ns sends dst out of and the
// Ethernet address of the next hop there: its route's gateway, or dst on
// a connected route. A missing neighbour entry is resolved by sending
// one datagram to dst's discard port first.
func NextHopMAC(ns string, dst net.IP) (string, net.HardwareAddr, error) {
	h, err := netns.Handle(ns)
	if err != nil {
		return "", nil, err
	}
	defer h.Close()
	dev, r, err := route(h, ns, dst)
	if err != nil {
		return "", nil, err
	}
	hop := dst
	if r.Gw != nil {
		hop = r.Gw
	}
	lookup := func() net.HardwareAddr {
		ns, _ := h.NeighList(r.LinkIndex, netlink.FAMILY_V4)
		for _, n := range ns {
			if n.IP.Equal(hop) && len(n.HardwareAddr) == 6 && n.State&(netlink.NUD_INCOMPLETE|netlink.NUD_FAILED) == 0 {
				return n.HardwareAddr
			}
		}
		return nil
	}
	if mac := lookup(); mac != nil {
		return dev, mac, nil
	}
	_ = netns.Do(ns, func() error {
		c, err := net.Dial("udp4", net.JoinHostPort(dst.String(), "9"))
		if err == nil {
			_, _ = c.Write([]byte{0})
			c.Close()
		}
		return nil
	})
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if mac := lookup(); mac != nil {
			return dev, mac, nil
		}
	}
	return "", nil, fmt.Errorf("no neighbour entry for %s (next hop to %s) in %s", hop, dst, ns)
}
