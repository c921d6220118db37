package study

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yaml.v3 decodes any float into an int field as Go's int64(f) does,
// cutting the fraction off: `replicas: [1.5, 4]` ran 1 and 4, `--set
// workloads.t.parallel=2.5` ran 2, `mtu: 0.5` was 0 (the CNI's own MTU)
// and `noise: {repeats: 0.5}` 0, with exit 0 and the cut value in
// study.yaml. As with a number in another base than ten (radix.go), the
// study would quietly take another number than the text shows, so a
// float with a fraction is refused where a whole number is wanted, in
// the file, its profiles and --set alike. A float that is exactly a
// whole number (`2.0`, `1.4e3`, `-0.0`) is that number, as the text
// shows, and is taken: the fraction's digits are read from the text, as
// the float may have rounded it (2.0000000000000001 is the float 2).

// wholeLimit bounds the floats taken as whole numbers: below 2^53 in
// magnitude a float is the text's number exactly; at or past it the
// text's number may have been rounded to the float.
const wholeLimit = 1 << 53

// fractionMessage says why the !!float scalar n, at a field that takes a
// whole number, is not the number it shows: a fraction, or too large a
// number to be read exactly; "" when it is a whole number (`2.0`).
func fractionMessage(n *yaml.Node) string {
	var f float64
	if n.Decode(&f) != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return n.Value + ": want a whole number"
	}
	if !wholeText(n.Value) {
		if math.Abs(f) < math.MaxInt64 {
			return fmt.Sprintf("%s: want a whole number (YAML reads it as %d)", n.Value, int64(f))
		}
		return n.Value + ": want a whole number"
	}
	if math.Abs(f) >= wholeLimit {
		return fmt.Sprintf("%s: too large a number to be read exactly (YAML reads it as %s)", n.Value, strconv.FormatFloat(f, 'f', -1, 64))
	}
	return ""
}

// wholeText says whether the YAML float text s (digits, an optional
// point and exponent, _ separators; not .inf or .nan) is a whole number:
// every digit after the point, once the exponent moved it, is 0.
func wholeText(s string) bool {
	s = strings.ReplaceAll(strings.TrimLeft(s, "+-"), "_", "")
	mant, exp, _ := strings.Cut(strings.ToLower(s), "e")
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	if strings.Trim(digits, "0") == "" {
		return true // 0, whatever its exponent
	}
	shift := 0
	if exp != "" {
		var err error
		if shift, err = strconv.Atoi(exp); err != nil {
			// Past any int: 1e-99999999999999999999 is no whole
			// number, and YAML reads a large one as .inf, no float.
			return false
		}
	}
	// point is where the decimal point falls in digits; clamped, as the
	// exponent may move it far past either end.
	point := min(max(len(whole)+shift, 0), len(digits))
	return strings.Trim(digits[point:], "0") == ""
}

// wholeKind says whether a scalar decoded into t is a whole number:
// Go's integers, and Trials, whose scalar form is a count.
func wholeKind(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return t == reflect.TypeFor[Trials]()
}
