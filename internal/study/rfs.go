package study

// rfsTablesWhy says why validateRFS wants both of RFS's tables.
const rfsTablesWhy = "RFS needs both tables, the host's socket flow table (sockFlowEntries, " +
	"net.core.rps_sock_flow_entries) and each receive queue's flow table (flowCnt, rps_flow_cnt): " +
	"with one alone the kernel steers no flow by it (32768 each suits a moderately loaded server)"

// validateRFS refuses an RFS with a table left out (0), naming it; a
// negative or oversized size is checkRFSBounds'. Both tables are needed
// (scaling.rst: "Both of these need to be set before RFS is enabled for
// a receive queue"): get_rps_cpu (net/core/dev.c) looks a flow up in the
// socket flow table only on a queue with a flow table ("if (flow_table
// && sock_flow_table)"), and otherwise falls back to the RPS map, if any.
// An RPS mask RFS does not need: get_rps_cpu gives up early only where a
// queue has neither ("if (!flow_table && !map) goto done"), and writing
// rps_sock_flow_entries turns on the rps_needed key that has it called;
// a flow no socket has read then stays on the CPU it came in on.
func validateRFS(field string, r RFS, bad badFunc) {
	switch {
	case r.SockFlowEntries == 0 && r.FlowCnt == 0:
		bad(field, "sockFlowEntries and flowCnt missing: %s", rfsTablesWhy)
	case r.SockFlowEntries == 0:
		bad(field+".sockFlowEntries", "missing: %s", rfsTablesWhy)
	case r.FlowCnt == 0:
		bad(field+".flowCnt", "missing: %s", rfsTablesWhy)
	}
}

// checkRFSBounds checks the sizes RFS gives; a size of 0 is a table left
// out, validateRFS's to report.
func checkRFSBounds(field string, r RFS, bad badFunc) {
	if r.SockFlowEntries != 0 {
		checkRange(field+".sockFlowEntries", r.SockFlowEntries, 1, MaxRFSEntries,
			"the kernel rounds it up to a power of two; 32768 suits a moderately loaded server", bad)
		checkPowerOfTwo(field+".sockFlowEntries", r.SockFlowEntries, bad)
	}
	if r.FlowCnt != 0 {
		checkRange(field+".flowCnt", r.FlowCnt, 1, MaxRFSEntries,
			"per receive queue, rounded up to a power of two by the kernel", bad)
		checkPowerOfTwo(field+".flowCnt", r.FlowCnt, bad)
	}
}
