package perplexity

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strconv"

	"extrapolate/experiments/measure"
)

// Columns and Row are the columns of one length's result, as a run's ppl_vs_len.csv
// and cmd/eval's ppl_by_scaling.csv write them.
var Columns = []string{"length", "ratio", "loss", "perplexity", "tokens", "applicable", "reason", "protocol"}

func Row(l measure.LengthResult, trainLen int, protocol string) []string {
	return []string{strconv.Itoa(l.Length), measure.CSVFloat(float64(l.Length) / float64(trainLen)), csvFloatOrEmpty(l.Loss), csvFloatOrEmpty(l.Perplexity),
		strconv.Itoa(l.Tokens), strconv.FormatBool(l.Applicable), l.Reason, protocol}
}

func runCSV(res *measure.Result) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := Columns
	if res.Unscaled != nil {
		head = append(head[:len(head):len(head)], "unscaled_loss", "unscaled_perplexity")
	}
	w.Write(head)
	for i, l := range res.Lengths {
		row := Row(l, res.TrainLen, res.Protocol)
		if res.Unscaled != nil {
			row = append(row, csvFloatOrEmpty(res.Unscaled[i].Loss), csvFloatOrEmpty(res.Unscaled[i].Perplexity))
		}
		w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}

// CSV is the comparison's perplexity: a row per run, seed and length, then rows with seed "mean"
// and "std" per run and length.
func CSV(rep *measure.Report) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"label", "position", "seed", "length", "ratio", "loss", "perplexity", "status", "protocol"})
	ratio := func(n int) string { return measure.CSVFloat(float64(n) / float64(rep.TrainLen)) }
	protocol := ""
	if len(rep.Runs) > 0 {
		protocol = rep.Runs[0].Config().Eval.Protocol() // the same for every run: Plan checks it
	}
	for _, r := range rep.Runs {
		pos := measure.PositionOf(r.Config())
		seed := strconv.FormatUint(r.Seed, 10)
		if !r.Result.OK() {
			w.Write([]string{r.Label, pos, seed, "", "", "", "", "failed: " + r.Result.Error, protocol})
			continue
		}
		for _, l := range r.Result.Lengths {
			status := "ok"
			switch {
			case !l.Applicable:
				status = "not applicable"
			case l.NonFinite:
				status = l.Reason
			}
			w.Write([]string{r.Label, pos, seed, strconv.Itoa(l.Length), ratio(l.Length), csvFloatOrEmpty(l.Loss), csvFloatOrEmpty(l.Perplexity), status, protocol})
		}
	}
	for _, s := range rep.Series {
		for _, st := range s.Stats {
			status := "ok"
			if st.NonFinite != nil {
				status = fmt.Sprintf("%s for seeds %v, left out", st.NonFiniteReason, st.NonFinite)
			}
			if st.Seeds == 0 {
				switch {
				case st.NonFinite != nil:
				case st.NotApplicable != "":
					status = "not applicable"
				case st.Failed != nil:
					status = fmt.Sprintf("failed for seeds %v", st.Failed)
				}
				w.Write([]string{s.Label, s.Position, "mean", strconv.Itoa(st.Length), ratio(st.Length), "", "", status, protocol})
				continue
			}
			w.Write([]string{s.Label, s.Position, "mean", strconv.Itoa(st.Length), ratio(st.Length), measure.CSVFloat(st.LossMean), measure.CSVFloat(st.PPLMean), status, protocol})
			w.Write([]string{s.Label, s.Position, "std", strconv.Itoa(st.Length), ratio(st.Length), measure.CSVFloat(st.LossStd), measure.CSVFloat(st.PPLStd), status, protocol})
		}
	}
	w.Flush()
	return b.Bytes()
}

// csvFloatOrEmpty is measure.CSVFloat, or empty for a missing number.
func csvFloatOrEmpty(x *float64) string {
	if x == nil {
		return ""
	}
	return measure.CSVFloat(*x)
}
