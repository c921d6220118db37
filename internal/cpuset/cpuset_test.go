package cpuset

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestParseAndString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Set
		str  string
	}{
		{"0", Set{0}, "0"},
		{"0-3", Set{0, 1, 2, 3}, "0-3"},
		{"3,1-2,1", Set{1, 2, 3}, "1-3"},
		{" 0-1,5,7-8 ", Set{0, 1, 5, 7, 8}, "0-1,5,7-8"},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Parse(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if got.String() != tc.str {
			t.Errorf("String() = %q, want %q", got.String(), tc.str)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "1-", "0,,1", "99999"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// Masks must be written in the kernel's bitmap format: zero-padded 32-bit
// hex words, most significant first.
func TestMask(t *testing.T) {
	for _, tc := range []struct {
		set  Set
		n    int
		want string
	}{
		{Range(4), 4, "0000000f"},
		{Set{0, 1, 2}, 4, "00000007"},
		{Set{}, 2, "00000000"},
		{Set{0, 33}, 40, "00000002,00000001"},
		{Set{31}, 32, "80000000"},
	} {
		if got := tc.set.Mask(tc.n); got != tc.want {
			t.Errorf("%v.Mask(%d) = %q, want %q", tc.set, tc.n, got, tc.want)
		}
		back, err := ParseMask(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if len(tc.set) > 0 && !reflect.DeepEqual(back, tc.set) {
			t.Errorf("ParseMask(%q) = %v, want %v", tc.want, back, tc.set)
		}
	}
	if _, err := ParseMask("zz"); err == nil {
		t.Error("ParseMask accepted garbage")
	}
}

func TestWithoutContains(t *testing.T) {
	s := Range(4).Without(3)
	if s.Contains(3) || !s.Contains(2) || s.String() != "0-2" {
		t.Errorf("Range(4).Without(3) = %v", s)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0-3", "1,2", "0-1,5", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(set.String())
		if err != nil || !reflect.DeepEqual(again, set) {
			t.Errorf("round trip of %q: %v -> %q -> %v (%v)", s, set, set.String(), again, err)
		}
	})
}

// Outside keeps the CPUs of a set that another lacks.
func TestOutside(t *testing.T) {
	if got := (Set{0, 2, 5, 7}).Outside(Set{0, 1, 2, 3}); got.String() != "5,7" {
		t.Errorf("Outside = %v, want 5,7", got)
	}
	if got := (Set{1}).Outside(Set{0, 1}); got != nil {
		t.Errorf("Outside = %v, want none", got)
	}
}

// TestParseMaskBound: a mask sets at most CPU MaxCPU, as a CPU list
// names at most it; a longer mask is refused, not read into a set as
// large as it is long. Zero words above are padding.
func TestParseMaskBound(t *testing.T) {
	word := func(n int, w string) string { return strings.Repeat(","+w, n) }
	for _, tc := range []struct {
		mask string
		want Set
	}{
		{"80000000" + word(127, "00000000"), Set{MaxCPU}},
		{strings.Repeat("0,", 300) + "1", Set{0}},
	} {
		if got, err := ParseMask(tc.mask); err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseMask(%d words) = %v, %v; want %v", strings.Count(tc.mask, ",")+1, got, err, tc.want)
		}
	}
	for _, m := range []string{"1" + word(128, "00000000"), "ffffffff" + word(1000, "ffffffff")} {
		if got, err := ParseMask(m); !errors.Is(err, ErrBeyondMaxCPU) {
			t.Errorf("ParseMask(%d words) = %d CPUs, %v; want ErrBeyondMaxCPU", strings.Count(m, ",")+1, len(got), err)
		}
	}
}

// TestParseBound: a CPU list naming a CPU above MaxCPU, alone or as a
// range's end, is refused with ErrBeyondMaxCPU, so callers can tell it
// from a malformed list; MaxCPU itself is accepted.
func TestParseBound(t *testing.T) {
	if got, err := Parse(strconv.Itoa(MaxCPU)); err != nil || !reflect.DeepEqual(got, Set{MaxCPU}) {
		t.Errorf("Parse(%d) = %v, %v; want [%d]", MaxCPU, got, err, MaxCPU)
	}
	for _, s := range []string{strconv.Itoa(MaxCPU + 1), "0-" + strconv.Itoa(MaxCPU+1), "1,99999999"} {
		if got, err := Parse(s); !errors.Is(err, ErrBeyondMaxCPU) {
			t.Errorf("Parse(%q) = %v, %v; want ErrBeyondMaxCPU", s, got, err)
		}
	}
	if _, err := Parse("x-3"); err == nil || errors.Is(err, ErrBeyondMaxCPU) {
		t.Errorf("Parse(x-3) = %v; want a malformed-list error", err)
	}
}
