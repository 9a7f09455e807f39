package position

import "fmt"

// Learned is a trainable table of MaxLen position vectors added to the token embeddings, the
// weight wpe. It has no vector for positions at or past MaxLen, so longer sequences are not
// applicable. It is trained as GPT-2's wpe is in nanoGPT's model.py: drawn N(0, 0.02²) and, a
// 2-D weight, decayed like the matrices (configure_optimizers); `lr_scale` changes its
// learning rate.
type Learned struct {
	MaxLen, DModel int
	LRScale        float64
}

// maxLearnedRows bounds position.max_len: far beyond what this trainer is for.
const maxLearnedRows = 1 << 20

func init() {
	register("learned", func(s Spec) (Scheme, error) {
		p := struct {
			MaxLen  int     `yaml:"max_len"`
			LRScale float64 `yaml:"lr_scale"`
		}{MaxLen: s.TrainLen, LRScale: 1}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if err := checkPositive("position.lr_scale", p.LRScale); err != nil {
			return nil, err
		}
		if p.MaxLen < s.TrainLen {
			return nil, fmt.Errorf("position.max_len: %d is shorter than the training length %d", p.MaxLen, s.TrainLen)
		}
		if p.MaxLen > maxLearnedRows {
			return nil, fmt.Errorf("position.max_len: %d, above the limit of %d", p.MaxLen, maxLearnedRows)
		}
		return Learned{MaxLen: p.MaxLen, DModel: s.DModel, LRScale: p.LRScale}, nil
	})
}

// Name is learned.
func (Learned) Name() string { return "learned" }

// Sources states the table's settings and where they come from.
func (l Learned) Sources() string {
	return fmt.Sprintf("learned: wpe (%d × %d) drawn N(0, 0.02²) and decayed, as GPT-2's in nanoGPT's model.py; learning rate × %g. References: docs/references.md#learned-absolute-positions.", l.MaxLen, l.DModel, l.LRScale)
}

// Weights is the table wpe, drawn and decayed like the model's matrices.
func (l Learned) Weights() []Weight {
	return []Weight{{Name: "wpe", Dims: []int{l.MaxLen, l.DModel}, Std: 0.02, Decay: true, LRScale: l.LRScale}}
}

// LearnedEmbedding is the first n rows of wpe.
func (l Learned) LearnedEmbedding(w [][]float64, n int) (*Table, error) {
	if n > l.MaxLen {
		return nil, fmt.Errorf("learned positions: %d positions, but the table has %d rows: %w", n, l.MaxLen, ErrNotApplicable)
	}
	return &Table{Rows: n, Cols: l.DModel, Values: w[0][:n*l.DModel]}, nil
}

// LearnedEmbeddingGrad adds the table's gradient to the first n rows of wpe's.
func (l Learned) LearnedEmbeddingGrad(_ [][]float64, n int, dTable []float64, dw [][]float64) {
	for i, g := range dTable[:n*l.DModel] {
		dw[0][i] += g
	}
}
