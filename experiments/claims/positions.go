package claims

import "fmt"

// Claims about position ids drawn in training (train.positions). PoSE's threshold is "comes
// close", put in the terms of the claims before it: within mapFlatTolerance (alibi_flat's 5%),
// fixed before the committed runs (configs/maps.yaml). The pilot, seed 7 of the same settings:
// perplexity at 4x (256 tokens) 11.23 for plain RoPE, 7.06 trained with PoSE ids spanning 256,
// 7.17 fine-tuned at 256 for 200 steps (PoSE 0.985 of it).

var (
	// ropePoSE is RoPE trained at PoSE's chunked ids, nothing else varied.
	ropePoSE = selector{Name: "RoPE trained with PoSE", Scheme: "rope", Scaling: unset, Temperature: unset, Finetune: unset, DroPE: unset, Map: unset, Window: unset, Positions: is("pose"), Params: []string{"base"}}
	// ropeFinetuned is RoPE fine-tuned at a longer length (train.finetune) with no scaling:
	// what PoSE sets out to match without training at that length.
	ropeFinetuned = selector{Name: "RoPE fine-tuned at a longer length", Scheme: "rope", Scaling: unset, Temperature: unset, Finetune: set, DroPE: unset, Map: unset, Window: unset, Positions: unset, Params: []string{"base"}}
)

var poseMatchesFinetune = claim{
	id:        "pose_matches_finetune",
	statement: "PoSE, training at L with chunked position ids spanning 4L, comes close at 4L to a model fine-tuned at 4L (Zhu et al. 2024)",
	rule:      fmt.Sprintf("RoPE trained with pose ids: mean perplexity at 4x ≤ (1 + %g) × that of RoPE fine-tuned (train.finetune, no scaling) at 4x.", mapFlatTolerance),
	check:     checkPoSE,
	relevant:  with(onCorpus, ropePoSE),
}

func checkPoSE(rep *judging) (Verdict, string) {
	return rep.againstOne(ropePoSE, ropeFinetuned, []int{4}, 1+mapFlatTolerance)
}
