package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// resumeCommand is the command that resumes this run, ready to paste into a shell: this
// command's own arguments, quoted, without -overwrite (which would start afresh), run the way
// this command was run — the binary's path, or go run for a binary go run built.
func resumeCommand() string {
	args := []string{shellQuote(os.Args[0])}
	if builtByGoRun(os.Args[0]) {
		args = []string{"go", "run", "./cmd/train"}
	}
	for _, a := range os.Args[1:] {
		switch strings.TrimLeft(a, "-") {
		case "overwrite", "overwrite=true", "overwrite=1":
			continue
		}
		args = append(args, shellQuote(a))
	}
	return strings.Join(args, " ")
}

// builtByGoRun reports whether the binary is one go run built: go run builds into a temporary
// go-build folder that is gone once it exits, so naming it would not help.
func builtByGoRun(path string) bool {
	for _, part := range strings.Split(filepath.ToSlash(path), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	return false
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for a POSIX shell: as it is when no character in it is special, else in
// single quotes, where a single quote inside closes the quotes, is escaped and reopens them.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
