package nftrace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLegacyTables(t *testing.T) {
	dir := t.TempDir()
	if err := CheckLegacy(dir); err != nil {
		t.Fatalf("no x_tables modules: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ip_tables_names"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckLegacy(dir); err != nil {
		t.Fatalf("module loaded, no table: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ip_tables_names"), []byte("nat\nfilter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ip6_tables_names"), []byte("filter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LegacyTables(dir)
	if err != nil || strings.Join(got, ",") != "ip nat,ip filter,ip6 filter" {
		t.Fatalf("LegacyTables = %q, %v", got, err)
	}
	if err := CheckLegacy(dir); err == nil || !strings.Contains(err.Error(), "ip nat, ip filter, ip6 filter") {
		t.Fatalf("CheckLegacy = %v, want the tables named", err)
	}
	// An unreadable file is an error, not "no tables" (root reads anyway).
	if os.Geteuid() != 0 {
		if err := os.Chmod(filepath.Join(dir, "ip_tables_names"), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := LegacyTables(dir); err == nil {
			t.Fatal("an unreadable ip_tables_names read as no tables")
		}
	}
}
