package monitor

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

func TestZZOM(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		body := strings.Replace(manyBody(n), "other_total 5", "other_total_total 5", 1) + "# EOF\n"
		s := time.Now()
		dec := expfmt.NewDecoder(strings.NewReader(body), expfmt.NewFormat(expfmt.TypeOpenMetrics))
		k := 0
		for {
			var f dto.MetricFamily
			err := dec.Decode(&f)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			k += len(f.Metric)
		}
		t.Logf("OM %d series (%d bytes): %v", k, len(body), time.Since(s))
	}
	for _, n := range []int{1000, 4000, 16000} {
		body := "# TYPE x gauge\nx{a=\"" + strings.Repeat("y", n) + "\"} 1\n# EOF\n"
		s := time.Now()
		dec := expfmt.NewDecoder(strings.NewReader(body), expfmt.NewFormat(expfmt.TypeOpenMetrics))
		var f dto.MetricFamily
		err := dec.Decode(&f)
		t.Logf("OM line of %d bytes: %v %v", n, time.Since(s), err)
	}
}
