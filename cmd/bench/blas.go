package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Which BLAS a process runs on. Debian's python3-torch is linked against libblas.so.3, which
// Debian's alternatives point at whichever BLAS is installed: the reference (netlib) BLAS of
// libblas3, which python3-torch pulls in, unless an optimized one such as libopenblas0 is
// installed too. Nothing in torch says which: torch.__config__.show() gives the build's
// "BLAS_INFO=generic". So each side reports the BLAS libraries in its memory map, where the kernel
// shows the file the dynamic linker actually opened, symbolic links resolved.

// blasName matches the file names of BLAS libraries, loosely: blasKind sorts them out.
var blasName = regexp.MustCompile(`blas|mkl|blis|atlas`)

// mappedBLAS lists the BLAS libraries in maps, the text of a /proc/PID/maps file, each path once,
// in the order they appear.
func mappedBLAS(maps string) []string {
	var libs []string
	for _, line := range strings.Split(maps, "\n") {
		// address perms offset dev inode [path]; the path may hold spaces.
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		path := strings.Join(f[5:], " ")
		if strings.HasPrefix(path, "/") && blasName.MatchString(filepath.Base(path)) && !slices.Contains(libs, path) {
			libs = append(libs, path)
		}
	}
	return libs
}

// selfBLAS lists the BLAS libraries this process has mapped: OpenBLAS's with -tags openblas,
// none for the Go kernels.
func selfBLAS() []string {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil
	}
	return mappedBLAS(string(b))
}

// blasKind names the BLAS that libs, paths of mapped BLAS libraries, are: "openblas", "mkl",
// "blis", "atlas", "flexiblas" or "reference" (netlib's, which Debian installs as
// /usr/lib/<triplet>/blas/libblas.so.3), several joined by "+" in that order, "unknown" for a
// library it does not know, and "" for none.
func blasKind(libs []string) string {
	found := map[string]bool{}
	for _, p := range libs {
		base := filepath.Base(p)
		switch {
		case strings.Contains(p, "openblas"):
			found["openblas"] = true
		case strings.HasPrefix(base, "libmkl"):
			found["mkl"] = true
		case strings.Contains(p, "blis"):
			found["blis"] = true
		case strings.Contains(p, "atlas"):
			found["atlas"] = true
		case strings.Contains(base, "flexiblas"):
			found["flexiblas"] = true
		case strings.HasPrefix(base, "libblas.so") && filepath.Base(filepath.Dir(p)) == "blas":
			found["reference"] = true
		default:
			found["unknown"] = true
		}
	}
	var kinds []string
	for _, k := range []string{"openblas", "mkl", "blis", "atlas", "flexiblas", "reference", "unknown"} {
		if found[k] {
			kinds = append(kinds, k)
		}
	}
	return strings.Join(kinds, "+")
}

// torchBLAS names the BLAS torch_ref.py reported: the libraries it had mapped, or, when it had
// none (a torch with its BLAS linked in, as pip's wheels have MKL), its build's BLAS_INFO; and it
// refuses the reference BLAS, against which any ratio would flatter ours.
func torchBLAS(libs []string, build string) (string, error) {
	kind := blasKind(libs)
	switch {
	case strings.Contains(kind, "reference"):
		return kind, fmt.Errorf("PyTorch runs on the reference BLAS (%s), so a ratio would flatter ours: install an optimized one (apt-get install libopenblas0) and run again", strings.Join(libs, ", "))
	case kind == "" && build != "":
		return "built in (" + build + ")", nil
	case kind == "":
		return "unknown", nil
	}
	return kind, nil
}
