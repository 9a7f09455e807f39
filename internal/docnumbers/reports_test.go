package docnumbers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// root is the repository's top folder, from this package's.
const root = "../.."

// resultsDir is where the committed reports are; a test points it at a copy.
var resultsDir = filepath.Join(root, "results")

// The parts of a comparison's ppl_by_run.json the docs quote.
type comparison struct {
	Name     string
	TrainLen int   `json:"train_len"`
	Lengths  []int `json:"lengths"`
	Runs     []struct {
		Label  string `json:"label"`
		Seed   int    `json:"seed"`
		Result struct {
			Scheme         string  `json:"scheme"`
			CPU            string  `json:"cpu"`
			Params         int     `json:"params"`
			Steps          int     `json:"steps"`
			TrainSeconds   float64 `json:"train_seconds"`
			EvalSeconds    float64 `json:"eval_seconds"`
			FinalTrainLoss float64 `json:"final_train_loss"`
			Status         string  `json:"status"`
			Lengths        []struct {
				Length     int      `json:"length"`
				Perplexity *float64 `json:"perplexity"`
			} `json:"lengths"`
			Tasks []struct {
				Task  string  `json:"task"`
				Ratio float64 `json:"ratio"`
			} `json:"tasks"`
		} `json:"result"`
	} `json:"runs"`
	Series []struct {
		Label    string `json:"label"`
		Position string `json:"position"`
		Stats    []stat `json:"stats"`
	} `json:"series"`
	Claims []claim `json:"claims"`

	attention *attentionFile
	passkey   *passkeyFile
}

type stat struct {
	Length        int     `json:"length"`
	Seeds         int     `json:"seeds"`
	Mean          float64 `json:"perplexity_mean"`
	Std           float64 `json:"perplexity_std"`
	NotApplicable string  `json:"not_applicable"`
}

type claim struct {
	ID        string `json:"id"`
	Statement string `json:"statement"`
	Verdict   string `json:"verdict"`
	Evidence  string `json:"evidence"`
	Rule      string `json:"rule"`
	Deciding  *struct {
		What       string    `json:"what"`
		Ratio      float64   `json:"ratio"`
		Limit      float64   `json:"limit"`
		AtLeast    bool      `json:"at_least"`
		SeedRatios []float64 `json:"seed_ratios"`
	} `json:"deciding"`
}

// attentionFile is attention_by_run.json: per label and length, the statistics by octave of
// query positions, averaged over layers and heads.
type attentionFile struct {
	Series []struct {
		Label  string `json:"label"`
		Length int    `json:"length"`
		Seeds  int    `json:"seeds"`
		All    []struct {
			From    int     `json:"from"`
			Uniform float64 `json:"uniform_entropy"`
			Entropy float64 `json:"entropy_mean"`
			Far     float64 `json:"far_mass_mean"`
		} `json:"all"`
	} `json:"series"`
}

// passkeyFile is passkey_by_run.json: each label's accuracy by length, over seeds.
type passkeyFile struct {
	Series []struct {
		Label    string `json:"label"`
		ByLength []struct {
			Length int     `json:"length"`
			Seeds  int     `json:"seeds"`
			Mean   float64 `json:"accuracy_mean"`
			Std    float64 `json:"accuracy_std"`
		} `json:"by_length"`
	} `json:"series"`
}

// grid is a grid's claims_by_point.json, each point's comparison loaded from its folder.
type grid struct {
	Points []struct {
		Name        string  `json:"name"`
		Params      int     `json:"params"`
		TrainTokens int     `json:"train_tokens"`
		Claims      []claim `json:"claims"`
		cmp         *comparison
	} `json:"points"`
}

var (
	loadMu sync.Mutex
	loaded = map[string]any{}
)

// load returns results/<name>'s report: a *grid when the folder holds claims_by_point.json, else
// a *comparison. name may be a grid's point, "scale/d128".
func load(name string) (any, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	return loadLocked(name)
}

