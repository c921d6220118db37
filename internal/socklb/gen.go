package socklb

// The BPF programs are compiled once and the output (bpf_bpfel.go,
// bpf_bpfel.o) is committed, so building cnibench needs no clang.
// Regenerate after editing bpf/socklb.c (needs clang-14 and libbpf-dev):
//
//	go generate ./internal/socklb/
//
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang-14 -cflags "-O2 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu -I../lbmap" -target bpfel bpf bpf/socklb.c
