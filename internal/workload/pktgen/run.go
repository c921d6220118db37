package pktgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/netns"
)

// threadDir is the generator's control directory as a thread inside the
// namespace sees it: /proc/self/net would show the process's namespace.
const threadDir = "/proc/thread-self/net/pktgen"

// Run sends every flow at once, each from its own generator device, and
// returns what each device's generator counted, in flow order. Several
// flows may come from one namespace (a pair's parallel streams): they
// take the namespace's generator threads on their CPUs in turn
// (kpktgend_N, one per CPU; a thread given two devices drives them in
// turn) and devices of their own (place). started is called once every generator runs. A
// generator that keeps its schedule ends with its count; one behind it
// (a CPU that cannot send the rate) is stopped at the longest flow's
// duration and a little more (endGrace), as a time-bounded sender ends:
// its Sent then says how far it got. ctx's end stops them too, and is an
// error. The generators forget their devices afterwards. The kernel
// module is loaded if it is not (modprobe pktgen; it stays loaded, as any
// module a run needs).
func Run(ctx context.Context, flows []Flow, started func(time.Time)) ([]Sent, error) {
	if err := loadModule(flows); err != nil {
		return nil, err
	}
	gens, err := place(flows)
	if err != nil {
		return nil, err
	}
	if err := setUp(gens); err != nil {
		return nil, err
	}
	var nss []string
	for _, g := range gens {
		if !slices.Contains(nss, g.Netns) {
			nss = append(nss, g.Netns)
		}
	}
	startErr := make([]error, len(nss))
	var wg sync.WaitGroup
	for i, ns := range nss {
		// pgctrl's start returns when the namespace's generators are done.
		wg.Go(func() { startErr[i] = write(ns, "pgctrl", "start") })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	if started != nil {
		waitRunning(ctx, gens, done)
		started(time.Now())
	}
	var longest time.Duration
	for _, f := range flows {
		longest = max(longest, f.Duration)
	}
	end := time.NewTimer(longest + endGrace(longest))
	defer end.Stop()
	stop := func() {
		for _, ns := range nss {
			_ = write(ns, "pgctrl", "stop")
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
	out := make([]Sent, len(gens))
	errs := slices.Clone(startErr) // a namespace's once, not once per stream
	for i, g := range gens {
		if startErr[slices.Index(nss, g.Netns)] != nil {
			continue
		}
		b, err := g.report()
		if err == nil {
			out[i], err = ParseResult(b)
		}
		errs = append(errs, err)
	}
	errs = append(errs, forget(gens), ctx.Err())
	return out, errors.Join(errs...)
}

// waitRunning returns once every generator has started, the runs have
// ended, ctx has, or a second has passed. Each thread notices the start
// on its own 100 ms poll (pktgen_thread_worker waits HZ/10 for T_RUN,
// which pktgen_run_all_threads sets without waking it): the workload's
// measured window opens when the last one sends, not when start was
// written. A report that cannot be read counts as started: the wait
// only places the window.
func waitRunning(ctx context.Context, gens []generator, done <-chan struct{}) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(time.Second)
	left := slices.Clone(gens)
	for {
		left = slices.DeleteFunc(left, func(g generator) bool {
			b, err := g.report()
			return err != nil || HasStarted(b)
		})
		if len(left) == 0 {
			return
		}
		select {
		case <-tick.C:
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-limit:
			return
		}
	}
}

// endGrace is how long past its duration a generator may run before Run
// stops it: enough for one that keeps its schedule to end with its count
// (its last packets and the kernel thread's wake-up), short against the
// trial.
func endGrace(d time.Duration) time.Duration { return d/100 + 100*time.Millisecond }

// generator is a flow with the thread and device name that send it.
type generator struct {
	Flow
	thread, name string
}

// report reads the generator's device report (/proc/net/pktgen/DEV in
// its namespace).
func (g generator) report() ([]byte, error) {
	var b []byte
	err := netns.Do(g.Netns, func() (err error) {
		b, err = os.ReadFile(filepath.Join(threadDir, g.name))
		return err
	})
	return b, err
}

// place gives each flow a generator thread and device (assign), from
// the threads its namespace has.
func place(flows []Flow) ([]generator, error) {
	threads := map[string][]int{}
	for _, f := range flows {
		if _, ok := threads[f.Netns]; ok {
			continue
		}
		ts, err := threadsOf(f.Netns)
		if err != nil {
			return nil, err
		}
		threads[f.Netns] = ts
	}
	return assign(flows, threads)
}

// assign gives each flow a generator: the K-th flow of a namespace takes
// the K-th of the namespace's threads on the flow's CPUs (round again
// past the last; threads holds each namespace's thread CPUs, ascending)
// and the device name Dev@K where the namespace sends several flows,
// else Dev.
func assign(flows []Flow, threads map[string][]int) ([]generator, error) {
	count, next := map[string]int{}, map[string]int{}
	for _, f := range flows {
		count[f.Netns]++
	}
	out := make([]generator, len(flows))
	for i, f := range flows {
		var on []int
		for _, c := range threads[f.Netns] {
			if len(f.CPUs) == 0 || f.CPUs.Contains(c) {
				on = append(on, c)
			}
		}
		if len(on) == 0 {
			return nil, fmt.Errorf("pktgen: %s has no generator thread on CPUs %s (it has threads on CPUs %s)", f.Netns, f.CPUs, cpuset.Set(threads[f.Netns]))
		}
		k := next[f.Netns]
		next[f.Netns]++
		name := f.Dev
		if count[f.Netns] > 1 {
			name = fmt.Sprintf("%s@%d", f.Dev, k)
		}
		out[i] = generator{Flow: f, thread: ThreadName(on[k%len(on)]), name: name}
	}
	return out, nil
}

// threadPrefix names a generator thread; its CPU follows (kpktgend_N).
const threadPrefix = "kpktgend_"

// ThreadName is the generator thread of cpu (kpktgend_N): its entry in
// the generator's control directory and its comm, by which CPU cost per
// packet counts its samples (components.yaml).
func ThreadName(cpu int) string { return threadPrefix + strconv.Itoa(cpu) }

// threadsOf lists the CPUs of namespace ns's generator threads,
// ascending.
func threadsOf(ns string) ([]int, error) {
	var out []int
	err := netns.Do(ns, func() error {
		ts, err := filepath.Glob(filepath.Join(threadDir, threadPrefix+"*"))
		for _, t := range ts {
			if cpu, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(t), threadPrefix)); err == nil {
				out = append(out, cpu)
			}
		}
		if err != nil || len(out) == 0 {
			return fmt.Errorf("pktgen: no generator thread in %s of %s", threadDir, ns)
		}
		slices.Sort(out)
		return nil
	})
	return out, err
}

// setUp has each thread it uses forget its devices, then adds each
// generator's device to its thread; on an error the threads forget
// again.
func setUp(gens []generator) error {
	for _, t := range threadsUsed(gens) {
		if err := write(t.ns, t.thread, "rem_device_all"); err != nil {
			return err
		}
	}
	for _, g := range gens {
		cmds, err := g.Commands(g.thread, g.name)
		if err != nil {
			return errors.Join(err, forget(gens))
		}
		for _, c := range cmds {
			if err := write(g.Netns, c.File, c.Text); err != nil {
				return errors.Join(err, forget(gens))
			}
		}
	}
	return nil
}

type nsThread struct{ ns, thread string }

// threadsUsed are the generators' threads, once each.
func threadsUsed(gens []generator) []nsThread {
	var out []nsThread
	for _, g := range gens {
		if t := (nsThread{g.Netns, g.thread}); !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// forget has each thread the generators used drop its devices.
func forget(gens []generator) error {
	var errs []error
	for _, t := range threadsUsed(gens) {
		errs = append(errs, write(t.ns, t.thread, "rem_device_all"))
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
