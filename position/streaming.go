package position

// Streaming is StreamingLLM (Xiao et al. 2024, "Efficient Streaming Language Models with
// Attention Sinks"; reference code mit-han-lab/streaming-llm): a query attends to the first
// `sinks` keys (attention sinks) and to a rolling window of the `window` latest, its own
// included, and positions are counted inside that cache rather than in the text, so that no
// distance exceeds the cache's size. Once the cache is full (i ≥ sinks + window) the window's
// keys keep their distance i − j, the query sits at the cache's last place sinks + window − 1
// and sink k at its place k (streaming_llm/pos_shift/modify_llama.py rotates the cached keys at
// torch.arange(kv_seq_len)), AltQuery(i) = sinks + window − 1 and AltKey(k) = k here, and the
// keys between are evicted (kv_cache.py's StartRecentKVCache, start_size + recent_size, the
// incoming token counted, as evict_for_space does). The paper runs MPT, whose ALiBi bias is
// then taken inside the cache too: the map applies to bias schemes (MapsBias).
//
// sinks defaults to 4, the paper's four initial tokens (kv_cache.py's start_size = 4); it
// counts the starting tokens, a few at any training length, so it is not scaled with L. window
// defaults to L − sinks, L the training length, so that the cache holds L keys: the README
// keeps the cache within the pre-training window (4096 for Llama-2).
type Streaming struct {
	Sinks  int `yaml:"sinks"`
	Window int `yaml:"window"`
}

func init() { RegisterDistanceMap("streaming", newStreaming) }

func newStreaming(s DistanceMapSpec) (DistanceMap, error) {
	p := Streaming{Sinks: 4}
	if err := s.Config.Decode(&p); err != nil {
		return nil, err
	}
	if err := atLeast("sinks", p.Sinks, 0); err != nil {
		return nil, err
	}
	if !s.Config.Given("window") {
		p.Window = max(1, s.TrainLen-p.Sinks)
	}
	if err := atLeast("window", p.Window, 1); err != nil {
		return nil, err
	}
	return p, nil
}

// Name is streaming.
func (Streaming) Name() string { return "streaming" }

// Spans gives every key while the cache has room; once it is full, the sinks (Alt) and the
// window, the keys between masked.
func (m Streaming) Spans(i int, dst []Span) []Span {
	if i < m.Sinks+m.Window {
		return appendSpan(dst, 0, i+1, false)
	}
	dst = appendSpan(dst, 0, m.Sinks, true)
	return appendSpan(dst, i-m.Window+1, i+1, false)
}

// AltQuery is the cache's last place, where the query sits once the cache is full.
func (m Streaming) AltQuery(int) float64 { return float64(m.Sinks + m.Window - 1) }

// AltKey is a sink's own place, the first ones of the cache.
func (Streaming) AltKey(j int) float64 { return float64(j) }

// MapsBias is true: the paper runs StreamingLLM on ALiBi's MPT too.
func (Streaming) MapsBias() bool { return true }

// Masks is true: the keys between the sinks and the window are evicted.
func (Streaming) Masks() bool { return true }
