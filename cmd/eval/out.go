package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"extrapolate/experiments/evaluate"
	"extrapolate/experiments/training"
)

// Files of an evaluation: a corpus checkpoint's and a task checkpoint's, and the report, which
// both write.
var (
	corpusFiles = []string{evaluate.ScalingsCSV, evaluate.ScalingsPNG, evaluate.ScalingsSVG}
	taskFiles   = []string{evaluate.TaskScalingsCSV, evaluate.TaskScalingsPNG, evaluate.TaskScalingsSVG}
)

// files are the files the evaluation asked by req writes, the report last, and others those of
// the other kind of checkpoint, which it does not write.
func files(req *evaluate.Request) (writes, others []string) {
	writes, others = corpusFiles, taskFiles
	if req.Examples > 0 {
		writes, others = taskFiles, corpusFiles
	}
	return append(slices.Clone(writes), evaluate.ScalingsJSON), others
}

// request is what this evaluation is asked, resolved, as its report records it.
func (o *options) request(t *training.Trained, list []evaluate.Variant) *evaluate.Request {
	r := &evaluate.Request{Checksum: t.Checksum}
	for _, v := range list {
		r.Variants = append(r.Variants, spec(v))
	}
	if c := t.Config(); c.Task != nil {
		_, r.Examples = t.Resolved.Tasks()
	} else {
		r.Lengths, r.Tokens = c.Eval.Lengths, c.Eval.Tokens
	}
	return r
}

// spec names a variant with every field of its scaling and map, sorted, where its name in the
// results gives the scaling's factor alone: "yarn(beta_fast=16, factor=auto) + rerope(window=16)".
func spec(v evaluate.Variant) string {
	var parts []string
	if sc := v.Scaling; sc != nil {
		fields := []string{"factor=" + sc.Factor.String()}
		for k, x := range sc.Params {
			fields = append(fields, fmt.Sprintf("%s=%v", k, x))
		}
		sort.Strings(fields)
		parts = append(parts, sc.Type+"("+strings.Join(fields, ", ")+")")
	}
	if v.Map != nil {
		parts = append(parts, v.Map.String())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " + ")
}

// checkOut refuses, before any evaluation, a results folder holding a file the evaluation would
// replace, unless -overwrite is given or the folder's report records the same request: the same
// checkpoint (by its checksum, wherever it lies) under the same scalings and maps, lengths and
// tokens or examples. That one is the same command run again, whose results are the same, and
// it replaces them as train finishes or resumes a run of the same config. A file named like a
// result but that is a folder is refused even with -overwrite, which could not replace it.
// Other files in the folder are not looked at.
func checkOut(dir, ckpt string, req *evaluate.Request, overwrite bool) error {
	writes, _ := files(req)
	var found []string
	for _, f := range writes {
		st, err := os.Lstat(filepath.Join(dir, f))
		switch {
		case errors.Is(err, os.ErrNotExist):
			continue
		case err != nil:
			return fmt.Errorf("results folder %s: %w", dir, err)
		case st.IsDir():
			return fmt.Errorf("results folder %s: %s is a folder, where the results file would go; give another -out", dir, f)
		}
		found = append(found, f)
	}
	if overwrite || len(found) == 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, evaluate.ScalingsJSON))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("results folder %s holds %s but no %s, so they are not this evaluation's; use -overwrite to replace them, or -out to write elsewhere", dir, strings.Join(found, ", "), evaluate.ScalingsJSON)
	case err != nil:
		return fmt.Errorf("results folder %s: %w", dir, err)
	}
	var old evaluate.Report
	if err := json.Unmarshal(b, &old); err != nil {
		return fmt.Errorf("results folder %s holds a %s that does not read as eval's results (%v); use -overwrite to replace it, or -out to write elsewhere", dir, evaluate.ScalingsJSON, err)
	}
	if old.Request == nil {
		return fmt.Errorf("results folder %s holds results whose %s does not record what was evaluated, so they may be another evaluation's; use -overwrite to replace them, or -out to write elsewhere", dir, evaluate.ScalingsJSON)
	}
	if d := describeDiff(old.Checkpoint, ckpt, old.Request, req); d != "" {
		return fmt.Errorf("results folder %s holds the results of a different evaluation (%s); use -overwrite to replace them, or -out to write elsewhere", dir, d)
	}
	return nil
}

// describeDiff names what differs between the request of the results in a folder, whose
// checkpoint was at there, and this one's, of the checkpoint at here: "" when nothing does.
func describeDiff(there, here string, old, req *evaluate.Request) string {
	var diffs []string
	differ := func(flag, there, here string) {
		if there != here {
			diffs = append(diffs, fmt.Sprintf("%s: %s there, %s here", flag, orNone(there), orNone(here)))
		}
	}
	if old.Checksum != req.Checksum {
		diffs = append(diffs, fmt.Sprintf("-checkpoint: %s (checksum %.12s…) there, %s (%.12s…) here", there, old.Checksum, here, req.Checksum))
	}
	differ("-scaling/-map", strings.Join(old.Variants, ", "), strings.Join(req.Variants, ", "))
	differ("-lengths", ints(old.Lengths), ints(req.Lengths))
	differ("-tokens", count(old.Tokens), count(req.Tokens))
	differ("-examples", count(old.Examples), count(req.Examples))
	return strings.Join(diffs, "; ")
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

func count(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// removeOthers removes the results of the other kind of checkpoint from dir, after -overwrite
// replaced the folder's results with req's: files only, never a folder of the same name.
func removeOthers(dir string, req *evaluate.Request) error {
	_, others := files(req)
	for _, f := range others {
		path := filepath.Join(dir, f)
		if st, err := os.Lstat(path); err != nil || st.IsDir() {
			continue
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("results folder %s: removing the earlier results: %w", dir, err)
		}
	}
	return nil
}
