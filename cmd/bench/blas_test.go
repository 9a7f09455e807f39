package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"extrapolate/internal/cmdtest"
	"extrapolate/internal/gemm"
)

// Lines of /proc/PID/maps of Debian 12's python3-torch 1.13, with the reference BLAS (libblas3
// alone) and with libopenblas0-pthread installed, and of a Go binary built with -tags openblas.
const (
	mapsReference = `7f0e1c000000-7f0e1c021000 rw-p 00000000 00:00 0 
7f0e2a2d0000-7f0e2a2db000 r--p 00000000 08:01 1316934                    /usr/lib/x86_64-linux-gnu/lapack/liblapack.so.3.11.0
7f0e2a3e0000-7f0e2a3e5000 r--p 00000000 08:01 1316926                    /usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0
7f0e2a3e5000-7f0e2a43c000 r-xp 00005000 08:01 1316926                    /usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0
7f0e2a500000-7f0e2a520000 r-xp 00000000 08:01 1316811                    /usr/lib/x86_64-linux-gnu/libgomp.so.1.0.0
7ffd1b7e0000-7ffd1b801000 rw-p 00000000 00:00 0                          [stack]
`
	mapsOpenBLAS = `7f3b40000000-7f3b40600000 r-xp 00000000 08:01 1317004                    /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3
7f3b40600000-7f3b40800000 r--p 00600000 08:01 1317004                    /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3
7f3b41000000-7f3b41100000 r-xp 00000000 08:01 1317005                    /usr/lib/x86_64-linux-gnu/openblas-pthread/liblapack.so.3
`
	mapsGoOpenBLAS = `7f1c2c000000-7f1c2e000000 r-xp 00000000 08:01 1317001                    /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0
7f1c2e200000-7f1c2e300000 r-xp 00000000 08:01 1316820                    /usr/lib/x86_64-linux-gnu/libgfortran.so.5.0.0
`
)

func TestMappedBLAS(t *testing.T) {
	for _, c := range []struct {
		maps string
		want []string
	}{
		{mapsReference, []string{"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"}},
		{mapsOpenBLAS, []string{"/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"}},
		{mapsGoOpenBLAS, []string{"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"}},
		{"", nil},
		{"not a maps line\n7f00-7f01 r-xp 00000000 08:01 1 /opt/my libs/libmkl_rt.so.2\n", []string{"/opt/my libs/libmkl_rt.so.2"}},
	} {
		if got := mappedBLAS(c.maps); !slices.Equal(got, c.want) {
			t.Errorf("mappedBLAS(%.60q...) = %q, want %q", c.maps, got, c.want)
		}
	}
}

func TestBLASKind(t *testing.T) {
	for _, c := range []struct {
		libs []string
		want string
	}{
		{[]string{"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"}, "reference"},
		{[]string{"/usr/lib/aarch64-linux-gnu/blas/libblas.so.3"}, "reference"},
		{[]string{"/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"}, "openblas"},
		{[]string{"/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3"}, "openblas"},
		{[]string{"/usr/lib/x86_64-linux-gnu/libopenblas.so.0"}, "openblas"},
		{[]string{"/usr/lib/x86_64-linux-gnu/blis-pthread/libblas.so.3"}, "blis"},
		{[]string{"/usr/lib/x86_64-linux-gnu/atlas/libblas.so.3"}, "atlas"},
		{[]string{"/opt/intel/lib/libmkl_rt.so.2"}, "mkl"},
		{[]string{"/usr/lib/x86_64-linux-gnu/libflexiblas.so.3"}, "flexiblas"},
		// Debian's generic link, were it ever shown unresolved: it could be any of them.
		{[]string{"/usr/lib/x86_64-linux-gnu/libblas.so.3"}, "unknown"},
		{[]string{"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", "/usr/lib/x86_64-linux-gnu/libopenblas.so.0"}, "openblas+reference"},
		{nil, ""},
	} {
		if got := blasKind(c.libs); got != c.want {
			t.Errorf("blasKind(%q) = %q, want %q", c.libs, got, c.want)
		}
	}
}

// TestTorchBLAS checks that the reference BLAS is refused, alone or beside another (which of them
// serves torch's products is then anyone's guess), with one line naming the package to install.
func TestTorchBLAS(t *testing.T) {
	for _, c := range []struct {
		libs   []string
		build  string
		want   string
		refuse bool
	}{
		{mappedBLAS(mapsReference), "BLAS_INFO=generic", "reference", true},
		{[]string{"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", "/usr/lib/x86_64-linux-gnu/libopenblas.so.0"}, "", "openblas+reference", true},
		{mappedBLAS(mapsOpenBLAS), "BLAS_INFO=generic", "openblas", false},
		{nil, "BLAS_INFO=mkl", "built in (BLAS_INFO=mkl)", false},
		{nil, "", "unknown", false},
	} {
		got, err := torchBLAS(c.libs, c.build)
		if got != c.want || (err != nil) != c.refuse {
			t.Errorf("torchBLAS(%q, %q) = %q, %v; want %q, refused %v", c.libs, c.build, got, err, c.want, c.refuse)
		}
		if err != nil && (!strings.Contains(err.Error(), "apt-get install libopenblas0") || strings.Contains(err.Error(), "\n")) {
			t.Errorf("torchBLAS(%q): %q, want one line naming libopenblas0", c.libs, err)
		}
	}
}

