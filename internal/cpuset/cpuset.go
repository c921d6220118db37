// Package cpuset parses and formats Linux CPU lists ("0-2,5") and the hex
// masks sysfs uses for rps_cpus ("00000007", comma-separated 32-bit words).
package cpuset

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// Set is a sorted list of distinct CPU numbers.
type Set []int

// MaxCPU bounds the CPU numbers Parse and ParseMask accept, from users,
// the kernel or a node's agent alike, so that no input, however long,
// makes a set of more than MaxCPU+1 CPUs.
const MaxCPU = 4095

// ErrBeyondMaxCPU is wrapped by Parse and ParseMask for a list or mask
// naming a CPU above MaxCPU.
var ErrBeyondMaxCPU = errors.New("CPU number above " + strconv.Itoa(MaxCPU))

// Parse reads a CPU list such as "0-2,5" (the format of cpuset.cpus and
// taskset -c).
func Parse(s string) (Set, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty CPU list")
	}
	seen := map[int]bool{}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU %q in list %q", lo, s)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a {
				return nil, fmt.Errorf("bad CPU range %q in list %q", part, s)
			}
		}
		if b > MaxCPU {
			return nil, fmt.Errorf("CPU %d in list %q: %w", b, s, ErrBeyondMaxCPU)
		}
		for c := a; c <= b; c++ {
			seen[c] = true
		}
	}
	out := make(Set, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Ints(out)
	return out, nil
}

// Range returns the set {0..n-1}.
func Range(n int) Set {
	s := make(Set, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// String formats the set as a CPU list ("0-2,5").
func (s Set) String() string {
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Contains reports whether cpu is in the set.
func (s Set) Contains(cpu int) bool {
	for _, c := range s {
		if c == cpu {
			return true
		}
	}
	return false
}

// Without returns the set minus cpu.
func (s Set) Without(cpu int) Set {
	out := make(Set, 0, len(s))
	for _, c := range s {
		if c != cpu {
			out = append(out, c)
		}
	}
	return out
}

// Mask formats the set as the kernel's bitmap format used by rps_cpus:
// hex 32-bit words, most significant first, separated by commas, covering
// at least nCPUs bits ("f" on 4 CPUs is written "0000000f").
func (s Set) Mask(nCPUs int) string {
	words := (nCPUs + 31) / 32
	if words == 0 {
		words = 1
	}
	for _, c := range s {
		if c/32+1 > words {
			words = c/32 + 1
		}
	}
	w := make([]uint32, words)
	for _, c := range s {
		w[c/32] |= 1 << uint(c%32)
	}
	parts := make([]string, words)
	for i := range w {
		parts[words-1-i] = fmt.Sprintf("%08x", w[i])
	}
	return strings.Join(parts, ",")
}

// ParseMask reads the kernel bitmap format ("00000007" or "0,0000000f").
// A mask setting a CPU above MaxCPU is refused (ErrBeyondMaxCPU): each
// word can add 32 CPUs, and a long mask (from a node's agent, say) would
// otherwise make a set as large as it likes. Zero words above MaxCPU are
// read, as a kernel built for more CPUs pads the mask with them.
func ParseMask(m string) (Set, error) {
	m = strings.TrimSpace(m)
	if m == "" {
		return nil, fmt.Errorf("empty mask")
	}
	words := strings.Split(m, ",")
	var out Set
	for i := len(words) - 1; i >= 0; i-- {
		v, err := strconv.ParseUint(words[i], 16, 32)
		if err != nil {
			return nil, fmt.Errorf("bad mask word %q in %q", words[i], m)
		}
		base := (len(words) - 1 - i) * 32
		if top := base + 63 - bits.LeadingZeros64(v); v != 0 && top > MaxCPU {
			return nil, fmt.Errorf("mask %q sets CPU %d: %w", m, top, ErrBeyondMaxCPU)
		}
		for v != 0 {
			b := bits.TrailingZeros64(v)
			out = append(out, base+b)
			v &^= 1 << uint(b)
		}
	}
	sort.Ints(out)
	return out, nil
}

// Outside lists the CPUs of s that are not in allowed.
func (s Set) Outside(allowed Set) Set {
	var out Set
	for _, c := range s {
		if !allowed.Contains(c) {
			out = append(out, c)
		}
	}
	return out
}
