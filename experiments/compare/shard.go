package compare

import "fmt"

// Shard selects every n-th run starting at i (0 ≤ i < n), so that a comparison can be split
// between processes or machines.
type Shard struct{ I, N int }

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.I, &sh.N); err != nil || sh.N <= 0 || sh.I < 0 || sh.I >= sh.N || fmt.Sprintf("%d/%d", sh.I, sh.N) != s {
		return Shard{}, fmt.Errorf("-shard: %q, want i/n with 0 ≤ i < n, e.g. 0/4", s)
	}
	return sh, nil
}

// CheckShard refuses a shard that would run nothing: one of more shards than the comparison
// has runs.
func (p *Plan) CheckShard(s Shard) error {
	if n := len(p.runs); s.N > n {
		return fmt.Errorf("-shard: %d/%d, but the comparison has %d runs, so some shards would run nothing; want n at most %d", s.I, s.N, n, n)
	}
	return nil
}

// Selects reports whether the shard runs the k-th planned run.
func (s Shard) Selects(k int) bool { return s.N <= 1 || k%s.N == s.I }
