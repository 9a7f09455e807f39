package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"

	"extrapolate/internal/exit"
)

// parseCopies reads -concurrent: a comma-separated list of how many copies to run at once.
func parseCopies(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > 16 {
			return nil, fmt.Errorf("-concurrent: %q, want counts of copies from 1 to 16, e.g. 1,2,3", s)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// side is one program a contention table measures: its name and the command of one copy, which
// ctx stops.
type side struct {
	name string
	cmd  func(ctx context.Context) *exec.Cmd
}

// contentionRow is what k copies at once did: the sum of their tokens/s, median over rounds, and
// each round's sums.
type contentionRow struct {
	Copies    int       `json:"copies"`
	Aggregate float64   `json:"aggregate_tokens_per_s"`
	Rounds    []float64 `json:"rounds"`
}

// contention runs, for each k and each side, k copies of the side at once, rounds times,
// alternating the sides, and prints a table of aggregate tokens/s and its ratio to one copy's,
// then one JSON object. Several trainings on one machine (two users, Slurm packing array
// tasks, CI on a busy machine) are what it measures: a copy that spins while it waits for a
// core takes that core from the others.
func contention(ctx context.Context, ex *exit.Command, cfg string, ks []int, rounds int, sides []side) int {
	rows := map[string][]contentionRow{}
	for _, k := range ks {
		for _, s := range sides {
			rows[s.name] = append(rows[s.name], contentionRow{Copies: k})
		}
	}
	for r := 0; r < rounds; r++ {
		for i, k := range ks {
			for _, s := range sides {
				agg, err := runCopies(ctx, k, s)
				if err != nil {
					return ex.Fail(interrupted(ctx, fmt.Errorf("%s, %d at once: %w", s.name, k, err)))
				}
				row := &rows[s.name][i]
				row.Rounds = append(row.Rounds, agg)
				fmt.Fprintf(os.Stderr, "round %d %s, %d at once: %.0f tokens/s in all\n", r+1, s.name, k, agg)
			}
		}
	}
	summary := map[string]any{"config": cfg, "rounds": rounds, "GOMAXPROCS": os.Getenv("GOMAXPROCS")}
	fmt.Fprintf(os.Stderr, "\n%-8s %8s %22s %14s\n", "side", "copies", "aggregate tokens/s", fmt.Sprintf("of %d at once", ks[0]))
	for _, s := range sides {
		for i := range rows[s.name] {
			row := &rows[s.name][i]
			x := slices.Clone(row.Rounds)
			slices.Sort(x)
			row.Aggregate = x[len(x)/2]
		}
		first := rows[s.name][0].Aggregate
		for _, row := range rows[s.name] {
			fmt.Fprintf(os.Stderr, "%-8s %8d %22.0f %14.2f\n", s.name, row.Copies, row.Aggregate, row.Aggregate/first)
		}
		summary[s.name] = rows[s.name]
	}
	return printJSON(ex, summary)
}

// runCopies starts k copies of a side at once and returns the sum of their tokens/s; ctx stops
// them.
func runCopies(ctx context.Context, k int, s side) (float64, error) {
	outs := make([]bytes.Buffer, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	var started []*exec.Cmd
	for c := 0; c < k; c++ {
		cmd := s.cmd(ctx)
		cmd.Stdout, cmd.Stderr = &outs[c], os.Stderr
		if err := cmd.Start(); err != nil {
			// The copies already started would go on competing with the machine's work.
			for _, o := range started {
				o.Process.Kill()
			}
			wg.Wait()
			return 0, err
		}
		started = append(started, cmd)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[c] = cmd.Wait()
		}()
	}
	wg.Wait()
	var sum float64
	for c := range outs {
		if errs[c] != nil {
			return 0, errs[c]
		}
		var m map[string]any
		if err := json.Unmarshal(outs[c].Bytes(), &m); err != nil {
			return 0, fmt.Errorf("printed %q: %v", outs[c].String(), err)
		}
		v, ok := m["tokens_per_s"].(float64)
		if !ok {
			return 0, fmt.Errorf("printed no tokens_per_s: %q", outs[c].String())
		}
		sum += v
	}
	return sum, nil
}
