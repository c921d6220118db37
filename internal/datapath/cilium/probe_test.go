package cilium

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/probe"
)

// objectNeeds reads, from the embedded object's specification (no
// kernel), the helpers its programs call and the map types it creates,
// and what of it probe.CiliumBPF does not try: programs of another type,
// BPF-to-BPF calls and kfuncs, loops (bounded loops, Linux 5.3), and
// writable global variables (.data, .bss).
func objectNeeds(t *testing.T) (helpers map[asm.BuiltinFunc]bool, mapTypes map[ebpf.MapType]bool, untried []string) {
	t.Helper()
	spec, err := loadBpf()
	if err != nil {
		t.Fatal(err)
	}
	helpers, mapTypes = map[asm.BuiltinFunc]bool{}, map[ebpf.MapType]bool{}
	for name, p := range spec.Programs {
		if p.Type != ebpf.SchedCLS {
			untried = append(untried, fmt.Sprintf("program %s is of type %s, not a tc (SchedCLS) program", name, p.Type))
		}
		for i, ins := range p.Instructions {
			switch {
			case ins.IsBuiltinCall():
				helpers[asm.BuiltinFunc(ins.Constant)] = true
			case ins.IsFunctionCall(), ins.IsKfuncCall():
				untried = append(untried, fmt.Sprintf("program %s, instruction %d: a BPF-to-BPF call or kfunc (%v)", name, i, ins))
			}
		}
		if at, ok := loop(p.Instructions); ok {
			untried = append(untried, fmt.Sprintf("program %s: a loop, back to raw instruction %d", name, at))
		}
	}
	for name, m := range spec.Maps {
		mapTypes[m.Type] = true
		if strings.HasPrefix(name, ".") && name != ".rodata" {
			untried = append(untried, "global variables in "+name+" (writable, mmapable maps)")
		}
	}
	return helpers, mapTypes, untried
}

// loop finds a cycle in the program's control flow, as kernels before
// 5.3 refuse it ("back-edge from insn"), and returns where it goes back
// to. A jump backwards in the text is no loop by itself: the compiler
// lays blocks out in any order.
func loop(insns asm.Instructions) (int, bool) {
	var raw []asm.RawInstructionOffset
	succ := map[asm.RawInstructionOffset][]asm.RawInstructionOffset{}
	for it := insns.Iterate(); it.Next(); {
		at, ins := it.Offset, it.Ins
		raw = append(raw, at)
		next := at + asm.RawInstructionOffset(ins.Size()/asm.InstructionSize)
		switch op := ins.OpCode.JumpOp(); {
		case op == asm.Exit:
		case op == asm.Ja:
			succ[at] = []asm.RawInstructionOffset{at + 1 + asm.RawInstructionOffset(ins.Offset)}
		case op != asm.InvalidJumpOp && op != asm.Call:
			succ[at] = []asm.RawInstructionOffset{next, at + 1 + asm.RawInstructionOffset(ins.Offset)}
		default:
			succ[at] = []asm.RawInstructionOffset{next}
		}
	}
	const (
		unseen = iota
		onPath
		done
	)
	state := map[asm.RawInstructionOffset]int{}
	var visit func(at asm.RawInstructionOffset) (int, bool)
	visit = func(at asm.RawInstructionOffset) (int, bool) {
		state[at] = onPath
		for _, w := range succ[at] {
			switch state[w] {
			case onPath:
				return int(w), true
			case unseen:
				if back, ok := visit(w); ok {
					return back, true
				}
			}
		}
		state[at] = done
		return 0, false
	}
	if len(raw) == 0 {
		return 0, false
	}
	return visit(raw[0])
}

