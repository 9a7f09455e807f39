// Package sysmem tells how much memory this process may use, the way Go programs usually find
// out on Linux: MemAvailable from /proc/meminfo (MemTotal on kernels without it), capped by the
// cgroup's memory.max when one is set. Elsewhere it returns Default.
package sysmem

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Default is the memory assumed where none of the sources above can be read: a laptop's.
const Default = 8 << 30

// Available returns the bytes of memory this process can expect to use and where the number
// came from, for messages.
func Available() (bytes uint64, source string) {
	bytes, source = meminfo()
	if bytes == 0 {
		bytes, source = Default, "the default for machines without /proc/meminfo"
	}
	if limit, path := cgroupLimit(); limit > 0 && limit < bytes {
		bytes, source = limit, path
	}
	return bytes, source
}

// meminfo reads MemAvailable, or MemTotal when the kernel does not report it, in bytes.
func meminfo() (uint64, string) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, ""
	}
	fields := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// "MemAvailable:   24343352 kB"
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 2 && f[1] == "kB" {
			if n, err := strconv.ParseUint(f[0], 10, 64); err == nil {
				fields[name] = n << 10
			}
		}
	}
	for _, name := range []string{"MemAvailable", "MemTotal"} {
		if n := fields[name]; n > 0 {
			return n, name + " in /proc/meminfo"
		}
	}
	return 0, ""
}

// cgroupLimit reads the memory limit of this process's cgroup (v2: memory.max; v1:
// memory.limit_in_bytes), or 0 when there is none.
func cgroupLimit() (uint64, string) {
	var candidates []string
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			// v2: "0::/path"; v1: "N:memory:/path".
			parts := strings.SplitN(line, ":", 3)
			if len(parts) != 3 {
				continue
			}
			switch {
			case parts[0] == "0" && parts[1] == "":
				candidates = append(candidates, filepath.Join("/sys/fs/cgroup", parts[2], "memory.max"))
			case strings.Contains(","+parts[1]+",", ",memory,"):
				candidates = append(candidates, filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"))
			}
		}
	}
	// Inside a container the cgroup's own folder is often mounted as the root.
	candidates = append(candidates, "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
	for _, path := range candidates {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			continue
		}
		// cgroup v1 reports "no limit" as a huge number, which the caller's min ignores.
		if n, err := strconv.ParseUint(s, 10, 64); err == nil && n > 0 {
			return n, path
		}
	}
	return 0, ""
}
