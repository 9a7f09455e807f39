package training

import (
	"bufio"
	"os"
	"strings"

	"golang.org/x/sys/cpu"
)

// cpuName names the processor as /proc/cpuinfo does, with the widest vector extension the
// matrix product uses (timings differ between AVX-512 and AVX2, and GODEBUG=cpu.avx512f=off
// turns the first off); "" where /proc/cpuinfo is not there.
func cpuName() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			name := strings.TrimSpace(value)
			switch {
			case cpu.X86.HasAVX512F:
				name += ", AVX-512"
			case cpu.X86.HasAVX2:
				name += ", AVX2"
			}
			return name
		}
	}
	return ""
}
