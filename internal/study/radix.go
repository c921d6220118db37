package study

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yaml.v3 reads a plain number as Go's strconv.ParseInt with base 0
// does: `mtu: 01400` is octal, 768; `0x578` hexadecimal, 1400; `0b101`
// binary. Where the number fills a number of the study (mtu, replicas,
// trials' min and max, a reference's value) the study would quietly
// take another number than the text shows, and inconsistently: `018`,
// not being octal, is 18, and `trials: 010` (read as text) 10. So a
// number written with a leading 0 or a radix prefix is refused there,
// in the file, its profiles and --set alike; the study format's numbers
// are decimal. A string field keeps its text as written (a sysctl's
// value, a length), so it is not refused.

// radixRE is a plain number that yaml.v3 reads in another base than
// ten: a leading 0 followed by digits (octal), or 0x, 0o, 0b.
var radixRE = regexp.MustCompile(`^[-+]?0(?:[0-9_]+|[xXoObB].*)$`)

// misreadNumber is the path and node of the first number under root, in
// document order, that the study would take as another number than its
// text shows, with what to say of it: one that fills a number of the
// study written in another base than ten (radixRE; an explicit
// `!!float 010` is read in base 8 too: decimalFloat), or a float with a
// fraction where a whole number is wanted (fraction.go). The profiles
// are left out (each is checked once applied: checkProfiles), as are
// keys of no field (x-... keys of the user's own, unknown ones: the
// strict decode refuses those).
func misreadNumber(root *yaml.Node) (field string, at *yaml.Node, msg string) {
	var walk func(n *yaml.Node, t reflect.Type, path string) bool
	walk = func(n *yaml.Node, t reflect.Type, path string) bool {
		t = deref(t)
		if t == nil {
			return false
		}
		switch n.Kind {
		case yaml.ScalarNode:
			tag := n.ShortTag()
			if numeric(t) && radixRE.MatchString(n.Value) && (tag == "!!int" || tag == "!!float" && !decimalFloat(n)) {
				field, at, msg = path, n, radixMessage(n)
				return true
			}
			if wholeKind(t) && tag == "!!float" {
				if m := fractionMessage(n); m != "" {
					field, at, msg = path, n, m
					return true
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				if path == "" && key == "profiles" {
					continue
				}
				if walk(n.Content[i+1], fieldType(t, key), strings.TrimPrefix(path+"."+key, ".")) {
					return true
				}
			}
		case yaml.SequenceNode:
			if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
				return false
			}
			for i, it := range n.Content {
				if walk(it, t.Elem(), fmt.Sprintf("%s[%d]", path, i)) {
					return true
				}
			}
		}
		return false
	}
	walk(root, reflect.TypeFor[Study](), "")
	return field, at, msg
}

// decimalFloat says whether yaml.v3 read the !!float n as the decimal
// number its text shows: `018`, no octal number, is the float 18, where
// an explicit `!!float 010` is 8 and `!!float 0x10` 16.
func decimalFloat(n *yaml.Node) bool {
	var f float64
	d, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
	return err == nil && n.Decode(&f) == nil && f == d
}

// numeric says whether a scalar decoded into t is read as a number:
// Go's numbers, and Trials, whose scalar form is a count (read as
// decimal text, so `trials: 010` is 10 where `{min: 010}` is 8).
func numeric(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return t == reflect.TypeFor[Trials]()
}

// radixMessage says how YAML reads n's number and what to write: the
// digits in decimal for a leading 0 (`016` meant 16), the value for a
// prefix (`0x578` meant 1400).
func radixMessage(n *yaml.Node) string {
	var v any
	_ = n.Decode(&v) // a !!int or !!float decodes
	sign, digits := "", strings.ReplaceAll(n.Value, "_", "")
	if digits[0] == '-' || digits[0] == '+' {
		sign, digits = strings.TrimPrefix(digits[:1], "+"), digits[1:]
	}
	var base string
	if len(digits) > 1 {
		base = map[byte]string{'x': "0x as hexadecimal", 'o': "0o as octal", 'b': "0b as binary"}[digits[1]|0x20]
	}
	if base != "" {
		return fmt.Sprintf("%s: YAML reads %s (%v); write %v (a study's numbers are decimal)", n.Value, base, v, v)
	}
	decimal := strings.TrimLeft(digits, "0")
	if decimal == "" {
		decimal, sign = "0", ""
	}
	return fmt.Sprintf("%s: YAML reads a leading 0 as octal (%v); write %s%s", n.Value, v, sign, decimal)
}
