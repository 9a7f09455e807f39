package compare

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"extrapolate/experiments/claims"
	"extrapolate/position"
)

// orderPPL has perplexities by which the claims' verdicts flip if a RoPE variant is taken for
// plain RoPE: rope_logn at 8x is 10, so YaRN's 9.05 would be 0.905 of it (above rescueFactor,
// 0.85) where it is 9.05/19.75 = 0.458 of plain RoPE's; rope_partial at 16x is 9, so T5's
// 8.1 would be 0.9 of it (above learnedBiasFactor, 0.85), where it is 8.1/24.95 = 0.325 of
// plain RoPE's.
var orderPPL = map[string][][]float64{
	"sinusoidal":   {{11, 25, 50, 57, 51}, {12, 26, 48, 60, 55}},
	"rope":         {{6.7, 7.2, 13.3, 19.5, 24.9}, {6.8, 7.3, 14, 20, 25}},
	"rope_yarn":    {{6.7, 6.8, 7.4, 9.0, 12.8}, {6.8, 6.9, 7.5, 9.1, 13}},
	"t5":           {{7, 7.1, 7.3, 7.6, 8}, {7.1, 7.2, 7.4, 7.7, 8.2}},
	"nope":         {{11.5, 12, 12.8, 13.5, 14.2}, {11.6, 12.1, 12.8, 13.5, 14.3}},
	"nope_logn":    {{11.5, 11.8, 12.1, 12.5, 12.9}, {11.6, 11.9, 12.2, 12.6, 13}},
	"rope_logn":    {{6.7, 7, 8, 10, 12}, {6.8, 7.1, 8, 10, 12}},
	"rope_partial": {{6.7, 7, 8, 8.5, 9}, {6.8, 7.1, 8, 8.5, 9}},
}

// TestClaimsIndependentOfOrder: listing rope_logn and rope_partial before rope leaves every
// claim as it was, numbers and words, and the figures' reference plain RoPE.
func TestClaimsIndependentOfOrder(t *testing.T) {
	ropeFirst := syntheticIn([]string{"sinusoidal", "rope", "rope_yarn", "t5", "nope", "nope_logn", "rope_logn", "rope_partial"}, orderPPL, synthConfigs)
	ropeLast := syntheticIn([]string{"rope_logn", "rope_partial", "sinusoidal", "rope_yarn", "t5", "nope", "nope_logn", "rope"}, orderPPL, synthConfigs)
	for _, rep := range []*Report{ropeFirst, ropeLast} {
		if r := rep.Reference(); r < 0 || rep.Series[r].Label != "rope" {
			t.Errorf("the figures' reference is series %d, want rope", r)
		}
		v := verdicts(rep)
		for _, id := range []string{"scaling_rescues_rope", "t5_extrapolates", "logn_helps"} {
			if v[id] != claims.Reproduced {
				t.Errorf("%s: %s, want reproduced", id, v[id])
			}
		}
	}
	for _, c := range ropeFirst.Claims {
		if c.Deciding == nil {
			continue
		}
		// Of each claim's ratios, the nearest to failing: YaRN's and T5's at 4x.
		want := map[string]float64{"scaling_rescues_rope": 7.45 / 13.65, "t5_extrapolates": 7.35 / 13.65}[c.ID]
		if want != 0 && math.Abs(c.Deciding.Ratio-want) > 1e-12 {
			t.Errorf("%s: deciding %s = %g, want %g", c.ID, c.Deciding.What, c.Deciding.Ratio, want)
		}
	}
	if len(ropeFirst.Claims) != len(ropeLast.Claims) {
		t.Fatalf("%d claims judged with rope first, %d with rope last", len(ropeFirst.Claims), len(ropeLast.Claims))
	}
	for i, a := range ropeFirst.Claims {
		b := ropeLast.Claims[i]
		if a.ID == "rope_relative" {
			// It judges every RoPE series, and lists them in the comparison's order.
			a.Evidence, b.Evidence = "", ""
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s:\nrope first: %s, %s\nrope last:  %s, %s", a.ID, a.Verdict, a.Evidence, b.Verdict, b.Evidence)
		}
	}
}

// TestClaimsSeveralReferences: two series that are both plain RoPE leave the claims that
// compare with it not applicable, naming both, and the figures without a reference.
func TestClaimsSeveralReferences(t *testing.T) {
	configs := map[string]position.Config{"rope_b": synthConfigs["rope"]}
	for k, v := range synthConfigs {
		configs[k] = v
	}
	ppl := map[string][][]float64{"rope_b": orderPPL["rope"]}
	for k, v := range orderPPL {
		ppl[k] = v
	}
	ppl["rope_nope_mix"] = [][]float64{{7, 7.2, 8, 9, 10}}
	rep := syntheticIn([]string{"rope", "rope_b", "sinusoidal", "rope_yarn", "t5", "nope", "nope_logn", "rope_logn", "rope_nope_mix"}, ppl, configs)
	if r := rep.Reference(); r != -1 {
		t.Errorf("the figures' reference is %s, want none", rep.Series[r].Label)
	}
	for _, c := range rep.Claims {
		switch c.ID {
		case "scaling_rescues_rope", "t5_extrapolates", "mix_extrapolates":
			if c.Verdict != claims.NotApplicable || !strings.Contains(c.Evidence, "rope, rope_b are each plain RoPE") {
				t.Errorf("%s: %s: %s", c.ID, c.Verdict, c.Evidence)
			}
		case "logn_helps": // judged on NoPE alone, saying why not on RoPE
			if c.Verdict != claims.Reproduced || !strings.Contains(c.Evidence, "rope, rope_b are each plain RoPE") {
				t.Errorf("%s: %s: %s", c.ID, c.Verdict, c.Evidence)
			}
		}
	}
}
