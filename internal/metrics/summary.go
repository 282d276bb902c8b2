package metrics

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency summarises a histogram in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Quantile returns the value at quantile q (in [0, 1]) of h in milliseconds,
// or 0 for an empty histogram.
func Quantile(h *hdrhistogram.Histogram, q float64) float64 {
	if h.TotalCount() == 0 {
		return 0
	}
	return usToMS(h.ValueAtQuantile(q * 100))
}

// Summarize reads the usual percentiles of h. An empty histogram gives zeros.
func Summarize(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		P50:  Quantile(h, 0.50),
		P90:  Quantile(h, 0.90),
		P95:  Quantile(h, 0.95),
		P99:  Quantile(h, 0.99),
		P999: Quantile(h, 0.999),
		Max:  usToMS(h.Max()),
		Mean: h.Mean() / 1000,
	}
}

func usToMS(us int64) float64 { return float64(us) / 1000 }

// Encode returns h in the HdrHistogram V2 compressed format, base64 encoded,
// as other HdrHistogram implementations read it.
func Encode(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// Decode reads a histogram written by Encode.
func Decode(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}
