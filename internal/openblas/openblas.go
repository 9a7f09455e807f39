//go:build openblas

// Package openblas links the program against Debian's libopenblas-dev, whose CBLAS the netlib
// wrappers call, and sets how many threads OpenBLAS may use. It is its own package because a
// package with cgo cannot also hold Go assembly, as package nn does.
package openblas

// #cgo LDFLAGS: -lopenblas
// void openblas_set_num_threads(int num_threads);
import "C"

// SetThreads sets the number of threads OpenBLAS runs each call on.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }
