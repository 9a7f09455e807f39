package position

import "fmt"

// SB is stick-breaking attention (Tan, Shen, Yang, Courville and Panda, "Scaling Stick-Breaking
// Attention: An Efficient Implementation and In-Depth Study", ICLR 2025): the softmax is
// replaced by β_ij = σ(z_ij), z_ij = q_i·k_j/√d, and A_ij = β_ij·Π_{j<k<i}(1−β_ik), computed in
// log space as log σ(z_ij) + Σ_{j<k<i} log(1−σ(z_ik)). There are no position encodings: each
// key's weight is what the keys between it and the query leave of the stick.
//
// The settings follow the reference code (github.com/shawntan/stickbreaking-attention at
// 3147a384), and the model that uses it (github.com/IBM/dolomite-engine,
// dolomite_engine/hf_models/modeling_utils/sequence_mixer_blocks/stickbreaking_attention.py at
// 2b7068c6):
//   - the scale is 1/√d and the logits get no bias (sb_attn/__init__.py:58-59, inv_temp; the
//     naive reference sb_ref.py:12 divides q·kᵀ by √d and adds nothing);
//   - the current token is not attended: attend_current is False by default
//     (sb_attn/__init__.py:57) and the model calls sb_attn without it (SBAttention.forward);
//     decoding_stickbreaking scores k[..., :-1], the keys before the query. So query 0 attends
//     to nothing. attend_current: true is the kernel's other setting (tests/test_attn.py runs
//     both): key i in the stick too, the product over j < k ≤ i;
//   - the remainder 1 − Σ_j A_ij is returned by sb_attn as rem (sb_ref.py:25). The reference
//     tests add rem·v_i (tests/test_attn.py:17, ref_fwd) only to compare the kernel with
//     sb_ref; the model adds rem·head_bias, a learned vector per head starting at 0, then a
//     GroupNorm over each head's output (SBAttention.__init__ and forward). Neither is taken
//     here: the remainder is left unattended, the output Σ_j A_ij·v_j, and the model is this
//     project's, as every scheme's is (FoX too leaves the reference's backbone).
type SB struct {
	AttendCurrent bool
}

func init() {
	register("stickbreaking", func(s Spec) (Scheme, error) {
		var p struct {
			AttendCurrent bool `yaml:"attend_current"`
		}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		return SB{AttendCurrent: p.AttendCurrent}, nil
	})
}

// Name is stickbreaking.
func (SB) Name() string { return "stickbreaking" }

// StickBreaking says that attention is normalised by stick-breaking.
func (b SB) StickBreaking() StickBreaking { return StickBreaking(b) }

// Sources states the settings and where they come from.
func (b SB) Sources() string {
	return fmt.Sprintf("stick-breaking attention: A_ij = σ(z_ij)·Π(1−σ(z_ik)) over the keys between, z = q·k/√d with no bias, "+
		"attend_current %v, the remainder 1 − Σ A left unattended (no head bias or GroupNorm). "+
		"Defaults: the reference code (shawntan/stickbreaking-attention at 3147a384, sb_attn's attend_current=False and inv_temp 1/√d; "+
		"IBM/dolomite-engine's SBAttention). References: docs/references.md#stick-breaking-attention.", b.AttendCurrent)
}
