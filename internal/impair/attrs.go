package impair

import (
	"encoding/binary"
	"fmt"

	"github.com/vishvananda/netlink/nl"
)

// attr is one netlink attribute, its type without the nested and
// byte-order flags.
type attr struct {
	Type  uint16
	Value []byte
}

// parseAttrs splits a run of netlink attributes, checking every length
// (nl.ParseRouteAttr panics on some malformed input).
func parseAttrs(b []byte) ([]attr, error) {
	var out []attr
	for len(b) >= 4 {
		l := int(binary.NativeEndian.Uint16(b))
		typ := binary.NativeEndian.Uint16(b[2:]) & nl.NLA_TYPE_MASK
		if l < 4 || l > len(b) {
			return out, fmt.Errorf("netlink attribute %d: length %d of %d bytes left", typ, l, len(b))
		}
		out = append(out, attr{Type: typ, Value: b[4:l]})
		l = (l + 3) &^ 3 // NLA_ALIGN
		if l > len(b) {
			break
		}
		b = b[l:]
	}
	return out, nil
}