// TestProbeTriesWhatTheObjectUses: cls_bpf's probe loads two instructions,
// which a 5.4 kernel takes; the object calls bpf_redirect_peer (5.10)
// and the verifier refused it when the run built the datapath, which
// ended the whole study. Preflight now asks probe.CiliumBPF, and that
// probe must try exactly what the object uses: no helper or map type
// more (it would refuse kernels that run the datapath) or less.
func TestProbeTriesWhatTheObjectUses(t *testing.T) {
	if !slices.Contains(New().Features(), probe.CiliumBPF) {
		t.Errorf("Features %v: no %s, so a kernel without bpf_redirect_peer passes preflight", New().Features(), probe.CiliumBPF)
	}
	helpers, mapTypes, untried := objectNeeds(t)
	for _, u := range untried {
		t.Errorf("the object uses what probe.CiliumBPF does not try: %s; add it to the probe (internal/probe/ciliumbpf.go)", u)
	}
	name := func(fns []asm.BuiltinFunc) []string {
		var out []string
		for _, fn := range fns {
			out = append(out, probe.HelperName(fn))
		}
		return out
	}
	used, tried := slices.Sorted(maps.Keys(helpers)), slices.Sorted(maps.Keys(probe.CiliumBPFHelpers))
	if !slices.Equal(used, tried) {
		t.Errorf("the object calls %v; probe.CiliumBPFHelpers tries %v", name(used), name(tried))
	}
	if ut, tt := slices.Sorted(maps.Keys(mapTypes)), slices.Sorted(maps.Keys(probe.CiliumBPFMaps)); !slices.Equal(ut, tt) {
		t.Errorf("the object creates maps of types %v; probe.CiliumBPFMaps tries %v", ut, tt)
	}
}

// loop must be able to fail: a jump back to the first instruction is a
// loop, a jump back to an exit is not.
func TestLoop(t *testing.T) {
	back := asm.Instructions{
		asm.Mov.Imm(asm.R0, 0),
		{OpCode: asm.Ja.Op(asm.ImmSource), Offset: 1},
		asm.Return(),
		{OpCode: asm.Ja.Op(asm.ImmSource), Offset: -2},
	}
	if _, ok := loop(back); ok {
		t.Error("a backward jump to an exit taken for a loop")
	}
	cycle := asm.Instructions{
		asm.Mov.Imm(asm.R0, 0),
		{OpCode: asm.JEq.Op(asm.ImmSource), Dst: asm.R0, Offset: 1},
		asm.Return(),
		{OpCode: asm.Ja.Op(asm.ImmSource), Offset: -4},
	}
	if at, ok := loop(cycle); !ok || at != 0 {
		t.Errorf("a jump back to the first instruction: %d %v, want a loop back to 0", at, ok)
	}
}

func TestHelperName(t *testing.T) {
	for fn, want := range map[asm.BuiltinFunc]string{
		asm.FnRedirectPeer:    "bpf_redirect_peer",
		asm.FnL3CsumReplace:   "bpf_l3_csum_replace",
		asm.FnGetPrandomU32:   "bpf_get_prandom_u32",
		asm.FnSkbSetTunnelKey: "bpf_skb_set_tunnel_key",
	} {
		if got := probe.HelperName(fn); got != want {
			t.Errorf("HelperName(%v) = %q, want %q", fn, got, want)
		}
	}
}

// TestObjectLoadsWhereProbed (root): where probe.CiliumBPF finds the
// kernel has what the object uses, the object loads (the verifier takes
// it); where not, the test skips with the probe's reason. A failure
// here is a probe that lets through a kernel the datapath fails on.
func TestObjectLoadsWhereProbed(t *testing.T) {
	kerneltest.RequireRoot(t)
	if ok, why := probe.Has(probe.CiliumBPF); !ok {
		t.Skipf("skipped: %s", why)
	}
	spec, err := loadBpf()
	if err != nil {
		t.Fatal(err)
	}
	var objs bpfObjects
	if err := spec.LoadAndAssign(&objs, nil); err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			t.Fatalf("probe.CiliumBPF passed, but the object does not load: %+v", ve)
		}
		t.Fatalf("probe.CiliumBPF passed, but the object does not load: %v", err)
	}
	objs.Close()
}
