package position

import "fmt"

// CoPE is contextual position encoding (Golovneva et al. 2024): positions counted from the
// content. Query i gives each key j ≤ i a gate g_ij = σ(q_i·k_j/√d), the key's position is the
// sum of the gates from it to the query, p_ij = Σ_{k=j..i} g_ik, clamped to npos−1, and the
// score gains z_i(p_ij)/√d, where z_i(m) = q_i·e_m and a fractional p interpolates linearly
// between ⌊p⌋ and ⌈p⌉. A head whose gates open on every key counts tokens; one whose gates open
// on newlines counts lines.
//
// The settings follow the reference code (github.com/facebookresearch/RAM at e6f051f,
// projects/cope/src/cope/context_position.py, last changed at eff93c7):
//   - the gates are σ of q·k divided by √head_dim, with the same key as the scores
//     (cope_sep_key and cope_val_gates False, :18-28, :99-102), multiplied by the causal mask
//     (:103-104, the mask tril ones, models/transformer.py:290-291): keys after the query count
//     nothing, and only keys j..i count for key j;
//   - the position logits use the query unscaled, q·e, added to q·k before both are divided
//     by √head_dim (cope_nodiv False, :34-39, :134-139): in the scaled scores the term is
//     interpolated (q/√d)·e;
//   - the embeddings are one (head_dim, npos) matrix per layer, pos_emb, shared by the layer's
//     heads (the module sees a row per sequence and head, models/transformer.py:85-91) and not
//     across layers (cope_shared False, :46-50), starting at zero (:76-78);
//   - npos defaults to block_size + 1, the training length plus one, "because position 0 is
//     possible" (:69-73): a training row of T keys counts at most T, so every position training
//     reaches has its own embedding and only evaluation past T clamps;
//   - the reference trains with Adam without weight decay (trainer.py:34, :77-81, optimizer
//     "adam" by default, and run.sh sets none), so the embeddings are not decayed.
//
// The reference applies CoPE in every layer (cope_layers 1, :40-45) and adds nothing else; a
// mix can give it some layers only.
type CoPE struct {
	HeadDim, Layers, NPos int
	LRScale               float64
}

func init() {
	register("cope", func(s Spec) (Scheme, error) {
		p := struct {
			NPos    int     `yaml:"npos"`
			LRScale float64 `yaml:"lr_scale"`
		}{NPos: s.TrainLen + 1, LRScale: 1}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if p.NPos < 1 || p.NPos > 1<<20 {
			return nil, fmt.Errorf("position.npos: %d, want 1 to %d", p.NPos, 1<<20)
		}
		if err := checkPositive("position.lr_scale", p.LRScale); err != nil {
			return nil, err
		}
		if s.Heads <= 0 || s.DModel%s.Heads != 0 {
			return nil, fmt.Errorf("position: cope needs d_model %d to be a multiple of heads %d", s.DModel, s.Heads)
		}
		return CoPE{HeadDim: s.DModel / s.Heads, Layers: s.Layers, NPos: p.NPos, LRScale: p.LRScale}, nil
	})
}

// Name is cope.
func (CoPE) Name() string { return "cope" }

// Sources states the settings and where they come from.
func (c CoPE) Sources() string {
	return fmt.Sprintf("CoPE: gates σ(q·k/√d) over the keys from each key to the query, their sum the key's position, clamped to %d, "+
		"the score gaining (q/√d)·e at it, interpolated between ⌊p⌋ and ⌈p⌉; e one (head_dim, npos) matrix per layer shared by its heads, "+
		"from 0 and not decayed, learning rate × %g. Defaults: the reference code (facebookresearch/RAM at e6f051f, "+
		"projects/cope/src/cope/context_position.py: npos block_size+1, pos_emb zeros, gates of the scaled scores times the causal mask, "+
		"cope_nodiv False; trainer.py: Adam without decay). References: docs/references.md#cope.", c.NPos-1, c.LRScale)
}

// Weights are the position embeddings cope.emb, (layers, head_dim, npos), the reference's
// pos_emb of each layer.
func (c CoPE) Weights() []Weight {
	return []Weight{{Name: "cope.emb", Dims: []int{c.Layers, c.HeadDim, c.NPos}, LRScale: c.LRScale}}
}

// ContextPositions is the one weight.
func (CoPE) ContextPositions() ContextPositions { return ContextPositions{Embedding: 0} }