func loadLocked(name string) (any, error) {
	if r, ok := loaded[name]; ok {
		return r, nil
	}
	dir := filepath.Join(resultsDir, filepath.FromSlash(name))
	if b, err := os.ReadFile(filepath.Join(dir, "claims_by_point.json")); err == nil {
		g := &grid{}
		if err := json.Unmarshal(b, g); err != nil {
			return nil, fmt.Errorf("%s/claims_by_point.json: %v", name, err)
		}
		for i := range g.Points {
			c, err := loadLocked(name + "/" + g.Points[i].Name)
			if err != nil {
				return nil, err
			}
			cmp, ok := c.(*comparison)
			if !ok {
				return nil, fmt.Errorf("%s/%s: a grid, want a comparison", name, g.Points[i].Name)
			}
			g.Points[i].cmp = cmp
		}
		loaded[name] = g
		return g, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "ppl_by_run.json"))
	if err != nil {
		return nil, fmt.Errorf("report %s: %v", name, err)
	}
	c := &comparison{Name: name}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("%s/ppl_by_run.json: %v", name, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "attention_by_run.json")); err == nil {
		c.attention = &attentionFile{}
		if err := json.Unmarshal(b, c.attention); err != nil {
			return nil, fmt.Errorf("%s/attention_by_run.json: %v", name, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "passkey_by_run.json")); err == nil {
		c.passkey = &passkeyFile{}
		if err := json.Unmarshal(b, c.passkey); err != nil {
			return nil, fmt.Errorf("%s/passkey_by_run.json: %v", name, err)
		}
	}
	loaded[name] = c
	return c, nil
}

func loadComparison(name string) (*comparison, error) {
	r, err := load(name)
	if err != nil {
		return nil, err
	}
	c, ok := r.(*comparison)
	if !ok {
		return nil, fmt.Errorf("%s is a grid; name one of its points (%s/POINT)", name, name)
	}
	return c, nil
}

// comparisons is a report's comparisons: itself, or a grid's points.
func comparisons(name string) ([]*comparison, error) {
	r, err := load(name)
	if err != nil {
		return nil, err
	}
	if g, ok := r.(*grid); ok {
		var out []*comparison
		for _, p := range g.Points {
			out = append(out, p.cmp)
		}
		return out, nil
	}
	return []*comparison{r.(*comparison)}, nil
}

// seconds is the computation the report states: every run's evaluation, and its training
// unless the run reused an earlier one's (a RoPE scaling applied at evaluation only), which the
// results file shows as the same training time, steps and final loss.
func (c *comparison) seconds() float64 {
	type key struct {
		t, loss float64
		steps   int
	}
	seen := map[key]bool{}
	total := 0.0
	for _, r := range c.Runs {
		k := key{r.Result.TrainSeconds, r.Result.FinalTrainLoss, r.Result.Steps}
		if !seen[k] {
			seen[k] = true
			total += r.Result.TrainSeconds
		}
		total += r.Result.EvalSeconds
	}
	return total
}

func (c *comparison) params() int {
	if len(c.Runs) == 0 {
		return 0
	}
	return c.Runs[0].Result.Params
}

func (c *comparison) cpus() string {
	var cpus []string
	for _, r := range c.Runs {
		if r.Result.CPU != "" && !slices.Contains(cpus, r.Result.CPU) {
			cpus = append(cpus, r.Result.CPU)
		}
	}
	slices.Sort(cpus)
	return strings.Join(cpus, "; ")
}

func (c *comparison) seeds() []int {
	var s []int
	for _, r := range c.Runs {
		if !slices.Contains(s, r.Seed) {
			s = append(s, r.Seed)
		}
	}
	slices.Sort(s)
	return s
}

func (c *comparison) claim(id string) (*claim, error) {
	for i := range c.Claims {
		if c.Claims[i].ID == id {
			return &c.Claims[i], nil
		}
	}
	return nil, fmt.Errorf("%s: no claim %q", c.Name, id)
}

// stat is the perplexity of label at length.
func (c *comparison) stat(label string, length int) (stat, error) {
	for _, s := range c.Series {
		if s.Label != label {
			continue
		}
		for _, st := range s.Stats {
			if st.Length == length {
				return st, nil
			}
		}
		return stat{}, fmt.Errorf("%s: %s has no length %d", c.Name, label, length)
	}
	return stat{}, fmt.Errorf("%s: no series %q", c.Name, label)
}

// lastOctave is the attention of label at length in the window's last octave of queries.
func (c *comparison) lastOctave(label string, length int) (entropy, uniform, far float64, err error) {
	if c.attention == nil {
		return 0, 0, 0, fmt.Errorf("%s has no attention_by_run.json", c.Name)
	}
	for _, s := range c.attention.Series {
		if s.Label == label && s.Length == length && len(s.All) > 0 {
			b := s.All[len(s.All)-1]
			return b.Entropy, b.Uniform, b.Far, nil
		}
	}
	return 0, 0, 0, fmt.Errorf("%s: no attention of %s at %d", c.Name, label, length)
}

// tasks reports whether the comparison's runs are task runs, each at its task's own window.
func (c *comparison) tasks() bool {
	return len(c.Runs) > 0 && len(c.Runs[0].Result.Tasks) > 0
}
