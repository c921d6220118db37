package inspect

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Offload is one ethtool feature's state.
type Offload struct {
	On bool `json:"on"`
	// Fixed means the device cannot change it ("[fixed]").
	Fixed bool `json:"fixed,omitempty"`
}

// ParseFeatures reads `ethtool -k DEV` output: "name: on|off [fixed]"
// lines, indented sub-features included, the header skipped.
func ParseFeatures(out []byte) (map[string]Offload, error) {
	m := map[string]Offload{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "Features for ") {
			continue
		}
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("ethtool -k line %d: not \"feature: on|off\": %q", n, clip(line))
		}
		f := strings.Fields(rest)
		if len(f) == 0 || (f[0] != "on" && f[0] != "off") {
			return nil, fmt.Errorf("ethtool -k line %d: feature %s: state %q is not on or off", n, name, clip(rest))
		}
		m[name] = Offload{On: f[0] == "on", Fixed: strings.Contains(rest, "[fixed]")}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("ethtool -k: no features in the output")
	}
	return m, nil
}

// RSS is what `ethtool -x DEV` says of receive side scaling.
type RSS struct {
	// Rings is the number of rx rings the output names.
	Rings int `json:"rings"`
	// Table is the indirection table's size; 0 when the device does not
	// report one.
	Table int `json:"table,omitempty"`
	// Used are the distinct rings the table spreads flows over.
	Used []int `json:"used,omitempty"`
	// Hash is the hash function in use ("toeplitz"), if reported.
	Hash string `json:"hash,omitempty"`
}

// ParseRSS reads `ethtool -x DEV` output. A device without an
// indirection table ("Operation not supported") gives Table 0.
func ParseRSS(out []byte) (RSS, error) {
	var r RSS
	used := map[int]bool{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		switch {
		case line == "":
		case strings.HasPrefix(line, "RX flow hash indirection table"):
			section = "table"
			i := strings.Index(line, " with ")
			if i < 0 {
				return RSS{}, fmt.Errorf("ethtool -x line %d: no ring count in %q", n, clip(line))
			}
			f := strings.Fields(line[i+len(" with "):])
			v, err := strconv.Atoi(firstOr(f))
			if err != nil || v < 0 {
				return RSS{}, fmt.Errorf("ethtool -x line %d: ring count %q", n, clip(line))
			}
			r.Rings = v
		case strings.HasPrefix(line, "RSS hash key"):
			section = "key"
		case strings.HasPrefix(line, "RSS hash function"):
			section = "hash"
		case strings.HasPrefix(line, "RSS input transformation"), strings.HasPrefix(line, "RSS hash"):
			section = "other"
		case section == "table" && strings.Contains(line, ":"):
			_, vals, _ := strings.Cut(line, ":")
			for _, f := range strings.Fields(vals) {
				v, err := strconv.Atoi(f)
				if err != nil || v < 0 {
					return RSS{}, fmt.Errorf("ethtool -x line %d: ring %q is not a number", n, f)
				}
				r.Table++
				used[v] = true
			}
		case section == "hash" && strings.HasSuffix(line, ": on"):
			r.Hash = strings.TrimSuffix(line, ": on")
		}
	}
	if err := sc.Err(); err != nil {
		return RSS{}, err
	}
	for v := range used {
		r.Used = append(r.Used, v)
	}
	sort.Ints(r.Used)
	return r, nil
}

// Interrupt is one numbered line of /proc/interrupts.
type Interrupt struct {
	IRQ int `json:"irq"`
	// Counts are per CPU column, in column order.
	Counts []uint64 `json:"-"`
	// Name is the last field: the action's name ("eth0-TxRx-3",
	// "virtio2-input.0", "mlx5_comp3@pci:0000:3b:00.0").
	Name string `json:"name"`
}

// ParseInterrupts reads /proc/interrupts; the lines without an IRQ
// number (NMI, LOC...) are skipped.
func ParseInterrupts(out []byte) ([]Interrupt, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	ncpu := -1
	var irqs []Interrupt
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if ncpu < 0 {
			ncpu = 0
			for _, f := range strings.Fields(line) {
				if !strings.HasPrefix(f, "CPU") {
					return nil, fmt.Errorf("/proc/interrupts line 1: want CPU columns, got %q", clip(line))
				}
				ncpu++
			}
			if ncpu == 0 {
				return nil, fmt.Errorf("/proc/interrupts: no CPU columns")
			}
			continue
		}
		head, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		irq, err := strconv.Atoi(strings.TrimSpace(head))
		if err != nil || irq < 0 {
			continue // NMI, LOC, ERR, MIS...
		}
		f := strings.Fields(rest)
		if len(f) < ncpu {
			return nil, fmt.Errorf("/proc/interrupts line %d: IRQ %d has %d fields for %d CPUs", n, irq, len(f), ncpu)
		}
		it := Interrupt{IRQ: irq, Counts: make([]uint64, ncpu)}
		for i := 0; i < ncpu; i++ {
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("/proc/interrupts line %d: IRQ %d CPU%d count %q", n, irq, i, f[i])
			}
			it.Counts[i] = v
		}
		if len(f) > ncpu {
			it.Name = f[len(f)-1]
		}
		irqs = append(irqs, it)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if ncpu < 0 {
		return nil, fmt.Errorf("/proc/interrupts: empty")
	}
	return irqs, nil
}

func firstOr(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Channels are a NIC's channel counts (ethtool -l): a driver with
// queue pairs takes "combined" (max_combined > 0), one with separate
// receive and transmit channels "rx" and "tx" (max_combined 0).
type Channels struct {
	MaxRX       int `json:"max_rx"`
	MaxTX       int `json:"max_tx"`
	MaxOther    int `json:"max_other"`
	MaxCombined int `json:"max_combined"`
	RX          int `json:"rx"`
	TX          int `json:"tx"`
	Other       int `json:"other"`
	Combined    int `json:"combined"`
}

// ParseChannels reads `ethtool -l DEV`: "Pre-set maximums:" then
// "Current hardware settings:", each with RX, TX, Other and Combined
// ("n/a", which newer ethtool prints for a count the driver lacks, is 0).
func ParseChannels(out []byte) (Channels, error) {
	var c Channels
	var section []*int
	seen := 0
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Pre-set maximums"):
			section, seen = []*int{&c.MaxRX, &c.MaxTX, &c.MaxOther, &c.MaxCombined}, seen|1
			continue
		case strings.HasPrefix(line, "Current hardware settings"):
			section, seen = []*int{&c.RX, &c.TX, &c.Other, &c.Combined}, seen|2
			continue
		}
		key, val, ok := strings.Cut(line, ":")
		i := slices.Index([]string{"RX", "TX", "Other", "Combined"}, key)
		if !ok || i < 0 || section == nil {
			continue
		}
		val = strings.TrimSpace(val)
		if val == "n/a" {
			continue
		}
		v, err := strconv.Atoi(val)
		if err != nil || v < 0 {
			return Channels{}, fmt.Errorf("ethtool -l: %s %q", key, val)
		}
		*section[i] = v
	}
	if seen != 3 {
		return Channels{}, fmt.Errorf("ethtool -l: no maximums and current settings in %q", clip(string(out)))
	}
	return c, nil
}
