package docnumbers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Retrieval's effective length, worked out here from each run's passkey.json as
// passkey.Effective does: the longest scored length from the training length on up to which
// the accuracy (mean over depths) stays at least retrievalShare of its own at the training
// length and at least retrievalFloor.
const (
	retrievalShare = 0.9
	retrievalFloor = 0.5
)

// passkeyEffectiveTable is each series' effective length by retrieval in one passkey report,
// the range over seeds as multiples of the training length, "–" for a run below the floor at
// its training length: `passkey-effective passkey`.
func passkeyEffectiveTable(_ string, args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("passkey-effective: want one report, have %q", args)
	}
	c, err := loadComparison(args[0])
	if err != nil {
		return "", err
	}
	var labels []string
	byLabel := map[string][]int{}
	for _, r := range c.Runs {
		if !slices.Contains(labels, r.Label) {
			labels = append(labels, r.Label)
		}
		e, err := retrievalEffective(filepath.Join(root, "results", filepath.FromSlash(args[0]), "runs", fmt.Sprintf("%s-s%d", r.Label, r.Seed), "passkey.json"), c.TrainLen)
		if err != nil {
			return "", err
		}
		byLabel[r.Label] = append(byLabel[r.Label], e)
	}
	ratio := func(n int) string { return strconv.FormatFloat(float64(n)/float64(c.TrainLen), 'g', 3, 64) + "x" }
	var b strings.Builder
	b.WriteString("| run | effective length by retrieval |\n|---|---|\n")
	for _, label := range labels {
		es := byLabel[label]
		lo, hi := slices.Min(es), slices.Max(es)
		cell := ratio(lo)
		switch {
		case hi == 0:
			cell = "–"
		case lo == 0:
			cell = "– to " + ratio(hi)
		case lo != hi:
			cell += " to " + ratio(hi)
		}
		fmt.Fprintf(&b, "| %s | %s |\n", label, cell)
	}
	fmt.Fprintf(&b, "\nThe longest length up to which a run retrieves at least %g of its own accuracy at the training length and at least %g%% of the keys, as a multiple of the training length: the range over seeds; – below that at the training length.\n", retrievalShare, 100*retrievalFloor)
	return b.String(), nil
}

// retrievalEffective is one run's effective length by retrieval from its passkey.json.
func retrievalEffective(path string, trainLen int) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var f struct {
		Cells []struct {
			Length     int     `json:"length"`
			Applicable bool    `json:"applicable"`
			Accuracy   float64 `json:"accuracy"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	sum, count := map[int]float64{}, map[int]int{}
	var lengths []int
	for _, cell := range f.Cells {
		if !cell.Applicable {
			continue
		}
		if count[cell.Length] == 0 {
			lengths = append(lengths, cell.Length)
		}
		sum[cell.Length] += cell.Accuracy
		count[cell.Length]++
	}
	slices.Sort(lengths)
	if count[trainLen] == 0 {
		return 0, fmt.Errorf("%s: no accuracy at the training length %d", path, trainLen)
	}
	one := sum[trainLen] / float64(count[trainLen])
	if one < retrievalFloor {
		return 0, nil
	}
	eff := trainLen
	for _, n := range lengths {
		if n <= trainLen {
			continue
		}
		if a := sum[n] / float64(count[n]); a < retrievalShare*one || a < retrievalFloor {
			break
		}
		eff = n
	}
	return eff, nil
}
