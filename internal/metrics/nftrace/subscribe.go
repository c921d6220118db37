package nftrace

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cnibench/cnibench/internal/journal"
)

// The monitor must have joined the trace group before the first packet
// is marked: a marked packet nobody listens for is not reported, and a
// connection's first packet, the only one the nat chains see, comes
// right after. nft joins the group only once it has read the whole
// ruleset (to name the rules it reports), which on a node with many
// Services takes seconds, so Start waits for the membership itself:
// /proc/PID/net/netlink lists each netlink socket of the monitor's
// namespace with its inode and its groups.
const (
	protoNetfilter = 12           // NETLINK_NETFILTER
	traceGroupBit  = 1 << (9 - 1) // NFNLGRP_NFTRACE (9) in the Groups column
	subscribeLimit = time.Minute
	subscribePoll  = 10 * time.Millisecond
)

// Subscribed says whether netlink (the text of /proc/net/netlink) lists a
// NETLINK_NETFILTER socket among inodes that is in the trace group.
func Subscribed(netlink io.Reader, inodes map[uint64]bool) (bool, error) {
	s := bufio.NewScanner(netlink)
	for s.Scan() {
		// sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
		f := strings.Fields(s.Text())
		if len(f) < 10 || f[0] == "sk" {
			continue
		}
		eth, err1 := strconv.Atoi(f[1])
		groups, err2 := strconv.ParseUint(f[3], 16, 32)
		inode, err3 := strconv.ParseUint(f[9], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return false, fmt.Errorf("netlink sockets: line %q does not parse", s.Text())
		}
		if eth == protoNetfilter && groups&traceGroupBit != 0 && inodes[inode] {
			return true, nil
		}
	}
	return false, s.Err()
}

// socketInodes lists the inodes of the sockets process pid has open.
func socketInodes(pid int) (map[uint64]bool, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[uint64]bool{}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		if n, ok := strings.CutPrefix(l, "socket:["); ok {
			if v, err := strconv.ParseUint(strings.TrimSuffix(n, "]"), 10, 64); err == nil {
				out[v] = true
			}
		}
	}
	return out, nil
}

// waitSubscribed returns once process pid (nft monitor trace) has joined
// the trace group, or an error when it exits or takes longer than limit.
func waitSubscribed(pid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if _, err := journal.ProcessStart(pid); err != nil {
			return fmt.Errorf("nft monitor trace exited before it joined the trace group: %w", err)
		}
		inodes, err := socketInodes(pid)
		if err == nil && len(inodes) > 0 {
			nl, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "net", "netlink"))
			if err != nil {
				return fmt.Errorf("nft monitor trace: %w", err)
			}
			ok, err := Subscribed(bytes.NewReader(nl), inodes)
			if err != nil || ok {
				return err
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nft monitor trace did not join the trace group within %v (reading the ruleset?)", limit)
		}
		time.Sleep(subscribePoll)
	}
}
