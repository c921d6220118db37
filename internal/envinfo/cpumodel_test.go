package envinfo

import (
	"strings"
	"testing"
)

// Excerpts of /proc/cpuinfo as kernels print them (tabs as printed).
const (
	xeonCPUInfo = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n" +
		"model name\t: Intel(R) Xeon(R) Gold 6138 CPU @ 2.00GHz\nstepping\t: 4\nmicrocode\t: 0x2006906\n" +
		"cpu MHz\t\t: 2000.000\ncache size\t: 28160 KB\nflags\t\t: fpu vme de pse tsc msr pae mce cx8\n" +
		"bogomips\t: 4000.00\naddress sizes\t: 46 bits physical, 48 bits virtual\npower management:\n\n" +
		"processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n" +
		"model name\t: Intel(R) Xeon(R) Gold 6138 CPU @ 2.00GHz\nstepping\t: 4\n\n"
	// Ampere Altra: Neoverse-N1 cores, no model name.
	altraCPUInfo = "processor\t: 0\nBogoMIPS\t: 50.00\n" +
		"Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\n" +
		"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n" +
		"processor\t: 1\nBogoMIPS\t: 50.00\n" +
		"Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp ssbs\n" +
		"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n"
	// RK3399, big.LITTLE: Cortex-A53 (CPUs 0-3) and Cortex-A72 (4-5).
	rk3399CPUInfo = "processor\t: 0\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid\n" +
		"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n\n" +
		"processor\t: 4\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 cpuid\n" +
		"CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 2\n\n"
	// A 32-bit ARM kernel (Raspberry Pi 3) prints a model name as well.
	rpiCPUInfo = "processor\t: 0\nmodel name\t: ARMv7 Processor rev 4 (v7l)\nBogoMIPS\t: 38.40\n" +
		"Features\t: half thumb fastmult vfp edsp neon vfpv3 tls vfpv4 idiva idivt vfpd32 lpae evtstrm crc32\n" +
		"CPU implementer\t: 0x41\nCPU architecture: 7\nCPU variant\t: 0x0\nCPU part\t: 0xd03\nCPU revision\t: 4\n\n" +
		"Hardware\t: BCM2835\nRevision\t: a02082\nModel\t\t: Raspberry Pi 3 Model B Rev 1.2\n"
)

// TestParseCPUModel: env.json's CPU model. arm64 prints no model name;
// it used to be recorded as "", so two arm64 machines looked alike.
func TestParseCPUModel(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"x86", xeonCPUInfo, "Intel(R) Xeon(R) Gold 6138 CPU @ 2.00GHz"},
		{"arm64", altraCPUInfo, "CPU implementer 0x41 part 0xd0c"},
		{"arm64 big.LITTLE", rk3399CPUInfo, "CPU implementer 0x41 part 0xd03, CPU implementer 0x41 part 0xd08"},
		{"arm32", rpiCPUInfo, "ARMv7 Processor rev 4 (v7l)"},
		{"empty model name", "model name\t:\n" + altraCPUInfo, "CPU implementer 0x41 part 0xd0c"},
		{"nothing", "processor\t: 0\nBogoMIPS\t: 50.00\n", ""},
		{"empty", "", ""},
	} {
		if got := parseCPUModel(strings.NewReader(tc.in)); got != tc.want {
			t.Errorf("%s: parseCPUModel = %q, want %q", tc.name, got, tc.want)
		}
	}
}
