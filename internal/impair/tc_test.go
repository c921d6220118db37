package impair

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vishvananda/netlink/nl"
)

// TestEncodingMatchesTC compares options() with the requests iproute2's
// tc (6.1) sends. Each testdata/tc/N.txt is "# <netem arguments>" and the
// RTM_NEWQDISC message of
//
//	TC_LIB_DIR=testdata tc qdisc add dev v0 root handle cb1: netem <arguments>
//
// captured with strace -e write=all (the kernel there lacked netem; the
// request is what matters). The fixed struct and every attribute tc sends
// (the distribution table, the nested Gilbert-Elliott model, RATE64...)
// must be byte for byte ours; ours adds the 64-bit delay and jitter and a
// correlation attribute of zeros, which the kernel reads as tc's.
func TestEncodingMatchesTC(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "tc", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured tc requests: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		head, hx, _ := strings.Cut(string(b), "\n")
		args := strings.TrimPrefix(head, "# ")
		msg, err := hex.DecodeString(strings.TrimSpace(hx))
		if err != nil || len(msg) < 36 || int(binary.LittleEndian.Uint32(msg)) != len(msg) {
			t.Fatalf("%s: bad capture (%v)", f, err)
		}
		tcOpts := attrMap(t, msg[16+nl.SizeofTcMsg:])[nl.TCA_OPTIONS]
		s, err := Parse(args)
		if err != nil {
			t.Fatalf("Parse(%q): %v", args, err)
		}
		o, err := s.options()
		if err != nil {
			t.Fatal(err)
		}
		ours := o.Serialize()[4:]
		if !bytes.Equal(tcOpts[:sizeofQopt], ours[:sizeofQopt]) {
			t.Errorf("%s: struct tc_netem_qopt: tc %x, ours %x", args, tcOpts[:sizeofQopt], ours[:sizeofQopt])
		}
		theirs, mine := attrMap(t, tcOpts[sizeofQopt:]), attrMap(t, ours[sizeofQopt:])
		for typ, v := range theirs {
			if !bytes.Equal(mine[typ], v) {
				t.Errorf("%s: attribute %d: tc %d bytes %.40x, ours %d bytes %.40x", args, typ, len(v), v, len(mine[typ]), mine[typ])
			}
		}
		for typ, v := range mine {
			if _, ok := theirs[typ]; ok {
				continue
			}
			extra := typ == tcaNetemLatency64 || typ == tcaNetemJitter64 || typ == nl.TCA_NETEM_CORR && bytes.Equal(v, make([]byte, 12))
			if !extra {
				t.Errorf("%s: ours adds attribute %d = %x", args, typ, v)
			}
		}
		k, err := decode(tcOpts)
		if err != nil || k != s.Kernel() {
			t.Errorf("%s: tc's request decodes to %+v (%v), ours is %+v", args, k, err, s.Kernel())
		}
	}
}

func attrMap(t *testing.T, b []byte) map[uint16][]byte {
	t.Helper()
	as, err := nl.ParseRouteAttr(b)
	if err != nil {
		t.Fatal(err)
	}
	m := map[uint16][]byte{}
	for _, a := range as {
		m[a.Attr.Type] = a.Value
	}
	return m
}
