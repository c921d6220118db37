package advise

import (
	"strconv"
	"strings"

	"github.com/cnibench/cnibench/internal/advise/inspect"
)

// irqClass tells what a NIC's interrupt serves and the queue it serves:
// "rx" a receive queue only, "tx" a transmit queue only, "rxtx" both,
// "" neither (a control interrupt, or a vector no queue in use has);
// queue -1 where the name gives none. Names whose words say rx or tx
// (virtio's input.N/output.N, igb's eth0-rx-N/eth0-tx-N, eth0-TxRx-N,
// mlx5_comp, ena-io) are read by those words (keywordRole); the drivers
// below name queue vectors by number alone, so the kernel's naming, read
// in its request_irq/snprintf calls, says which is which:
//   - MANA (drivers/net/ethernet/microsoft/mana/gdma_main.c): "mana_q%d@pci:%s",
//     vector i+1 of the device, and mana_create_eq gives queue i msix_index i+1:
//     mana_qN is queue N's event queue, receive and transmit; vectors past the
//     port's queues serve none ("mana_hwc@pci:" is the control one).
//   - gve (drivers/net/ethernet/google/gve): "gve-ntfy-blk%d@pci:%s"; gve.h's
//     gve_tx_idx_to_ntfy is the queue's index and gve_rx_idx_to_ntfy
//     num_ntfy_blks/2 + index: the first half of the blocks are transmit, the
//     second receive; blocks past the queues in use serve none (gveClass).
//   - sfc (efx_get_channel_name): "%s%s-%d", the device's name, then "" for a
//     channel with both queues, "-rx"/"-tx" where they are split, "-xdp" for an
//     XDP transmit channel ("%s-ptp" has no queue number).
//   - tg3 (tg3_request_irq): "%s-txrx-%d", "%s-tx-%d", "%s-rx-%d", and "%s-%d"
//     only for a vector with neither ring (vector 0 under RSS): no queue.
//   - bnx2x and qede: "%s-fp-%d" per fastpath; qede_alloc_fp_array puts receive
//     fastpaths first, then combined, then transmit-only ones, so fp-N past the
//     receive queue count is transmit-only.
func irqClass(n *inspect.NIC, name string) (string, int) {
	if q, ok := numbered(name, "mana_q", "@pci:"); ok {
		if n.RxQueues > 0 && q >= n.RxQueues {
			return "", q
		}
		return "rxtx", q
	}
	if q, ok := numbered(name, "gve-ntfy-blk", "@pci:"); ok {
		return gveClass(n, q)
	}
	rest, own := strings.CutPrefix(name, n.Name+"-")
	if own {
		if q, ok := numbered(rest, "", ""); ok {
			if n.Driver == "tg3" {
				return "", -1
			}
			return "rxtx", q
		}
		if q, ok := numbered(rest, "xdp-", ""); ok {
			return "tx", q
		}
		if q, ok := numbered(rest, "fp-", ""); ok {
			if n.RxQueues > 0 && q >= n.RxQueues {
				return "tx", -1
			}
			return "rxtx", q
		}
	}
	return keywordRole(name), irqQueue(name)
}

// numbered reads "<prefix><N><suffix>..." (suffix "" for nothing after N).
func numbered(name, prefix, suffix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	digits := rest
	if suffix != "" {
		var found bool
		if digits, _, found = strings.Cut(rest, suffix); !found {
			return 0, false
		}
	}
	q, err := strconv.Atoi(digits)
	return q, err == nil && q >= 0 && digits != "" && digits[0] != '+' && digits[0] != '-'
}

// gveClass is the role and queue of gve's notify block q. gve asks for
// a vector per block at probe and keeps them all when there are fewer
// queues (gve_init_priv takes the default or fewer, ethtool -L lowers
// them later): a block past the port's queue count on its half serves
// no queue, as MANA's vectors past its queues do.
func gveClass(n *inspect.NIC, q int) (string, int) {
	half := gveBlocks(n) / 2
	role, count := "tx", n.TxQueues
	if q >= half {
		role, count, q = "rx", n.RxQueues, q-half
	}
	if count > 0 && q >= count {
		return "", q
	}
	return role, q
}

// gveBlocks is how many notify blocks a gve NIC has: its
// gve-ntfy-blk interrupts.
func gveBlocks(n *inspect.NIC) int {
	c := 0
	for _, q := range n.IRQs {
		if _, ok := numbered(q.Name, "gve-ntfy-blk", "@pci:"); ok {
			c++
		}
	}
	return c
}

// irqRole is irqClass's role alone.
func irqRole(n *inspect.NIC, name string) string {
	r, _ := irqClass(n, name)
	return r
}

// keywordRole reads the role from the name's words: "rx" a receive
// queue only (virtio's input.N, igb's eth0-rx-N), "tx" a transmit queue
// only (output.N, eth0-tx-N), "rxtx" both (eth0-TxRx-N, mlx5_comp,
// ena-io), "" none (the device's control interrupt).
func keywordRole(name string) string {
	if !isQueueIRQ(name) {
		return ""
	}
	n := strings.ToLower(name)
	rx := strings.Contains(n, "rx") || strings.Contains(n, "input")
	tx := strings.Contains(n, "tx") || strings.Contains(n, "output")
	switch {
	case rx && !tx:
		return "rx"
	case tx && !rx:
		return "tx"
	}
	return "rxtx"
}

// isQueueIRQ tells a queue's interrupt ("eth0-TxRx-3", "mlx5_comp3@...",
// "virtio2-input.0", "ena-io-1") from a NIC's control ones ("eth0",
// "mlx5_async0", "virtio2-config").
func isQueueIRQ(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"rx", "tx", "comp", "input", "output", "queue", "-io-"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}
