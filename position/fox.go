package position

import "fmt"

// FoX is the Forgetting Transformer (Lin et al., ICLR 2025): each head of each layer has a
// forget gate f_t = σ(x_t·W + b), a scalar per token computed from the layer's input after its
// LayerNorm (the input of q, k and v), and the score of query i for key j ≤ i gains
// Σ_{l=j+1..i} log f_l = c_i − c_j, with c the running sum of log f over the sequence. Attention
// then forgets what lies behind gates that close, at a rate the content sets; there is no other
// position information.
//
// The settings follow the base FoX of the reference code (github.com/zhixuan-lin/
// forgetting-transformer at 883f260c), not FoX Pro:
//   - the gate is nn.Linear(hidden_size, num_heads, bias=True), one logit per head
//     (modeling_forgetting_transformer.py:206), of the attention's normalised input
//     (attn_norm, :565, the input of q_proj, :304, and of fgate_proj, :344), and log f is
//     logsigmoid of it (:346);
//   - W is drawn N(0, 0.02²) and b starts at 0, as every Linear (_init_weights, :641-651, with
//     initializer_range 0.02, configuration_forgetting_transformer.py:25);
//   - W is decayed, b is not (utils.py:174-178 group_parameters: a Linear's weight is decayed,
//     its bias when bias_weight_decay, False by default, configs/config.py:32);
//   - no RoPE (use_rope False, configuration:37 and the llama_*.yaml experiments), no output
//     gate, output norm, QK-norm or key/value shift (use_output_gate, use_output_norm, qk_norm,
//     use_k_shift, use_v_shift False, configuration:38-48; only the pro_*.yaml experiments set
//     them), and no pruning (log_pruning_tolerance None, :49).
//
// The reference's backbone (RMSNorm, SwiGLU, linears without bias) is not taken: the gate is
// added to this project's model, as every scheme is. `lr_scale` multiplies the learning rate of
// the gate's weights.
type FoX struct {
	DModel, Heads, Layers int
	LRScale               float64
}

// foxInitStd is the reference's initializer_range, the spread of the gate's weight.
const foxInitStd = 0.02

func init() {
	register("fox", func(s Spec) (Scheme, error) {
		p := struct {
			LRScale float64 `yaml:"lr_scale"`
		}{LRScale: 1}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if err := checkPositive("position.lr_scale", p.LRScale); err != nil {
			return nil, err
		}
		return FoX{DModel: s.DModel, Heads: s.Heads, Layers: s.Layers, LRScale: p.LRScale}, nil
	})
}

// Name is fox.
func (FoX) Name() string { return "fox" }

// Sources states the gate's settings and where they come from.
func (f FoX) Sources() string {
	return fmt.Sprintf("FoX: a forget gate per head and layer, σ(x·W + b) of the layer's normalised input, W drawn N(0, %g²) and decayed, "+
		"b from 0 and not decayed, learning rate × %g; no other positions, output gate, QK-norm or key/value shift (base FoX, not FoX Pro). "+
		"Defaults: the reference code (fgate_proj = nn.Linear(hidden, heads, bias=True), initializer_range 0.02, group_parameters decaying "+
		"a Linear's weight and not its bias). References: docs/references.md#fox.", foxInitStd, f.LRScale)
}

// Weights are the gate's weight fox.wf, (layers, d_model, heads), and bias fox.bf, (layers,
// heads).
func (f FoX) Weights() []Weight {
	return []Weight{
		{Name: "fox.wf", Dims: []int{f.Layers, f.DModel, f.Heads}, Std: foxInitStd, Decay: true, LRScale: f.LRScale},
		{Name: "fox.bf", Dims: []int{f.Layers, f.Heads}, LRScale: f.LRScale},
	}
}

// ForgetGate is the two weights, in the order Weights declares them.
func (FoX) ForgetGate() ForgetGate { return ForgetGate{Weight: 0, Bias: 1} }