// TestTorchRefusesReferenceBLAS runs -torch against a stand-in for torch_ref.py that reports the
// libraries given, so that no torch is needed: on the reference BLAS no ratio is printed and the
// command fails; on OpenBLAS the ratio comes with both sides' BLAS.
func TestTorchRefusesReferenceBLAS(t *testing.T) {
	dir := t.TempDir()
	fake := func(lib string) string {
		out := map[string]any{"tokens_per_s": 1000.0, "step_ms_median": 2.0, "peak_rss_MB": 100.0,
			"loss_first": 4.5, "loss_last": 4.4, "blas_libs": []string{lib}, "blas_build": "BLAS_INFO=generic", "blas_core": "Haswell"}
		b, _ := json.Marshal(out)
		path := filepath.Join(dir, filepath.Base(filepath.Dir(lib))+".sh")
		if err := os.WriteFile(path, []byte("echo '"+string(b)+"'\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	args := []string{"-config", "tiny", "-steps", "6", "-rounds", "1", "-torch", "-python", "/bin/sh", "-script"}

	code, stdout, stderr := cmdtest.Run(t, binary, "", append(args, fake("/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"))...)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; code != 1 || stdout != "" || !strings.Contains(last, "reference BLAS") || !strings.Contains(last, "libopenblas0") {
		t.Errorf("reference BLAS: exit %d, stdout %q, stderr %q; want 1, nothing printed, and a last line naming libopenblas0", code, stdout, stderr)
	}

	code, stdout, stderr = cmdtest.Run(t, binary, "", append(args, fake("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"))...)
	var sum map[string]any
	if err := json.Unmarshal([]byte(stdout), &sum); code != 0 || err != nil {
		t.Fatalf("OpenBLAS: exit %d, stdout %q (%v), stderr %q; want 0 and a JSON summary", code, stdout, err, stderr)
	}
	if sum["torch_blas"] != "openblas" || sum["go_blas"] == nil || sum["ratio_tokens_per_s"] == nil {
		t.Errorf("OpenBLAS: summary %s; want torch_blas openblas, go_blas and the ratio", stdout)
	}
	// Both sides' kernels: OpenBLAS's as the script reports it, ours as package gemm runs here.
	if sum["torch_blas_core"] != "Haswell" || str(sum["go_kernel"]) != gemm.Kernel() {
		t.Errorf("OpenBLAS: summary %s; want torch_blas_core Haswell and go_kernel %q", stdout, gemm.Kernel())
	}
	if k := gemm.Kernel(); k != "" && !strings.Contains(stderr, "kernels: ours "+k+", OpenBLAS Haswell") {
		t.Errorf("OpenBLAS: stderr %q names no kernels", stderr)
	}
}

// TestTorchPassesFlags runs -torch against a stand-in for torch_ref.py that records its
// arguments: -warmup reaches both sides and -stock-ops the Go side, and the summary says what
// was measured (mode, scheme, stock ops, warmup, steps).
func TestTorchPassesFlags(t *testing.T) {
	dir := t.TempDir()
	out := map[string]any{"tokens_per_s": 1000.0, "step_ms_median": 2.0, "peak_rss_MB": 100.0,
		"loss_first": 4.5, "loss_last": 4.4, "blas_libs": []string{"/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"}}
	b, _ := json.Marshal(out)
	args := filepath.Join(dir, "args")
	script := filepath.Join(dir, "torch_ref.sh")
	if err := os.WriteFile(script, []byte("echo \"$@\" > "+args+"\necho '"+string(b)+"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cmdtest.Run(t, binary, "", "-config", "tiny", "-steps", "5", "-warmup", "2", "-stock-ops", "-rounds", "1", "-torch", "-python", "/bin/sh", "-script", script)
	var sum map[string]any
	if err := json.Unmarshal([]byte(stdout), &sum); code != 0 || err != nil {
		t.Fatalf("exit %d, stdout %q (%v), stderr %q; want 0 and a JSON summary", code, stdout, err, stderr)
	}
	want := map[string]any{"mode": "train", "scheme": "learned", "stock_ops": true, "go_impl": "gorgonia-stock-ops", "warmup": 2.0, "steps": 5.0}
	for k, v := range want {
		if sum[k] != v {
			t.Errorf("summary %s = %v, want %v", k, sum[k], v)
		}
	}
	got, err := os.ReadFile(args)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "--steps 5 --warmup 2") {
		t.Errorf("torch_ref.py was run with %q, want --steps 5 --warmup 2", got)
	}
}
