package probe

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"
)

// What the cilium datapath's tc BPF object (internal/datapath/cilium,
// bpf/cilium.c) asks of the kernel beyond attaching a tc program
// (ClsBPF): the helpers its programs call, the map types it creates and
// read-only global variables. cls_bpf's two-instruction program passes
// on kernels where that object fails the verifier (bpf_redirect_peer
// came in Linux 5.10), and a run found out only when it built the
// datapath, mid-study. The object itself lives above this package; the
// datapath's tests check that it needs nothing these lists leave out.
var (
	// CiliumBPFHelpers are the helpers the object's programs call, with
	// the release that gave them to tc (SchedCLS) programs.
	CiliumBPFHelpers = map[asm.BuiltinFunc]string{
		asm.FnMapLookupElem:   "3.19",
		asm.FnMapUpdateElem:   "3.19",
		asm.FnMapDeleteElem:   "3.19",
		asm.FnGetPrandomU32:   "4.1",
		asm.FnSkbStoreBytes:   "4.1",
		asm.FnL3CsumReplace:   "4.1",
		asm.FnL4CsumReplace:   "4.1",
		asm.FnSkbSetTunnelKey: "4.3",
		asm.FnRedirect:        "4.4",
		asm.FnSkbChangeType:   "4.8",
		asm.FnRedirectPeer:    "5.10",
	}
	// CiliumBPFMaps are the map types the object creates, with the
	// release that added each.
	CiliumBPFMaps = map[ebpf.MapType]string{
		ebpf.Hash:        "3.19",
		ebpf.Array:       "3.19",
		ebpf.PerCPUArray: "4.6",
		ebpf.LRUHash:     "4.10",
		ebpf.LPMTrie:     "4.11",
	}
)

// CiliumBPFGlobals is the release that gave BPF programs read-only
// global variables (a frozen .rodata map read by value,
// BPF_PSEUDO_MAP_VALUE), which the object's volatile const
// vxlan_ifindex and vni are.
const CiliumBPFGlobals = "5.2"

// tryCiliumBPF asks the kernel for each helper and map type the cilium
// datapath's object uses and loads a tc program that reads a read-only
// global variable, naming whatever is missing with the release that
// added it. Loading programs and creating maps changes nothing outside
// this process; nothing is attached.
// Equivalent to: bpftool feature probe kernel (the helpers of
// sched_cls, the map types), then loading a program that reads .rodata.
func (s *scratch) tryCiliumBPF() (bool, string) {
	var missing []string
	for _, fn := range slices.Sorted(maps.Keys(CiliumBPFHelpers)) {
		err := features.HaveProgramHelper(ebpf.SchedCLS, fn)
		switch {
		case errors.Is(err, ebpf.ErrNotSupported):
			missing = append(missing, fmt.Sprintf("helper %s (Linux %s)", HelperName(fn), CiliumBPFHelpers[fn]))
		case err != nil:
			return false, bpfLoadFailed(err)
		}
	}
	for _, mt := range slices.Sorted(maps.Keys(CiliumBPFMaps)) {
		err := features.HaveMapType(mt)
		switch {
		case errors.Is(err, ebpf.ErrNotSupported):
			missing = append(missing, fmt.Sprintf("map type %s (Linux %s)", mt, CiliumBPFMaps[mt]))
		case err != nil:
			return false, bpfLoadFailed(err)
		}
	}
	switch err := haveGlobalData(); {
	case errors.Is(err, ebpf.ErrNotSupported), errors.Is(err, unix.EINVAL):
		missing = append(missing, "read-only global variables (Linux "+CiliumBPFGlobals+")")
	case err != nil:
		return false, bpfLoadFailed(err)
	}
	if len(missing) > 0 {
		return false, "this kernel lacks what the cilium datapath's tc BPF programs use: " + strings.Join(missing, ", ") +
			"; the verifier would refuse them when the datapath is built"
	}
	return true, ""
}

// haveGlobalData loads a tc program that reads a frozen read-only array
// map by value, as a compiled program reads a volatile const (.rodata).
// Equivalent to: bpftool map create ... flags 0x80 (BPF_F_RDONLY_PROG);
// bpftool map freeze; a program loading the map value's address.
func haveGlobalData() error {
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name: "cnbprobe", Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1,
		Flags: unix.BPF_F_RDONLY_PROG,
	})
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Freeze(); err != nil {
		return err
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:    "cnbprobe",
		Type:    ebpf.SchedCLS,
		License: "Apache-2.0",
		Instructions: asm.Instructions{
			asm.LoadMapValue(asm.R1, m.FD(), 0),
			asm.LoadMem(asm.R0, asm.R1, 0, asm.Word),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	})
	if err != nil {
		return err
	}
	return prog.Close()
}

// HelperName is a helper's C name: asm.FnRedirectPeer is bpf_redirect_peer.
func HelperName(fn asm.BuiltinFunc) string {
	var b strings.Builder
	b.WriteString("bpf")
	for _, r := range strings.TrimPrefix(fn.String(), "Fn") {
		if unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
